/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * tune - measures the machine and writes a tuning file (docs/tuning-file.md)
 * whose rows choose the leaders' algorithm between nodes that measured fastest.
 *
 *   mpirun -np N [--map-by ppr:1:node] bench/tune [-o FILE] [--quick] [-p FILE]
 *   mpirun ... --mca coll_async_tuning_file FILE bench/tune --verify FILE
 *
 * It finds each rank's node as the component does, forms communicators of the
 * first k nodes (k = 1, 2, 4, ... and all), and on each, per family the file
 * steers, times every leaders' algorithm forced by the per-communicator hint
 * coll_async_<family>_algorithm, and auto, at a grid of sizes (tune_measure.c).
 * On one node (k = 1) it times the schedules inside a node instead, which the
 * file cannot steer yet: comments only. --verify re-measures with the file in
 * force and checks auto is never slower than the best forced algorithm by more
 * than the run-to-run spread.
 */

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tune.h"
#include "tune_model.h"
#include "../ompi/mca/coll/async/coll_async_tuning.h"

struct options {
    const char *out;
    const char *verify;
    const char *params;
    bool quick;
    size_t sizes[TUNE_MAX_SIZES];
    int size_count;
    bool family_on[TUNE_NUM_FAMILIES];
    struct tune_timing_plan plan;
};

static int world_rank, world_size;
/* Ranks on the first node: a node of one rank has no schedules inside it to time. */
static int first_node_ranks;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mpirun ... bench/tune [-o FILE] [--quick] [-p FILE] [-s SIZES] [-f FAMILIES]\n"
            "                             [-r BATCHES] [-t MS] [-i MAX]\n"
            "       mpirun ... --mca coll_async_tuning_file FILE bench/tune --verify FILE [...]\n"
            "  -o FILE      the tuning file to write (default coll_async.tune)\n"
            "  --quick      a few sizes up to 1 MiB, fewer and shorter batches (minutes)\n"
            "  --verify F   check auto, following the file F, against the forced algorithms\n"
            "  -p FILE      also fit the point-to-point model into FILE (bench/simulate --params)\n"
            "  -s SIZES     sizes in bytes, comma-separated, K/M suffixes (default: x4 from 8 B\n"
            "               to 16 MiB; --quick: 8,128,2K,32K,1M)\n"
            "  -f FAMILIES  allreduce,bcast,allgather,allgatherv,reduce_scatter,\n"
            "               reduce_scatter_block (default: all)\n"
            "  -r BATCHES   timed batches per candidate and size (default 15, --quick 9)\n"
            "  -t MS        each batch's length in ms (default 20, --quick 10)\n"
            "  -i MAX       at most this many calls per batch (default 1000)\n");
}

static int parse_size(const char *text, size_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(text, &end, 10);
    if (0 != errno || end == text) {
        return -1;
    }
    if ('K' == *end || 'k' == *end) {
        v <<= 10, ++end;
    } else if ('M' == *end || 'm' == *end) {
        v <<= 20, ++end;
    } else if ('G' == *end || 'g' == *end) {
        v <<= 30, ++end;
    }
    if ('\0' != *end || 0 == v || v > (1ULL << 31)) {
        return -1;
    }
    *out = (size_t) v;
    return 0;
}

/* The lists are tokenized in a copy: argv stays whole for the file's header. */
static int parse_sizes(const char *text, struct options *o)
{
    char *list = strdup(text);
    int rc = NULL != list ? 0 : -1;

    o->size_count = 0;
    for (char *tok = strtok(list, ","); 0 == rc && NULL != tok; tok = strtok(NULL, ",")) {
        if (o->size_count == TUNE_MAX_SIZES || 0 != parse_size(tok, &o->sizes[o->size_count])
            || (o->size_count > 0 && o->sizes[o->size_count] <= o->sizes[o->size_count - 1])) {
            rc = -1;
        } else {
            ++o->size_count;
        }
    }
    free(list);
    return 0 == rc && o->size_count > 0 ? 0 : -1;
}

