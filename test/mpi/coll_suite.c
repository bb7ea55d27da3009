/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_suite: the MPI correctness suite of coll/async (see coll_suite.h).
 *
 *   mpirun -np N [--oversubscribe] coll_suite [options]
 *
 * Runs every one of the 51 collectives coll/async intercepts (17 families, each
 * blocking, nonblocking and persistent) on four communicators (MPI_COMM_WORLD, a dup of it, an odd/even split, a rank-reversed
 * one), checks every result against a reference each rank computes itself, and
 * checks around every call that the component's MPI_T counters moved on the
 * expected path. Rank 0 ends with "coll_suite: N checks, M failures"; the exit
 * status is non-zero on any failure.
 *
 * Open MPI 4.1.4 bugs this suite found and steps around, each explained where it
 * is handled (the suite must pass on plain Open MPI, which coll/async delegates to):
 *   - MAX/MIN on MPI_UNSIGNED_LONG and MPI_OFFSET use the wrong signedness
 *     (probe_op_bugs(), coll_suite_types.c);
 *   - op/avx sums 8- and 16-bit integers with saturation (int_input(), ditto);
 *   - coll/self's alltoallw scales byte displacements by the extent
 *     (build_alltoallw(), coll_suite_move.c);
 *   - libnbc's in-place ialltoallv/ialltoallw corrupt data next to empty blocks
 *     (pair_count(), ditto);
 *   - coll/basic's exscan crashes on a single-process communicator
 *     (exscan_single_process_ok(), coll_suite_reduce.c).
 * And Open MPI never hands some calls to coll at all (ompi_calls_coll()).
 */

#define _POSIX_C_SOURCE 200809L /* strdup, strtok_r */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_suite.h"

const char *const coll_names[NUM_COLLS] = {
#define SUITE_COLL_NAME(l) [COLL_##l] = #l, [COLL_i##l] = "i" #l, [COLL_##l##_init] = #l "_init",
    SUITE_FAMILIES(SUITE_COLL_NAME)
#undef SUITE_COLL_NAME
};

const char *const path_names[NUM_PATHS] = {
    [PATH_NATIVE] = "native",
    [PATH_DELEGATED] = "delegated",
};

/* Small first, so a failure at a small count shows before the long ones run. */
const size_t suite_counts[] = {0, 1, 7, 4099, 65536, 1048576 + 3};
const int num_suite_counts = (int) (sizeof(suite_counts) / sizeof(suite_counts[0]));

#define QUICK_MAX_COUNT 4099

suite_options opt;

size_t per_rank_count(size_t count, int size)
{
    return count <= COUNT_LARGE_MIN ? count : count / (size_t) size + 3;
}

int suite_roots(int size, int roots[3])
{
    int candidates[3] = {0, size / 2, size - 1}, n = 0;

    for (int i = 0; i < 3; ++i) {
        int seen = 0;
        for (int j = 0; j < n; ++j) {
            seen = seen || roots[j] == candidates[i];
        }
        if (!seen) {
            roots[n++] = candidates[i];
        }
    }
    return n;
}

/* ---- options ------------------------------------------------------------------ */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mpirun -np N coll_suite [options]\n"
            "  --expect-component=yes|no  yes (default): coll/async's MPI_T counters must\n"
            "                             exist and move on the path expected_path() says;\n"
            "                             no: the component handles nothing (its counters\n"
            "                             are absent, or never move)\n"
            "  --quick                    small counts only (up to %d)\n"
            "  --max-count N              counts up to N only (counts: 0 1 7 4099 65536 %zu)\n"
            "  --only NAME[,NAME]         these collectives only (allreduce, iallreduce,\n"
            "                             allreduce_init, ...)\n"
            "  --delegate NAME[,NAME]     expect the delegated path for these collectives;\n"
            "                             a blocking name also covers its nonblocking and\n"
            "                             persistent forms (for runs with\n"
            "                             coll_async_<name>_algorithm=delegate)\n"
            "  --comm-world-only          MPI_COMM_WORLD only\n"
            "  --virtual-nodes N          the run sets coll_async_virtual_nodes=N: expect\n"
            "                             shared memory only inside each pretend node, and\n"
            "                             add a communicator of each pretend node\n"
            "  --interleaved              with --virtual-nodes, add a communicator whose\n"
            "                             ranks take the pretend nodes in turn (no node's\n"
            "                             ranks consecutive)\n"
            "  --thread-multiple          initialize with MPI_THREAD_MULTIPLE\n"
            "  --fresh-comms              make the communicators again for each\n"
            "                             collective (freed ones' shared memory taken again)\n"
            "  --verbose                  print every check before it runs\n"
            "  -h, --help                 this text\n"
            "environment: COLL_SUITE_BREAK_REFERENCE=1 alters one expected value per process,\n"
            "so the run must fail (proves the harness can fail)\n",
            QUICK_MAX_COUNT, suite_counts[num_suite_counts - 1]);
}

