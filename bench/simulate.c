/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * simulate - the leaders' algorithms between nodes at scale, without MPI: for
 * each family, node count and size, the time of every algorithm the table
 * offers, priced from the very plans the component builds (simulate_model.h),
 * and which one auto picks; a '!' marks auto where another is cheaper.
 *
 *   simulate [-P ib|eth | --params FILE] [-L us] [-o us] [-G ns/B] [-r ns/B] [-a us]
 *            [-c us] [-M] [-f family,...] [-n N,...] [-m MIN:MAX] [-x FACTOR] [-s]
 *
 *   -P   the defaults: ib (100 Gb/s InfiniBand, verbs) or eth (25 GbE, TCP)
 *   --params FILE   the defaults measured on a machine by bench/fit_model
 *        (simulate_params.h); in place of -P's
 *   -L -o -G -r -a -c   latency, overhead, gap per byte, reduction per byte,
 *        the multicast root's cost per acknowledgement, each rank's fixed cost
 *        per collective (override -P's; -P's call is 0)
 *   -M   no multicast (leaders without RDMA ports); -P eth implies it
 *   -f   allreduce, bcast, allgather, reduce, barrier (default: all)
 *   -n   node counts (default 2,8,64,512,4096); -m sizes in bytes (default
 *        8:16777216), multiplied by -x (default 8)
 *   -s   one table per family, a column per node count: the cheapest algorithm
 *        and its time, and auto's pick where it loses
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simulate_model.h"
#include "simulate_params.h"

#define MAX_ALGS 3
#define MAX_NODE_COUNTS 32

struct family_row {
    const char *name;
    enum coll_async_family family;
    enum coll_async_alg algs[MAX_ALGS];
    int nalgs;
};

static const struct family_row families[] = {
    {"allreduce", COLL_ASYNC_FAMILY_ALLREDUCE,
     {COLL_ASYNC_ALG_RING, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, COLL_ASYNC_ALG_RABENSEIFNER}, 3},
    {"bcast", COLL_ASYNC_FAMILY_BCAST,
     {COLL_ASYNC_ALG_BINOMIAL, COLL_ASYNC_ALG_SCATTER_ALLGATHER, COLL_ASYNC_ALG_MULTICAST}, 3},
    {"allgather", COLL_ASYNC_FAMILY_ALLGATHER,
     {COLL_ASYNC_ALG_RING, COLL_ASYNC_ALG_RECURSIVE_DOUBLING}, 2},
    {"reduce", COLL_ASYNC_FAMILY_REDUCE, {COLL_ASYNC_ALG_BINOMIAL}, 1},
    {"barrier", COLL_ASYNC_FAMILY_BARRIER, {COLL_ASYNC_ALG_DISSEMINATION}, 1},
};
#define NUM_FAMILIES ((int) (sizeof(families) / sizeof(families[0])))

/* 100 Gb/s InfiniBand (EDR) and 25 GbE over TCP: docs/performance.md says where from. */
static const struct sim_params infiniband = {.latency = 0.6e-6, .overhead = 0.2e-6,
                                             .gap = 0.08e-9, .reduce = 0.1e-9,
                                             .ack = 0.2e-6, .verbs = true};
static const struct sim_params ethernet = {.latency = 5e-6, .overhead = 3e-6, .gap = 0.34e-9,
                                           .reduce = 0.1e-9, .ack = 3e-6, .verbs = false};

static int failures;
static char source_text[320]; /* the header's "defaults from" */

/* Seconds of one algorithm; < 0: not run as asked (a forced one gave way). */
static double time_of(const struct family_row *row, enum coll_async_alg alg, int nodes,
                      size_t bytes, const struct sim_params *p, const char **note)
{
    struct sim_case c = {.family = row->family, .alg = alg, .nodes = nodes, .bytes = bytes};
    struct sim_result result;

    if (COLL_ASYNC_ALG_MULTICAST == alg) {
        return p->verbs ? sim_multicast(nodes, bytes, p) : -1.0;
    }
    if (0 != sim_plans(&c, p, &result, NULL)) {
        fprintf(stderr, "simulate: %s %s, %d nodes, %zu B: %s\n", row->name,
                coll_async_alg_names[alg], nodes, bytes, result.error);
        ++failures;
        return -1.0;
    }
    if (result.steps > COLL_ASYNC_INTERNODE_TAG_STEPS) {
        *note = "#";
    }
    return result.ran == alg ? result.time : -1.0;
}

/* One family, node count and size: every algorithm's time, and auto's pick. */
struct cell {
    double time[MAX_ALGS]; /* seconds; < 0: not run as asked */
    const char *note[MAX_ALGS];
    int best;              /* index of the cheapest */
    enum coll_async_alg pick;
    double picked;         /* auto's time */
};