static int parse_families(const char *text, struct options *o)
{
    char *list = strdup(text);
    int rc = NULL != list ? 0 : -1;

    memset(o->family_on, 0, sizeof(o->family_on));
    for (char *tok = strtok(list, ","); 0 == rc && NULL != tok; tok = strtok(NULL, ",")) {
        int f = 0;

        while (f < TUNE_NUM_FAMILIES && 0 != strcmp(tok, tune_families[f].name)) {
            ++f;
        }
        if (f == TUNE_NUM_FAMILIES) {
            rc = -1;
        } else {
            o->family_on[f] = true;
        }
    }
    free(list);
    return rc;
}

/* 0, or 2 after saying (rank 0) what is wrong. */
static int parse_options(int argc, char **argv, struct options *o)
{
    char *sizes = NULL, *families = NULL;
    int batches = 0, max_iter = 1000;
    double ms = 0;

    *o = (struct options){.out = "coll_async.tune"};
    for (int f = 0; f < TUNE_NUM_FAMILIES; ++f) {
        o->family_on[f] = true;
    }
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;

        if (0 == strcmp(a, "--quick")) {
            o->quick = true;
        } else if (0 == strcmp(a, "-h") || 0 == strcmp(a, "--help")) {
            if (0 == world_rank) {
                usage(stdout);
            }
            return 1;
        } else if (has_value && 0 == strcmp(a, "-o")) {
            o->out = argv[++i];
        } else if (has_value && 0 == strcmp(a, "--verify")) {
            o->verify = argv[++i];
        } else if (has_value && 0 == strcmp(a, "-p")) {
            o->params = argv[++i];
        } else if (has_value && 0 == strcmp(a, "-s")) {
            sizes = argv[++i];
        } else if (has_value && 0 == strcmp(a, "-f")) {
            families = argv[++i];
        } else if (has_value && 0 == strcmp(a, "-r")) {
            batches = atoi(argv[++i]);
            if (batches < 1 || batches > TUNE_MAX_BATCHES) {
                goto bad;
            }
        } else if (has_value && 0 == strcmp(a, "-t")) {
            ms = atof(argv[++i]);
            if (!(ms > 0)) {
                goto bad;
            }
        } else if (has_value && 0 == strcmp(a, "-i")) {
            max_iter = atoi(argv[++i]);
            if (max_iter < 1) {
                goto bad;
            }
        } else {
            goto bad;
        }
    }
    if (NULL != sizes) {
        if (0 != parse_sizes(sizes, o)) {
            if (0 == world_rank) {
                fprintf(stderr, "bench/tune: -s %s: sizes must be increasing numbers of bytes "
                                "(K, M suffixes), at most %d\n", sizes, TUNE_MAX_SIZES);
            }
            return 2;
        }
    } else if (o->quick) {
        static const size_t quick[] = {8, 128, 2048, 32768, 1048576};

        o->size_count = (int) (sizeof(quick) / sizeof(quick[0]));
        memcpy(o->sizes, quick, sizeof(quick));
    } else {
        for (size_t s = 8; s <= 16 * 1048576 && o->size_count < TUNE_MAX_SIZES; s *= 4) {
            o->sizes[o->size_count++] = s;
        }
        if (o->sizes[o->size_count - 1] < 16 * 1048576) {
            o->sizes[o->size_count++] = 16 * 1048576;
        }
    }
    if (NULL != families && 0 != parse_families(families, o)) {
        if (0 == world_rank) {
            fprintf(stderr, "bench/tune: -f %s: families are allreduce, bcast, allgather, "
                            "allgatherv, reduce_scatter, reduce_scatter_block\n", families);
        }
        return 2;
    }
    o->plan.batches = batches > 0 ? batches : o->quick ? 9 : 15;
    o->plan.batch_seconds = (ms > 0 ? ms : o->quick ? 10 : 20) / 1000.0;
    o->plan.max_iterations = max_iter;
    return 0;
bad:
    if (0 == world_rank) {
        usage(stderr);
    }
    return 2;
}

/* Nodes */

/* This rank's node as the component numbers it: with coll_async_virtual_nodes
 * V > 0, world rank / ceil(size / V); else the shared-memory node's, numbered
 * by their lowest world ranks. */