static int coll_by_name(const char *name)
{
    for (int c = 0; c < NUM_COLLS; ++c) {
        if (0 == strcmp(coll_names[c], name)) {
            return c;
        }
    }
    return -1;
}

/* Marks the collectives of a comma-separated list; returns 0, or -1 on an unknown
 * name. With `family`, a blocking name marks its nonblocking and persistent forms
 * too. */
static int parse_names(const char *list, int marks[NUM_COLLS], int family)
{
    char *copy = strdup(list), *save = NULL;
    int rc = 0;

    for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        int c = coll_by_name(name);
        if (c < 0) {
            fprintf(stderr, "coll_suite: unknown collective \"%s\"\n", name);
            rc = -1;
            continue;
        }
        marks[c] = 1;
        for (int f = 1; family && FORM_BLOCKING == coll_form((enum coll_id) c) && f < NUM_FORMS;
             ++f) {
            marks[c + f] = 1;
        }
    }
    free(copy);
    return rc;
}

/* Returns -1 to exit with an error, 1 to exit after -h, 0 to run. */
static int parse_options(int argc, char **argv)
{
    int only_given = 0;
    const char *env;

    opt.expect_component = 1;
    opt.max_count = suite_counts[num_suite_counts - 1];
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (0 == strcmp(a, "-h") || 0 == strcmp(a, "--help")) {
            return 1;
        } else if (0 == strcmp(a, "--expect-component=yes")) {
            opt.expect_component = 1;
        } else if (0 == strcmp(a, "--expect-component=no")) {
            opt.expect_component = 0;
        } else if (0 == strcmp(a, "--quick")) {
            opt.max_count = QUICK_MAX_COUNT;
        } else if (0 == strcmp(a, "--max-count") && i + 1 < argc) {
            char *end;
            opt.max_count = (size_t) strtoull(argv[++i], &end, 10);
            if (*end || !*argv[i]) {
                fprintf(stderr, "coll_suite: bad --max-count %s\n", argv[i]);
                return -1;
            }
        } else if (0 == strcmp(a, "--only") && i + 1 < argc) {
            only_given = 1;
            if (parse_names(argv[++i], opt.only, 0)) {
                return -1;
            }
        } else if (0 == strcmp(a, "--delegate") && i + 1 < argc) {
            if (parse_names(argv[++i], opt.delegate, 1)) {
                return -1;
            }
        } else if (0 == strcmp(a, "--virtual-nodes") && i + 1 < argc) {
            char *end;
            opt.virtual_nodes = (int) strtol(argv[++i], &end, 10);
            if (*end || opt.virtual_nodes < 1) {
                fprintf(stderr, "coll_suite: bad --virtual-nodes %s\n", argv[i]);
                return -1;
            }
        } else if (0 == strcmp(a, "--interleaved")) {
            opt.interleaved = 1;
        } else if (0 == strcmp(a, "--comm-world-only")) {
            opt.comm_world_only = 1;
        } else if (0 == strcmp(a, "--thread-multiple")) {
            opt.thread_multiple = 1;
        } else if (0 == strcmp(a, "--fresh-comms")) {
            opt.fresh_comms = 1;
        } else if (0 == strcmp(a, "--verbose")) {
            opt.verbose = 1;
        } else {
            fprintf(stderr, "coll_suite: unknown or incomplete option %s\n", a);
            return -1;
        }
    }
    if (!only_given) {
        for (int c = 0; c < NUM_COLLS; ++c) {
            opt.only[c] = 1;
        }
    }
    env = getenv("COLL_SUITE_BREAK_REFERENCE");
    opt.break_reference = NULL != env && 0 == strcmp(env, "1");
    return 0;
}