static struct cell price_cell(const struct family_row *row, int nodes, size_t bytes,
                              const struct sim_params *p)
{
    struct sim_case c = {.family = row->family, .alg = COLL_ASYNC_ALG_AUTO, .nodes = nodes,
                         .bytes = bytes};
    struct cell cell = {.best = -1, .pick = sim_auto(&c, p), .picked = -1.0};

    for (int a = 0; a < row->nalgs; ++a) {
        cell.note[a] = "";
        cell.time[a] = time_of(row, row->algs[a], nodes, bytes, p, &cell.note[a]);
        /* On a tie, auto's pick is the cheapest. */
        if (cell.time[a] >= 0
            && (cell.best < 0 || cell.time[a] < cell.time[cell.best] * (1 - 1e-9)
                || (cell.time[a] <= cell.time[cell.best] * (1 + 1e-9)
                    && row->algs[a] == cell.pick))) {
            cell.best = a;
        }
        if (row->algs[a] == cell.pick) {
            cell.picked = cell.time[a];
        }
    }
    return cell;
}

/* Whether auto's pick costs more than the cheapest (2 % to spare rounding). */
static bool auto_loses(const struct cell *cell)
{
    return cell->best >= 0 && cell->picked > cell->time[cell->best] * 1.02;
}

/* Sizes of a family's rows: the barrier has one (its tokens). */
static size_t next_size(const struct family_row *row, size_t bytes, size_t max, size_t factor)
{
    return COLL_ASYNC_FAMILY_BARRIER == row->family ? max + 1 : bytes * factor;
}

static void table(const struct family_row *row, int nodes, size_t min, size_t max,
                  size_t factor, const struct sim_params *p)
{
    printf("\n%s, %d nodes (us; %s)\n%-9s", row->name, nodes,
           COLL_ASYNC_FAMILY_ALLGATHER == row->family ? "bytes: one node's block" : "bytes",
           "bytes");
    for (int a = 0; a < row->nalgs; ++a) {
        printf(" %18s", coll_async_alg_names[row->algs[a]]);
    }
    printf("  auto\n");
    for (size_t bytes = min; bytes <= max; bytes = next_size(row, bytes, max, factor)) {
        struct cell cell = price_cell(row, nodes, bytes, p);

        printf("%-9zu", bytes);
        for (int a = 0; a < row->nalgs; ++a) {
            if (cell.time[a] < 0) {
                printf(" %18s", "-");
            } else {
                printf(" %17.1f%1s", cell.time[a] * 1e6, cell.note[a]);
            }
        }
        if (auto_loses(&cell)) {
            printf("  %s ! x%.2f\n", coll_async_alg_names[cell.pick],
                   cell.picked / cell.time[cell.best]);
        } else {
            printf("  %s\n", coll_async_alg_names[cell.pick]);
        }
    }
}

#define USAGE                                                                                \
    "usage: simulate [-P ib|eth | --params FILE] [-L us] [-o us] [-G ns/B] [-r ns/B] [-a us] [-c us] " \
    "[-M] [-f family,...] [-n N,...] [-m MIN:MAX] [-x FACTOR] [-s]\n"

/* The defaults: -P's, or --params' file (which wins over -P; *source then
 * names it); -1 when the file is bad (said on stderr). Read before the other
 * options, so that they override these wherever they stand. */
static int defaults(int argc, char **argv, struct sim_params *p, const char **source)
{
    const char *path = NULL;
    struct sim_params_file file;
    char error[SIM_PARAMS_ERROR_MAX];

    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp("-P", argv[i]) && i + 1 < argc) {
            *p = 0 == strcmp("eth", argv[i + 1]) ? ethernet : infiniband;
        } else if (0 == strcmp("--params", argv[i]) && i + 1 < argc) {
            path = argv[i + 1];
        } else if (0 == strncmp("--params=", argv[i], 9)) {
            path = argv[i] + 9;
        }
    }
    if (NULL == path) {
        return 0;
    }
    if (0 != sim_params_read(path, &file, error)) {
        fprintf(stderr, "simulate: %s\n", error);
        return -1;
    }
    *p = file.params;
    snprintf(source_text, sizeof(source_text), "%s (measured over %s)", path, file.transport);
    *source = source_text;
    return 0;
}

static const char *short_name(enum coll_async_alg alg)
{
    switch (alg) {
    case COLL_ASYNC_ALG_RING: return "ring";
    case COLL_ASYNC_ALG_RECURSIVE_DOUBLING: return "rd";
    case COLL_ASYNC_ALG_RABENSEIFNER: return "rab";
    case COLL_ASYNC_ALG_BINOMIAL: return "bin";
    case COLL_ASYNC_ALG_SCATTER_ALLGATHER: return "sag";
    case COLL_ASYNC_ALG_MULTICAST: return "mc";
    case COLL_ASYNC_ALG_DISSEMINATION: return "dis";
    default: return coll_async_alg_names[alg];
    }
}

/* -s: one table per family, a column per node count: the cheapest algorithm and
 * its time, then auto's pick and its time over the cheapest where it loses. */