static int find_nodes(int *node_of, int *node_count)
{
    int virtual_nodes = 0, mine;

    if (0 == tune_cvar_int("coll_async_virtual_nodes", &virtual_nodes) && virtual_nodes > 0) {
        int per = (world_size + virtual_nodes - 1) / virtual_nodes;

        mine = world_rank / per;
    } else {
        MPI_Comm shared;
        int lowest, *lows = malloc((size_t) world_size * sizeof(int));

        if (NULL == lows) {
            return -1;
        }
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
        MPI_Allreduce(&world_rank, &lowest, 1, MPI_INT, MPI_MIN, shared);
        MPI_Comm_free(&shared);
        MPI_Allgather(&lowest, 1, MPI_INT, lows, 1, MPI_INT, MPI_COMM_WORLD);
        mine = 0; /* how many nodes have a lower lowest rank */
        for (int r = 0; r < world_size; ++r) {
            mine += lows[r] == r && r < lowest;
        }
        free(lows);
    }
    MPI_Allgather(&mine, 1, MPI_INT, node_of, 1, MPI_INT, MPI_COMM_WORLD);
    *node_count = 0;
    first_node_ranks = 0;
    for (int r = 0; r < world_size; ++r) {
        *node_count = node_of[r] + 1 > *node_count ? node_of[r] + 1 : *node_count;
        first_node_ranks += 0 == node_of[r];
    }
    return 0;
}

/* The NUMA domains of a node: coll_async_virtual_numa where set, else the
 * machine's (Linux: /sys/devices/system/node), at most its ranks; the most of
 * any node. */
static int numa_domains(MPI_Comm node)
{
    int virtual_numa = 0, ranks, domains = 0, most;
    char path[64];

    MPI_Comm_size(node, &ranks);
    if (0 == tune_cvar_int("coll_async_virtual_numa", &virtual_numa) && virtual_numa > 0) {
        domains = virtual_numa;
    } else {
        while (domains < 4096) {
            snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", domains);
            if (0 != access(path, F_OK)) {
                break;
            }
            ++domains;
        }
    }
    domains = domains < 1 ? 1 : domains > ranks ? ranks : domains;
    MPI_Allreduce(&domains, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return most;
}

/* A barrier that sleeps while it waits: ranks outside the nodes being measured
 * must not take the cores of those that are. */
static void quiet_barrier(void)
{
    MPI_Request request;
    int done = 0;
    struct timespec nap = {0, 2000000};

    MPI_Ibarrier(MPI_COMM_WORLD, &request);
    while (MPI_Test(&request, &done, MPI_STATUS_IGNORE), !done) {
        nanosleep(&nap, NULL);
    }
}

/* Candidates */

/* The short form of the hint (the component takes coll_async_<family>_alg as
 * coll_async_<family>_algorithm): MPI_MAX_INFO_KEY (36 in Open MPI 4.1 and 5.0)
 * is shorter than coll_async_reduce_scatter_block_algorithm. */
static void hint_key(enum tune_family family, char *key, size_t len)
{
    snprintf(key, len, "coll_async_%s_alg", tune_families[family].name);
}

static MPI_Comm with_hint(MPI_Comm comm, enum tune_family family, const char *value)
{
    char key[96];
    MPI_Info info;
    MPI_Comm dup;

    hint_key(family, key, sizeof(key));
    MPI_Info_create(&info);
    MPI_Info_set(info, key, value);
    MPI_Comm_dup_with_info(comm, info, &dup);
    MPI_Info_free(&info);
    return dup;
}

/* Whether the component runs (collective over the world): an allreduce on a
 * communicator whose hint says auto must count as native. (One whose hint says
 * delegate need not count otherwise: with nothing below the component, as under
 * --mca coll async alone, the component refuses that hint. Nothing timed here
 * is delegated.) */
static long long natives_of(const char *value)
{
    unsigned long long before = 0, after = 0;
    int in = 1, out;
    struct tune_counter counter;
    MPI_Comm comm = with_hint(MPI_COMM_WORLD, TUNE_ALLREDUCE, value);
    bool ok = 0 == tune_counter_open("coll_async_allreduce_native", &counter);

    ok = ok && 0 == tune_counter_read(&counter, &before);
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, comm);
    ok = ok && 0 == tune_counter_read(&counter, &after);
    if (ok) {
        tune_counter_close(&counter);
    }
    MPI_Comm_free(&comm);
    return ok ? (long long) (after - before) : -1;
}