/* ---- communicators -------------------------------------------------------------- */

#define MAX_COMMS 6

/* The pretend node of a world rank, as the component computes it. */
static int virtual_node(int wrank, int wsize)
{
    int per_node = (wsize + opt.virtual_nodes - 1) / opt.virtual_nodes;

    return wrank / per_node;
}

/* Whether all ranks of comm share a node (a pretend one with --virtual-nodes). */
static int on_one_node(MPI_Comm comm, int size, int wrank, int wsize)
{
    MPI_Comm node;
    int node_size, where[2];

    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    /* The same on every rank: the sizes of all nodes' parts must be whole. */
    MPI_Allreduce(MPI_IN_PLACE, &node_size, 1, MPI_INT, MPI_MIN, comm);
    if (!opt.virtual_nodes || node_size != size) {
        return node_size == size;
    }
    where[0] = virtual_node(wrank, wsize);
    where[1] = -where[0];
    MPI_Allreduce(MPI_IN_PLACE, where, 2, MPI_INT, MPI_MAX, comm);
    return where[0] == -where[1];
}

/* Communicator creation runs collectives inside MPI (through coll/async too), so
 * it happens here, outside any counter check. */
static int make_comms(comm_ctx comms[MAX_COMMS])
{
    int wrank, wsize, n = 0;

    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);

    comms[n].comm = MPI_COMM_WORLD;
    snprintf(comms[n++].name, sizeof(comms[0].name), "world");
    if (!opt.comm_world_only) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[n].comm);
        snprintf(comms[n++].name, sizeof(comms[0].name), "dup");
        MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &comms[n].comm);
        snprintf(comms[n++].name, sizeof(comms[0].name), "split-%s", wrank % 2 ? "odd" : "even");
        MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - 1 - wrank, &comms[n].comm);
        snprintf(comms[n++].name, sizeof(comms[0].name), "reversed");
    }
    if (opt.virtual_nodes) {
        MPI_Comm_split(MPI_COMM_WORLD, virtual_node(wrank, wsize), wrank, &comms[n].comm);
        snprintf(comms[n++].name, sizeof(comms[0].name), "virtual-node-%d",
                 virtual_node(wrank, wsize));
    }
    if (opt.virtual_nodes && opt.interleaved) {
        /* Ordered by index inside the pretend node first: node 0's first rank, node
         * 1's first, ..., node 0's second, ... */
        int per_node = (wsize + opt.virtual_nodes - 1) / opt.virtual_nodes;

        MPI_Comm_split(MPI_COMM_WORLD, 0, (wrank % per_node) * wsize + wrank, &comms[n].comm);
        snprintf(comms[n++].name, sizeof(comms[0].name), "interleaved");
    }
    for (int i = 0; i < n; ++i) {
        MPI_Comm_rank(comms[i].comm, &comms[i].rank);
        MPI_Comm_size(comms[i].comm, &comms[i].size);
        comms[i].one_node = on_one_node(comms[i].comm, comms[i].size, wrank, wsize);
    }
    if (!opt.comm_world_only) {
        int ok = comms[3].rank == wsize - 1 - wrank && comms[3].size == wsize &&
                 comms[2].size == (wsize + (wrank % 2 ? 0 : 1)) / 2 && comms[2].rank == wrank / 2;
        record_check(ok);
        if (!ok) {
            report_plain_failure("communicators: reversed rank %d size %d, split rank %d size %d",
                                 comms[3].rank, comms[3].size, comms[2].rank, comms[2].size);
        }
    }
    return n;
}

