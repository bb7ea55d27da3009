/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * bench/tune: from the measurements to the tuning file (docs/tuning-file.md).
 *
 * Per family and measured node count k >= 2, the row's nodes run from k to the
 * next measured count minus 1 (the last: k-*). Per size the fastest forced
 * algorithm wins, unless what auto already runs there is within the winner's
 * spread (its batches' interquartile range): then auto's stays, so a file never moves a
 * choice on noise. Adjacent sizes with the same winner merge into one row; the
 * boundary between two measured sizes is their geometric mean, the first row
 * starts at 0 and the last runs to *. Comments carry the machine, the run and
 * every candidate's median and spread, so a reader sees the margins. The file
 * written is read back through the component's own parser
 * (coll_async_tuning.c), and each measured size must look up the row meant.
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tune.h"
#include "../ompi/mca/coll/async/coll_async_tuning.h"

/* The index of point p's auto candidate. */
static int auto_index(const struct tune_point *p)
{
    for (int c = 0; c < p->candidate_count; ++c) {
        if (0 == strcmp(p->candidates[c].value, "auto")) {
            return c;
        }
    }
    return -1;
}

/* The fastest candidate at size s among those the file may name (between
 * nodes) or, in a node, among all but auto. */
static int fastest(const struct tune_point *p, int s)
{
    int best = -1;

    for (int c = 0; c < p->candidate_count; ++c) {
        const struct tune_candidate *cand = &p->candidates[c];

        if (0 == strcmp(cand->value, "auto") || (p->nodes > 1 && !cand->between_nodes)) {
            continue;
        }
        if (best < 0 || cand->at[s].median < p->candidates[best].at[s].median) {
            best = c;
        }
    }
    return best;
}

static int candidate_of(const struct tune_point *p, enum coll_async_alg alg)
{
    for (int c = 0; c < p->candidate_count; ++c) {
        if (p->candidates[c].between_nodes && p->candidates[c].alg == alg) {
            return c;
        }
    }
    return -1;
}

/* Whether auto measured slower than the fastest beyond the fastest's spread
 * (auto's median above the fastest's third quartile). */
static bool auto_lost(const struct tune_point *p, int s, double *ratio)
{
    int a = auto_index(p), best = fastest(p, s);
    const struct tune_timing *w;

    if (a < 0 || best < 0) {
        return false;
    }
    w = &p->candidates[best].at[s];
    *ratio = w->median > 0 ? p->candidates[a].at[s].median / w->median : 1;
    return p->candidates[a].at[s].median > w->q3;
}

/* The candidate the row for size s names, and whether auto's pick was kept
 * over a faster one within the spread; -1: no row, where auto runs the flat
 * exchange and no forced one beat it beyond its spread (a row would take the
 * call by node). */
static int chosen(const struct tune_point *p, int s, bool *kept_auto)
{
    int best = fastest(p, s), pick;
    bool by_node;
    double ratio;
    const struct tune_timing *w = &p->candidates[best].at[s];

    *kept_auto = false;
    pick = candidate_of(p, tune_auto_pick(p->family, p->bytes[s], p->count[s], p->ranks,
                                          p->nodes, &by_node));
    if (!by_node && !auto_lost(p, s, &ratio)) {
        return -1;
    }
    if (pick >= 0 && by_node && pick != best
        && p->candidates[pick].at[s].median - w->median <= w->q3 - w->q1) {
        *kept_auto = true;
        return pick;
    }
    return best;
}

static size_t boundary(const struct tune_point *p, int s)
{
    return (size_t) floor(sqrt((double) p->bytes[s] * (double) p->bytes[s + 1]));
}

/* The next measured node count of family after k among points (0: none). */
static int next_nodes(const struct tune_point *points, int count, enum tune_family family, int k)
{
    int next = 0;

    for (int i = 0; i < count; ++i) {
        if (points[i].family == family && points[i].nodes > k
            && (0 == next || points[i].nodes < next)) {
            next = points[i].nodes;
        }
    }
    return next;
}

static void nodes_text(const struct tune_point *points, int count, const struct tune_point *p,
                       char *buf, size_t len)
{
    int next = next_nodes(points, count, p->family, p->nodes);

    if (0 == next) {
        snprintf(buf, len, "%d-*", p->nodes);
    } else if (next - 1 == p->nodes) {
        snprintf(buf, len, "%d", p->nodes);
    } else {
        snprintf(buf, len, "%d-%d", p->nodes, next - 1);
    }
}

static void timing_text(const struct tune_timing *t, char *buf, size_t len)
{
    snprintf(buf, len, "%.2f [%.2f-%.2f]", tune_us(t->median), tune_us(t->min), tune_us(t->max));
}

/* The comment table of a point: a line per size, every candidate's time. */
static void write_table(FILE *f, const struct tune_point *p)
{
    int a = auto_index(p);

    fprintf(f, "# %12s", "bytes");
    for (int c = 0; c < p->candidate_count; ++c) {
        fprintf(f, "  %-26s", p->candidates[c].value);
    }
    fprintf(f, "  %s\n", p->nodes > 1 ? "auto runs -> row" : "fastest");
    for (int s = 0; s < p->size_count; ++s) {
        char text[64];
        double ratio = 1;
        bool kept, by_node;
        enum coll_async_alg pick = tune_auto_pick(p->family, p->bytes[s], p->count[s], p->ranks,
                                                  p->nodes, &by_node);

        fprintf(f, "# %12zu", p->bytes[s]);
        for (int c = 0; c < p->candidate_count; ++c) {
            timing_text(&p->candidates[c].at[s], text, sizeof(text));
            fprintf(f, "  %-26s", text);
        }
        if (p->nodes > 1) {
            int row = chosen(p, s, &kept);

            fprintf(f, "  %s%s -> %s", by_node ? "" : "flat exchange, not ",
                    by_node ? coll_async_alg_names[pick] : "by node",
                    row < 0 ? "no row (flat)" : p->candidates[row].value);
            if (kept) {
                fprintf(f, " (auto's pick: %s is faster by less than its spread)",
                        p->candidates[fastest(p, s)].value);
            }
        } else {
            fprintf(f, "  %s", p->candidates[fastest(p, s)].value);
        }
        if (a >= 0 && auto_lost(p, s, &ratio)) {
            fprintf(f, "  AUTO SLOWER: %.2fx %s", ratio, p->candidates[fastest(p, s)].value);
        }
        fprintf(f, "\n");
    }
}

/* The rows of a point (k >= 2): runs of sizes with the same winner. */
static void write_rows(FILE *f, const struct tune_point *points, int count,
                       const struct tune_point *p)
{
    char nodes[32];
    const char *name = tune_families[p->family].name;
    bool kept;

    nodes_text(points, count, p, nodes, sizeof(nodes));
    for (int s = 0; s < p->size_count;) {
        int c = chosen(p, s, &kept), e = s;
        char range[64];
        size_t lo = 0 == s ? 0 : boundary(p, s - 1) + 1;

        while (e + 1 < p->size_count && chosen(p, e + 1, &kept) == c) {
            ++e;
        }
        if (c < 0) { /* a hole: the built-in thresholds run the flat exchange */
            s = e + 1;
            continue;
        }
        if (e + 1 == p->size_count) {
            snprintf(range, sizeof(range), "%zu-*", lo);
        } else {
            snprintf(range, sizeof(range), "%zu-%zu", lo, boundary(p, e));
        }
        fprintf(f, "%-20s %-7s %-22s %s\n", name, nodes, range, p->candidates[c].value);
        s = e + 1;
    }
}

static void write_header(FILE *f, const struct tune_run_info *info)
{
    char host[256] = "?", date[64];
    time_t now = time(NULL);

    gethostname(host, sizeof(host) - 1);
    strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %z", localtime(&now));
    fprintf(f, "# coll/async tuning file, written by bench/tune (docs/tuning-file.md)\n");
    fprintf(f, "# machine:   %s, %ld cores online\n", host, sysconf(_SC_NPROCESSORS_ONLN));
    fprintf(f, "# Open MPI:  %s\n", info->ompi_version);
    fprintf(f, "# component: coll/async (the leaders' algorithms forced per communicator by "
               "MPI_Info coll_async_<family>_algorithm)\n");
    fprintf(f, "# date:      %s\n", date);
    fprintf(f, "# command:   %s\n", info->command_line);
    fprintf(f, "# ranks:     %d on %d node(s), %d NUMA domain(s) a node at most\n", info->ranks,
            info->nodes, info->numa_domains);
    fprintf(f, "# times:     us per call, the median of %d batches [their min-max], each "
               "batch the slowest rank's;\n#            the spread compared is the "
               "batches' interquartile range\n", info->batches);
    fprintf(f, "# rows:      per size the fastest forced algorithm, or auto's own where that is "
               "within the fastest's spread;\n#            boundaries at the geometric mean of "
               "the sizes measured; AUTO SLOWER marks auto beyond the fastest's spread\n");
    fprintf(f, "coll_async_tuning 1\n");
}

/* Reads the file back through the component's parser; each measured size must
 * look up the row meant. */
static int read_back(const char *path, const struct tune_point *points, int count)
{
    struct coll_async_tuning_error error;
    struct coll_async_tuning *t = coll_async_tuning_load(path, &error);
    int rc = 0;

    if (NULL == t) {
        fprintf(stderr, "bench/tune: the file written does not parse: %s:%d: %s\n", path,
                error.line, error.why);
        return -1;
    }
    for (int i = 0; i < count && 0 == rc; ++i) {
        const struct tune_point *p = &points[i];

        for (int s = 0; p->nodes > 1 && s < p->size_count && 0 == rc; ++s) {
            const struct coll_async_tuning_row *row
                = coll_async_tuning_lookup(t, tune_families[p->family].family, p->nodes,
                                           p->bytes[s]);
            bool kept;
            int c = chosen(p, s, &kept);

            if (c < 0 ? NULL != row : NULL == row || row->alg != p->candidates[c].alg) {
                fprintf(stderr, "bench/tune: %s: %s at %d nodes, %zu B reads back as %s, not %s\n",
                        path, tune_families[p->family].name, p->nodes, p->bytes[s],
                        NULL == row ? "no row" : coll_async_alg_names[row->alg],
                        c < 0 ? "no row" : p->candidates[c].value);
                rc = -1;
            }
        }
    }
    coll_async_tuning_free(t);
    return rc;
}

int tune_file_write(const char *path, const struct tune_run_info *info,
                    const struct tune_point *points, int point_count)
{
    FILE *f = fopen(path, "w");
    int rows = 0;

    if (NULL == f) {
        perror(path);
        return -1;
    }
    write_header(f, info);
    for (int fam = 0; fam < TUNE_NUM_FAMILIES; ++fam) {
        for (int i = 0; i < point_count; ++i) {
            const struct tune_point *p = &points[i];
            char nodes[32];

            if (p->family != (enum tune_family) fam || p->nodes < 2) {
                continue;
            }
            nodes_text(points, point_count, p, nodes, sizeof(nodes));
            fprintf(f, "\n# %s between %s nodes, measured at %d nodes (%d ranks):\n",
                    tune_families[fam].name, nodes, p->nodes, p->ranks);
            if (p->multicast_unavailable) {
                fprintf(f, "# multicast: not available here (no RDMA port on every leader): "
                           "its bcasts went point to point; not a candidate\n");
            }
            write_table(f, p);
            write_rows(f, points, point_count, p);
            ++rows;
        }
    }
    if (0 == rows) {
        fprintf(f, "\n# one node: no leaders between nodes, no rows\n");
    }
    for (int i = 0; i < point_count; ++i) {
        const struct tune_point *p = &points[i];

        if (p->nodes > 1) {
            continue;
        }
        fprintf(f, "\n# %s inside one node (%d ranks; the schedules inside a node, which this "
                   "format cannot steer):\n", tune_families[p->family].name, p->ranks);
        write_table(f, p);
    }
    if (0 != fclose(f)) {
        perror(path);
        return -1;
    }
    return read_back(path, points, point_count);
}

void tune_print_auto_losses(const struct tune_point *points, int point_count)
{
    int losses = 0;

    printf("\nwhere auto (the built-in thresholds) measured slower than the fastest beyond "
           "its spread:\n");
    for (int i = 0; i < point_count; ++i) {
        const struct tune_point *p = &points[i];
        int a = auto_index(p);

        for (int s = 0; s < p->size_count; ++s) {
            double ratio;
            int best = fastest(p, s);

            if (best < 0 || !auto_lost(p, s, &ratio)) {
                continue;
            }
            printf("  %-20s %d node(s) %10zu B: auto %.2f us, %s %.2f us [%.2f-%.2f] (%.2fx)\n",
                   tune_families[p->family].name, p->nodes, p->bytes[s],
                   tune_us(p->candidates[a].at[s].median), p->candidates[best].value,
                   tune_us(p->candidates[best].at[s].median), tune_us(p->candidates[best].at[s].min),
                   tune_us(p->candidates[best].at[s].max), ratio);
            ++losses;
        }
    }
    if (0 == losses) {
        printf("  nowhere\n");
    }
}