static bool component_runs(void)
{
    int ok = natives_of("auto") > 0;

    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return ok;
}

static void add_candidate(struct tune_point *p, const char *value, enum coll_async_alg alg,
                          bool between_nodes)
{
    p->candidates[p->candidate_count++] = (struct tune_candidate){
        .value = value, .alg = alg, .between_nodes = between_nodes};
}

/* Between nodes: the family's leaders' algorithms, then auto. On one node: auto,
 * then the schedules inside a node and the NUMA stages, where they may be forced. */
static void choose_candidates(struct tune_point *p, int domains)
{
    const struct tune_family_info *f = &tune_families[p->family];

    p->candidate_count = 0;
    if (p->nodes > 1) {
        for (int a = 0; a < f->alg_count; ++a) {
            enum coll_async_alg instead;

            /* One the group cannot run would time another (a note says so in the file). */
            if (coll_async_decision_fallback(f->family, f->algs[a], p->nodes, &instead)) {
                continue;
            }
            add_candidate(p, coll_async_alg_names[f->algs[a]], f->algs[a], true);
        }
        /* The leaders' multicast group, where every leader has an RDMA port: kept
         * only if its bcasts went over it (multicast_ran). */
        if (TUNE_BCAST == p->family) {
            add_candidate(p, "multicast", COLL_ASYNC_ALG_MULTICAST, true);
        }
        add_candidate(p, "auto", COLL_ASYNC_ALG_AUTO, false);
        return;
    }
    add_candidate(p, "auto", COLL_ASYNC_ALG_AUTO, false);
    if (f->in_node_schedules) {
        add_candidate(p, "single_copy", COLL_ASYNC_ALG_SINGLE_COPY, false);
        add_candidate(p, "staged", COLL_ASYNC_ALG_STAGED, false);
        if (domains > 1) {
            add_candidate(p, "numa", COLL_ASYNC_ALG_NUMA, false);
            add_candidate(p, "flat", COLL_ASYNC_ALG_FLAT, false);
        }
    }
}

/* Whether family is measured on k nodes: between nodes every family; on one node
 * only those with schedules that may be forced, where it has more than one rank. */
static bool measured_at(enum tune_family family, int k)
{
    return k > 1 || (tune_families[family].in_node_schedules && first_node_ranks > 1);
}

/* The node counts: 1, 2, 4, ... below the nodes, and all of them. */
static int node_counts(int nodes, int *ks)
{
    int n = 0;

    for (int k = 1; k < nodes && n < TUNE_MAX_NODE_COUNTS - 1; k *= 2) {
        ks[n++] = k;
    }
    ks[n++] = nodes;
    return n;
}

/* Progress and the estimate */

static double started;

static void progress(double estimate, const struct tune_point *p, int size, int c)
{
    const struct tune_timing *t = &p->candidates[c].at[size];

    if (0 != world_rank) {
        return;
    }
    printf("[%6.1f s / ~%.0f s] %-20s k=%-3d %9zu B %-18s %10.2f us [%.2f-%.2f]%s\n",
           MPI_Wtime() - started, estimate, tune_families[p->family].name, p->nodes,
           p->bytes[size], p->candidates[c].value, tune_us(t->median), tune_us(t->min),
           tune_us(t->max), t->wrong ? "  WRONG RESULT" : "");
    fflush(stdout);
}

/* The seconds one call takes at each size (auto allreduce on all the nodes), and
 * what a communicator costs to make: the estimate's ingredients. */
static double estimate_seconds(const struct options *o, const int *ks, int k_count, int domains,
                               struct tune_buffers *b)
{
    double per_call[TUNE_MAX_SIZES], comm_cost, start, total = 0;
    struct tune_timing_plan once = {.batches = 1, .batch_seconds = 0, .max_iterations = 1};
    MPI_Comm comm;