static void free_comms(comm_ctx comms[MAX_COMMS], int n)
{
    for (int i = 1; i < n; ++i) {
        MPI_Comm_free(&comms[i].comm);
    }
}

/* ---- main ------------------------------------------------------------------------- */

static void run_collective(enum coll_id coll, const comm_ctx *cx)
{
    switch (coll_blocking_form(coll)) {
    case COLL_barrier:
        plan_barrier(coll, cx);
        break;
    case COLL_allreduce:
    case COLL_reduce:
    case COLL_reduce_scatter_block:
    case COLL_reduce_scatter:
    case COLL_scan:
    case COLL_exscan:
        plan_reduction(coll, cx);
        break;
    default:
        plan_movement(coll, cx);
        break;
    }
}

int main(int argc, char **argv)
{
    int required, provided, rank, size, parsed, ncomms;
    comm_ctx comms[MAX_COMMS];
    long totals[2], mine[2];
    unsigned long long moved[NUM_PATHS], moved_total[NUM_PATHS] = {0, 0};
    double t0;

    parsed = parse_options(argc, argv);
    required = opt.thread_multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, required, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (0 != parsed) {
        if (0 == rank) {
            usage(parsed > 0 ? stdout : stderr);
        }
        MPI_Finalize();
        return parsed > 0 ? 0 : 2;
    }
    t0 = MPI_Wtime();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    record_check(provided >= required);
    if (provided < required) {
        report_plain_failure("MPI_Init_thread provided thread level %d, asked for %d", provided,
                             required);
    }
    if (0 == rank) {
        printf("coll_suite: %d ranks, counts up to %zu, expect component: %s%s%s\n", size,
               opt.max_count, opt.expect_component ? "yes" : "no",
               opt.break_reference ? ", COLL_SUITE_BREAK_REFERENCE=1 (must fail)" : "",
               opt.thread_multiple ? ", MPI_THREAD_MULTIPLE" : "");
        fflush(stdout);
    }

    /* Each datatype's extent must be the size of the C type the references use. */
    for (int t = 0; t < num_suite_types; ++t) {
        MPI_Aint lb, extent;
        MPI_Type_get_extent(suite_types[t].dt, &lb, &extent);
        record_check(0 == lb && (size_t) extent == suite_types[t].extent);
        if (0 != lb || (size_t) extent != suite_types[t].extent) {
            report_plain_failure("%s has lb %ld extent %ld; the C type has size %zu",
                                 suite_types[t].name, (long) lb, (long) extent,
                                 suite_types[t].extent);
        }
    }

    probe_op_bugs(0 == rank);
    counters_init(opt.expect_component);
    if (opt.fresh_comms) {
        for (int coll = 0; coll < NUM_COLLS; ++coll) {
            if (opt.only[coll]) {
                ncomms = make_comms(comms);
                for (int i = 0; i < ncomms; ++i) {
                    run_collective((enum coll_id) coll, &comms[i]);
                }
                free_comms(comms, ncomms);
            }
        }
    } else {
        ncomms = make_comms(comms);
        for (int i = 0; i < ncomms; ++i) {
            for (int coll = 0; coll < NUM_COLLS; ++coll) {
                if (opt.only[coll]) {
                    run_collective((enum coll_id) coll, &comms[i]);
                }
            }
        }
        free_comms(comms, ncomms);
    }
    counters_moved(moved);
    MPI_Reduce(moved, moved_total, NUM_PATHS, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    counters_finish();

    mine[0] = suite_checks;
    mine[1] = suite_failures;
    MPI_Allreduce(mine, totals, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("coll_suite: %.1f s\n", MPI_Wtime() - t0);
        printf("coll_suite: calls counted native %llu, delegated %llu (all ranks)\n",
               moved_total[PATH_NATIVE], moved_total[PATH_DELEGATED]);
        printf("coll_suite: %ld checks, %ld failures\n", totals[0], totals[1]);
        fflush(stdout);
    }
    MPI_Finalize();
    return totals[1] > 0 ? 1 : 0;
}