static void summary(const struct family_row *row, const int *nodes, int nnodes, size_t min,
                    size_t max, size_t factor, const struct sim_params *p)
{
    printf("\n%s (%s): the cheapest, us [auto's pick, its time over the cheapest]\n%-9s",
           row->name,
           COLL_ASYNC_FAMILY_ALLGATHER == row->family ? "bytes: one node's block" : "bytes",
           "bytes");
    for (int i = 0; i < nnodes; ++i) {
        printf(" %23d", nodes[i]);
    }
    printf("\n");
    for (size_t bytes = min; bytes <= max; bytes = next_size(row, bytes, max, factor)) {
        printf("%-9zu", bytes);
        for (int i = 0; i < nnodes; ++i) {
            struct cell cell = price_cell(row, nodes[i], bytes, p);
            char text[64];
            int used = cell.best < 0 ? snprintf(text, sizeof(text), "-")
                                     : snprintf(text, sizeof(text), "%s %.1f%s",
                                                short_name(row->algs[cell.best]),
                                                cell.time[cell.best] * 1e6, cell.note[cell.best]);

            if (auto_loses(&cell) && used > 0) {
                snprintf(text + used, sizeof(text) - (size_t) used, " [%s x%.1f]",
                         short_name(cell.pick), cell.picked / cell.time[cell.best]);
            }
            printf(" %23s", text);
        }
        printf("\n");
    }
}

/* Whether the comma-separated list names name. */
static bool named(const char *list, const char *name)
{
    size_t length = strlen(name);

    for (const char *at = list; NULL != at; at = strchr(at, ',') ? strchr(at, ',') + 1 : NULL) {
        if (0 == strncmp(at, name, length) && (',' == at[length] || '\0' == at[length])) {
            return true;
        }
    }
    return false;
}

static int parse_list(const char *arg, int *values, int max)
{
    int n = 0;

    for (char *end; n < max && '\0' != *arg; arg = ',' == *end ? end + 1 : end) {
        values[n++] = (int) strtol(arg, &end, 10);
        if (end == arg) {
            return -1;
        }
    }
    return n;
}

int main(int argc, char **argv)
{
    struct sim_params p = infiniband;
    int nodes[MAX_NODE_COUNTS] = {2, 8, 64, 512, 4096}, nnodes = 5, opt;
    size_t min = 8, max = 16 << 20, factor = 8;
    const char *only = NULL;
    bool no_multicast = false, compact = false;
    const char *source = NULL; /* --params' file */
    static const struct option long_options[] = {{"params", required_argument, NULL, 'p'},
                                                 {NULL, 0, NULL, 0}};

    if (0 != defaults(argc, argv, &p, &source)) {
        return 2;
    }
    while (-1 != (opt = getopt_long(argc, argv, "P:L:o:G:r:a:c:Mf:n:m:x:s", long_options, NULL))) {
        switch (opt) {
        case 'P': break;
        case 'p': break;
        case 'L': p.latency = atof(optarg) * 1e-6; break;
        case 'o': p.overhead = atof(optarg) * 1e-6; break;
        case 'G': p.gap = atof(optarg) * 1e-9; break;
        case 'r': p.reduce = atof(optarg) * 1e-9; break;
        case 'a': p.ack = atof(optarg) * 1e-6; break;
        case 'c': p.call = atof(optarg) * 1e-6; break;
        case 'M': no_multicast = true; break;
        case 'f': only = optarg; break;
        case 'n': nnodes = parse_list(optarg, nodes, MAX_NODE_COUNTS); break;
        case 'm':
            if (NULL != strchr(optarg, ':')) {
                min = strtoull(optarg, NULL, 10);
                max = strtoull(strchr(optarg, ':') + 1, NULL, 10);
            } else {
                min = max = strtoull(optarg, NULL, 10);
            }
            break;
        case 'x': factor = strtoull(optarg, NULL, 10); break;
        case 's': compact = true; break;
        default:
            fprintf(stderr, USAGE);
            return 2;
        }
    }
    p.verbs = p.verbs && !no_multicast;
    if (nnodes < 1 || min < SIM_ELEMENT_BYTES || factor < 2) {
        fprintf(stderr, "simulate: bad -n, -m or -x\n");
        return 2;
    }
    if (NULL != source) {
        printf("# defaults from %s\n", source);
    }
    printf("# L %.2f us, o %.2f us, G %.3f ns/B, reduce %.3f ns/B, ack %.2f us, call %.2f us, "
           "multicast %s\n"
           "# '!': auto is not the cheapest (its time over the best); '#': more steps than a "
           "collective's tag range (%d)\n",
           p.latency * 1e6, p.overhead * 1e6, p.gap * 1e9, p.reduce * 1e9, p.ack * 1e6,
           p.call * 1e6, p.verbs ? "modelled" : "off", COLL_ASYNC_INTERNODE_TAG_STEPS);
    for (int f = 0; f < NUM_FAMILIES; ++f) {
        if (NULL != only && !named(only, families[f].name)) {
            continue;
        }
        if (compact) {
            summary(&families[f], nodes, nnodes, min, max, factor, &p);
            continue;
        }
        for (int i = 0; i < nnodes; ++i) {
            table(&families[f], nodes[i], min, max, factor, &p);
        }
    }
    return 0 == failures ? 0 : 1;
}