    start = MPI_Wtime();
    comm = with_hint(MPI_COMM_WORLD, TUNE_ALLREDUCE, "auto");
    MPI_Barrier(comm);
    comm_cost = MPI_Wtime() - start;
    for (int s = 0; s < o->size_count; ++s) {
        struct tune_shape shape = tune_shape_of(TUNE_ALLREDUCE, o->sizes[s], world_size);
        const char *label = "calibration";
        struct tune_timing t;

        tune_measure(TUNE_ALLREDUCE, &shape, b, &comm, 1, &once, &label, &t);
        per_call[s] = t.median;
    }
    MPI_Comm_free(&comm);
    MPI_Allreduce(MPI_IN_PLACE, &comm_cost, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < k_count; ++i) {
        for (int f = 0; f < TUNE_NUM_FAMILIES; ++f) {
            struct tune_point p = {.family = (enum tune_family) f, .nodes = ks[i]};

            if (!o->family_on[f] || !measured_at((enum tune_family) f, ks[i])) {
                continue;
            }
            choose_candidates(&p, domains);
            total += p.candidate_count * comm_cost;
            for (int s = 0; s < o->size_count; ++s) {
                double batch = o->plan.batch_seconds > per_call[s] ? o->plan.batch_seconds
                                                                   : per_call[s];

                /* the batches, the warm-up, calibration and check calls */
                total += p.candidate_count * (o->plan.batches * batch + 5 * per_call[s]);
            }
        }
    }
    return total;
}

/* Measuring */

/* Whether a bcast of bytes on comm (whose hint says multicast) went over the
 * leaders' multicast group: coll_async_between_multicast rose on a leader (it
 * counts only bcasts that did; where the group could not be set up they fall
 * back point to point). Collective over comm. */
static bool multicast_ran(MPI_Comm comm, struct tune_buffers *b, size_t bytes)
{
    unsigned long long before = 0, after = 0;
    struct tune_counter counter;
    struct tune_shape shape = tune_shape_of(TUNE_BCAST, bytes, 1);
    bool ok = 0 == tune_counter_open("coll_async_between_multicast", &counter);
    int rose;

    ok = ok && 0 == tune_counter_read(&counter, &before);
    tune_fill(TUNE_BCAST, &shape, b, comm);
    tune_call(TUNE_BCAST, &shape, b, comm);
    ok = ok && 0 == tune_counter_read(&counter, &after);
    if (ok) {
        tune_counter_close(&counter);
    }
    rose = ok && after > before;
    MPI_Allreduce(MPI_IN_PLACE, &rose, 1, MPI_INT, MPI_MAX, comm);
    return rose;
}

/* Drops point p's multicast candidate (c) where its bcasts did not go over
 * multicast, and says so (the file's comments say it too). */
static void check_multicast(struct tune_point *p, MPI_Comm *comms, struct tune_buffers *b)
{
    int c = 0;

    while (c < p->candidate_count && COLL_ASYNC_ALG_MULTICAST != p->candidates[c].alg) {
        ++c;
    }
    if (c == p->candidate_count || multicast_ran(comms[c], b, p->bytes[p->size_count - 1])) {
        return;
    }
    p->multicast_unavailable = true;
    if (0 == world_rank) {
        printf("bcast k=%d: multicast: not available here (no RDMA port on every leader); "
               "not a candidate\n", p->nodes);
        fflush(stdout);
    }
    MPI_Comm_free(&comms[c]);
    for (; c + 1 < p->candidate_count; ++c) {
        p->candidates[c] = p->candidates[c + 1];
        comms[c] = comms[c + 1];
    }
    --p->candidate_count;
}

/* Measures every family at k nodes on sub (its ranks only) into points. */
static int measure_at(const struct options *o, MPI_Comm sub, int k, int domains,
                      struct tune_buffers *b, double estimate, struct tune_point *points)
{
    int ranks, count = 0;

    MPI_Comm_size(sub, &ranks);
    for (int f = 0; f < TUNE_NUM_FAMILIES; ++f) {
        struct tune_point *p = &points[count];
        MPI_Comm comms[TUNE_MAX_CANDIDATES];

        if (!o->family_on[f] || !measured_at((enum tune_family) f, k)) {
            continue;
        }
        *p = (struct tune_point){.family = (enum tune_family) f, .nodes = k, .ranks = ranks};
        choose_candidates(p, domains);
        for (int s = 0; s < o->size_count; ++s) {
            struct tune_shape shape = tune_shape_of(p->family, o->sizes[s], ranks);

            /* Tiny sizes may round to the same call (a byte per rank): once is enough. */
            if (p->size_count > 0 && shape.bytes == p->bytes[p->size_count - 1]) {
                continue;
            }
            p->nominal[p->size_count] = o->sizes[s];
            p->bytes[p->size_count] = shape.bytes;
            p->count[p->size_count++] = shape.count;
        }
        for (int c = 0; c < p->candidate_count; ++c) {
            comms[c] = with_hint(sub, p->family, p->candidates[c].value);
        }
        for (int s = 0; s < p->size_count; ++s) {
            struct tune_shape shape = tune_shape_of(p->family, p->nominal[s], ranks);
            char labels[TUNE_MAX_CANDIDATES][160];
            const char *label_of[TUNE_MAX_CANDIDATES];
            struct tune_timing at[TUNE_MAX_CANDIDATES];

            for (int c = 0; c < p->candidate_count; ++c) {
                snprintf(labels[c], sizeof(labels[c]), "%s on %d node(s) (%d ranks), %zu B, %s",
                         tune_families[f].name, k, ranks, p->bytes[s], p->candidates[c].value);
                label_of[c] = labels[c];
            }
            tune_measure(p->family, &shape, b, comms, p->candidate_count, &o->plan, label_of, at);
            for (int c = 0; c < p->candidate_count; ++c) {
                p->candidates[c].at[s] = at[c];
                progress(estimate, p, s, c);
            }
        }
        check_multicast(p, comms, b);
        for (int c = 0; c < p->candidate_count; ++c) {
            MPI_Comm_free(&comms[c]);
        }
        ++count;
    }
    return count;
}

static bool any_wrong(const struct tune_point *points, int count)
{
    for (int i = 0; i < count; ++i) {
        for (int c = 0; c < points[i].candidate_count; ++c) {
            for (int s = 0; s < points[i].size_count; ++s) {
                if (points[i].candidates[c].at[s].wrong) {
                    return true;
                }
            }
        }
    }
    return false;
}

/* --verify */

/* The file --verify checks, as the component read it. */
static struct coll_async_tuning *verified;

/* What auto runs at point p's size s with the file: its row's algorithm, else the
 * built-in thresholds' (AUTO where those run the flat exchange, not by node). */
static enum coll_async_alg auto_runs(const struct tune_point *p, int s, int *line)
{
    const struct coll_async_tuning_row *row = coll_async_tuning_lookup(
        verified, tune_families[p->family].family, p->nodes, p->bytes[s]);
    bool by_node;
    enum coll_async_alg alg;

    *line = NULL != row ? row->line : 0;
    if (NULL != row) {
        return row->alg;
    }
    alg = tune_auto_pick(p->family, p->bytes[s], p->count[s], p->ranks, p->nodes, &by_node);
    return by_node ? alg : COLL_ASYNC_ALG_AUTO;
}

static double iqr(const struct tune_timing *t)
{
    return t->q3 - t->q1;
}

/* The table: per family, node count and size, the best forced algorithm and
 * auto (which follows the file). The spread is the run-to-run noise seen in
 * this run: the larger interquartile range of the two's batches, or, where
 * auto runs the same algorithm as a forced candidate, the difference between
 * those two medians (the same work measured twice), if larger. PASS where
 * auto's median is not above the best's by more than that. The number of FAILs. */
static int verify_table(const struct tune_point *points, int count)
{
    int failed = 0, checked = 0;

    printf("\nPASS: auto's median is not above the best forced one's by more than the "
           "spread:\nthe larger interquartile range of their batches (iqr), or the difference "
           "between auto and the forced run of the same algorithm (same), if larger\n");
    printf("\n%-20s %5s %10s  %-18s %10s  %-30s %10s %8s  %s\n", "family", "nodes", "bytes",
           "best forced", "median us", "auto runs", "auto us", "spread", "verdict");
    for (int i = 0; i < count; ++i) {
        const struct tune_point *p = &points[i];
        int auto_c = p->candidate_count - 1; /* auto comes last between nodes */

        if (p->nodes < 2) {
            continue;
        }
        for (int s = 0; s < p->size_count; ++s) {
            const struct tune_timing *a = &p->candidates[auto_c].at[s];
            const struct tune_timing *best = &p->candidates[0].at[s];
            const char *best_name = "", *why = "iqr";
            int line;
            enum coll_async_alg runs = auto_runs(p, s, &line);
            double spread, same;
            char runs_text[48];
            bool pass;

            for (int c = 0; c < auto_c; ++c) {
                const struct tune_timing *t = &p->candidates[c].at[s];

                if (t->median <= best->median) {
                    best = t;
                    best_name = p->candidates[c].value;
                }
            }
            spread = iqr(best) > iqr(a) ? iqr(best) : iqr(a);
            for (int c = 0; c < auto_c; ++c) {
                if (p->candidates[c].alg == runs && COLL_ASYNC_ALG_AUTO != runs) {
                    same = fabs(a->median - p->candidates[c].at[s].median);
                    if (same > spread) {
                        spread = same;
                        why = "same";
                    }
                }
            }
            pass = a->median <= best->median + spread && !a->wrong;
            snprintf(runs_text, sizeof(runs_text), "%s (%s%.0d)",
                     COLL_ASYNC_ALG_AUTO == runs ? "flat" : coll_async_alg_names[runs],
                     0 != line ? "line " : "built-in", line);
            printf("%-20s %5d %10zu  %-18s %10.2f  %-30s %10.2f %6.2f %-4s  %s",
                   tune_families[p->family].name, p->nodes, p->bytes[s], best_name,
                   tune_us(best->median), runs_text, tune_us(a->median), tune_us(spread), why,
                   pass ? "PASS" : "FAIL");
            if (!pass) {
                printf(" (auto %.2fx the best)", a->median / best->median);
                ++failed;
            }
            printf("\n");
            ++checked;
        }
    }
    printf("\nverify: %d checked, %d passed, %d failed\n", checked, checked - failed, failed);
    return failed;
}

/* The job must have been started with the file it checks, and the file must parse. */
static int verify_setup(const char *path)
{
    char set[4096];
    struct coll_async_tuning_error error;
    struct coll_async_tuning *tuning;
    char *real_set, *real_path;
    bool same;

    if (0 != tune_cvar_string("coll_async_tuning_file", set, (int) sizeof(set))) {
        fprintf(stderr, "bench/tune: --verify: cannot read coll_async_tuning_file (is the async "
                        "component loaded?)\n");
        return -1;
    }
    real_set = realpath(set, NULL);
    real_path = realpath(path, NULL);
    same = NULL != real_set && NULL != real_path && 0 == strcmp(real_set, real_path);
    free(real_set);
    free(real_path);
    if (!same) {
        fprintf(stderr, "bench/tune: --verify %s: start the job with --mca coll_async_tuning_file "
                        "%s (it is \"%s\")\n", path, path, set);
        return -1;
    }
    tuning = coll_async_tuning_load(path, &error);
    if (NULL == tuning) {
        fprintf(stderr, "bench/tune: --verify: %s:%d: %s\n", path, error.line, error.why);
        return -1;
    }
    verified = tuning;
    return 0;
}

static void command_line(int argc, char **argv, char *buf, size_t len)
{
    size_t at = 0;

    buf[0] = '\0';
    for (int i = 0; i < argc && at < len; ++i) {
        at += (size_t) snprintf(buf + at, len - at, "%s%s", i ? " " : "", argv[i]);
    }
}

int main(int argc, char **argv)
{
    struct options o;
    struct tune_buffers buffers = {0};
    struct tune_point *points;
    int *node_of, nodes = 1, ks[TUNE_MAX_NODE_COUNTS], k_count, domains, point_count = 0;
    int rc = 0, version_len, largest_ranks;
    char version[MPI_MAX_LIBRARY_VERSION_STRING], line[2048];
    size_t largest = 0;
    double estimate;
    MPI_Comm node_comm, leaders;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    started = MPI_Wtime();
    rc = parse_options(argc, argv, &o);
    if (0 != rc) {
        MPI_Finalize();
        return 1 == rc ? 0 : rc;
    }
    node_of = malloc((size_t) world_size * sizeof(int));
    points = calloc(TUNE_MAX_NODE_COUNTS * TUNE_NUM_FAMILIES, sizeof(*points));
    if (NULL == node_of || NULL == points || 0 != tune_mpit_init()) {
        fprintf(stderr, "bench/tune: out of memory or no MPI_T\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (!component_runs()) {
        if (0 == world_rank) {
            fprintf(stderr, "bench/tune: the async component is not running: select it "
                            "(--mca coll async,tuned,libnbc,basic)\n");
        }
        rc = 2;
        goto out;
    }
    if (0 != find_nodes(node_of, &nodes)) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_split(MPI_COMM_WORLD, node_of[world_rank], world_rank, &node_comm);
    domains = numa_domains(node_comm);
    MPI_Comm_free(&node_comm);
    k_count = node_counts(nodes, ks);
    if (NULL != o.verify && 0 == world_rank) {
        rc = verify_setup(o.verify);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (0 != rc) {
        rc = 2;
        goto out;
    }

    /* The point-to-point model, over one rank per node. */
    if (NULL != o.params && NULL == o.verify && nodes < 2) {
        if (0 == world_rank) {
            fprintf(stderr, "bench/tune: -p %s: one node, no leaders between nodes to fit the "
                            "model to\n", o.params);
        }
    } else if (NULL != o.params && NULL == o.verify) {
        bool first = 0 == world_rank || node_of[world_rank - 1] != node_of[world_rank];

        MPI_Comm_split(MPI_COMM_WORLD, first ? 0 : MPI_UNDEFINED, world_rank, &leaders);
        rc = MPI_COMM_NULL != leaders ? tune_model_run(leaders, o.quick, o.params) : 0;
        if (MPI_COMM_NULL != leaders) {
            MPI_Comm_free(&leaders);
        }
        MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (0 != rc) {
            rc = 2;
            goto out;
        }
    }

    largest = o.sizes[o.size_count - 1];
    largest_ranks = world_size;
    if (0 != tune_buffers_init(&buffers, largest, largest_ranks)) {
        fprintf(stderr, "bench/tune: cannot allocate buffers of %zu bytes\n", largest);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    estimate = estimate_seconds(&o, ks, k_count, domains, &buffers);
    if (0 == world_rank) {
        MPI_Get_library_version(version, &version_len);
        printf("bench/tune: %d ranks on %d node(s), %d NUMA domain(s) a node at most; node counts",
               world_size, nodes, domains);
        for (int i = 0; i < k_count; ++i) {
            printf(" %d", ks[i]);
        }
        printf("; %d sizes, %d batches of ~%.0f ms; estimated %.0f s\n", o.size_count,
               o.plan.batches, o.plan.batch_seconds * 1000, estimate);
        fflush(stdout);
    }

    for (int i = 0; i < k_count; ++i) {
        int k = ks[i], n;
        MPI_Comm sub;

        MPI_Comm_split(MPI_COMM_WORLD, node_of[world_rank] < k ? 0 : MPI_UNDEFINED, world_rank,
                       &sub);
        if (MPI_COMM_NULL != sub) {
            n = measure_at(&o, sub, k, domains, &buffers, estimate, points + point_count);
            point_count += n;
            MPI_Comm_free(&sub);
        }
        quiet_barrier();
    }

    if (0 == world_rank) {
        printf("bench/tune: measured in %.0f s (estimated %.0f s)\n", MPI_Wtime() - started,
               estimate);
        if (any_wrong(points, point_count)) {
            fprintf(stderr, "bench/tune: WRONG RESULTS above: no tuning file written\n");
            rc = 1;
        } else if (NULL != o.verify) {
            rc = verify_table(points, point_count) > 0 ? 1 : 0;
        } else {
            struct tune_run_info info = {.ranks = world_size, .nodes = nodes,
                                         .numa_domains = domains, .batches = o.plan.batches};

            MPI_Get_library_version(version, &version_len);
            version[strcspn(version, "\n,")] = '\0';
            command_line(argc, argv, line, sizeof(line));
            info.command_line = line;
            info.ompi_version = version;
            tune_print_auto_losses(points, point_count);
            rc = 0 == tune_file_write(o.out, &info, points, point_count) ? 0 : 1;
            if (0 == rc) {
                printf("bench/tune: wrote %s (use: --mca coll_async_tuning_file %s)\n", o.out,
                       o.out);
            }
        }
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
out:
    coll_async_tuning_free(verified);
    tune_buffers_free(&buffers);
    free(points);
    free(node_of);
    tune_mpit_finalize();
    MPI_Finalize();
    return rc;
}
