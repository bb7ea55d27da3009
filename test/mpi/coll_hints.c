/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_hints: MPI_Info hints coll_async_<family>_algorithm on a communicator
 * (docs/tuning.md, "Per communicator"). Each check makes a communicator with a
 * hint (MPI_Comm_dup_with_info; also MPI_Comm_split_type, and on Open MPI 5
 * MPI_Comm_idup_with_info), runs the family's collective on it, blocking and
 * nonblocking, checks the results against a reference, and proves from coll/async's
 * MPI_T counters which algorithm ran: coll_async_between_<algorithm> (the leaders'
 * algorithm between nodes), coll_async_shm_<schedule> (the schedule inside a
 * node), coll_async_numa_staged, coll_async_<collective>_delegated. Each counter
 * is read before and after the collective alone, and the moves summed over the
 * world afterwards.
 *
 *   mpirun -np 4 --mca coll_async_virtual_nodes 2 coll_hints between [--forced ALG]
 *   mpirun -np 2 coll_hints inside
 *   mpirun -np 4 --mca coll_async_virtual_numa 2 coll_hints numa
 *   mpirun -np 2 --mca coll async coll_hints refused
 *
 * between: each leaders' algorithm of allreduce, bcast and allgather; a bad value
 * and an unknown key (ignored: the world's algorithm runs); delegate; a schedule
 * inside the nodes named for bcast; a sibling dup and the world, which must still
 * run what they ran before. --forced ALG: the job forces allreduce to ALG by its
 * MCA parameter; the world must run ALG, a communicator with the hint auto must not.
 * inside: single_copy and staged for allreduce, bcast and allgather, rooted_chunks
 * and single_copy for reduce, at a size below a slot and one above (single_copy
 * only where CMA works, coll_async_shm_cma 1: auto takes it for large messages on
 * the world).
 * numa: flat on a communicator turns the world's NUMA stages off, numa on.
 * refused: with nothing below coll/async, the hint delegate cannot be honoured:
 * the communicator is created all the same and its allreduce runs natively.
 *
 * Rank 0 prints "coll_hints MODE: N checks, F failures"; the exit status is
 * non-zero on any failure.
 */

#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pvar_counter.h"

#define SMALL 100    /* ints: 400 B, below a slot */
#define LARGE 70000  /* ints: 280000 B, above the default 256 KiB slot */

static long checks, failures;
static int world_rank, world_size;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        ++checks;                                                              \
        if (!(cond)) {                                                         \
            char line_[512];                                                   \
            snprintf(line_, sizeof(line_), __VA_ARGS__);                       \
            fprintf(stderr, "coll_hints: rank %d: FAIL %s\n", world_rank, line_); \
            ++failures;                                                        \
        }                                                                      \
    } while (0)

/* The counters, in groups: what ran between nodes, what ran inside a node. */
static const char *const between_names[] = {"ring",     "recursive_doubling", "rabenseifner",
                                            "binomial", "scatter_allgather",  "dissemination",
                                            "multicast", "pairwise"};
static const char *const shm_names[] = {"small_each",  "small_root", "small_lock", "small_atomic",
                                        "single_copy", "staged",     "rooted_chunks"};
#define N_BETWEEN ((int) (sizeof(between_names) / sizeof(between_names[0])))
#define N_SHM ((int) (sizeof(shm_names) / sizeof(shm_names[0])))
#define SHM_SINGLE_COPY (N_BETWEEN + 4)
#define SHM_STAGED (N_BETWEEN + 5)
enum { C_NUMA = N_BETWEEN + N_SHM, C_DELEGATED, C_IDELEGATED, N_COUNTERS };

static MPI_T_pvar_session session;
static MPI_T_pvar_handle handles[N_COUNTERS];

static void open_counters(void)
{
    char name[96];
    int ignored;

    MPI_T_init_thread(MPI_THREAD_SINGLE, &ignored);
    MPI_T_pvar_session_create(&session);
    for (int c = 0; c < N_BETWEEN; ++c) {
        snprintf(name, sizeof(name), "coll_async_between_%s", between_names[c]);
        handles[c] = pvar_counter(session, name, "coll_hints");
    }
    for (int c = 0; c < N_SHM; ++c) {
        snprintf(name, sizeof(name), "coll_async_shm_%s", shm_names[c]);
        handles[N_BETWEEN + c] = pvar_counter(session, name, "coll_hints");
    }
    handles[C_NUMA] = pvar_counter(session, "coll_async_numa_staged", "coll_hints");
    handles[C_DELEGATED] = pvar_counter(session, "coll_async_allreduce_delegated", "coll_hints");
    handles[C_IDELEGATED] = pvar_counter(session, "coll_async_iallreduce_delegated", "coll_hints");
}

static void read_counters(unsigned long long out[N_COUNTERS])
{
    for (int c = 0; c < N_COUNTERS; ++c) {
        out[c] = pvar_counter_read(session, handles[c]);
    }
}

/* What a measured run moved, summed over the world. */
struct moved {
    unsigned long long by[N_COUNTERS];
};

/* The one counter of a group that moved ("none", or "several: a+b"). */
static const char *ran_in(const struct moved *m, int first, const char *const *names, int n)
{
    static char text[256];
    int count = 0;

    snprintf(text, sizeof(text), "none");
    for (int c = 0; c < n; ++c) {
        if (0 != m->by[first + c]) {
            if (0 == count) {
                snprintf(text, sizeof(text), "%s", names[c]);
            } else {
                size_t used = strlen(text);

                snprintf(text + used, sizeof(text) - used, "+%s", names[c]);
            }
            ++count;
        }
    }
    if (count > 1) {
        char list[sizeof(text)];

        memcpy(list, text, sizeof(list));
        snprintf(text, sizeof(text), "several: %.200s", list);
    }
    return text;
}

static const char *ran_between(const struct moved *m)
{
    return ran_in(m, 0, between_names, N_BETWEEN);
}

static const char *ran_shm(const struct moved *m)
{
    return ran_in(m, N_BETWEEN, shm_names, N_SHM);
}

/* Rank r's i-th element. */
static int value(int r, int i)
{
    return r * 1000003 + i * 7 + 1;
}

static int sum(int size, int i)
{
    unsigned total = 0;

    for (int r = 0; r < size; ++r) {
        total += (unsigned) value(r, i);
    }
    return (int) total;
}

enum family { ALLREDUCE, BCAST, ALLGATHER, REDUCE };
static const char *const family_names[] = {"allreduce", "bcast", "allgather", "reduce"};

/* One collective of family on comm, blocking then nonblocking, each checked. */
static void run_checked(MPI_Comm comm, enum family family, int count, const char *what)
{
    int rank, size, root;
    int *in, *out;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    root = size - 1;
    in = malloc(sizeof(int) * (size_t) count);
    out = malloc(sizeof(int) * (size_t) count * (size_t) size);
    if (NULL == in || NULL == out) {
        fprintf(stderr, "coll_hints: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int nonblocking = 0; nonblocking < 2; ++nonblocking) {
        MPI_Request request = MPI_REQUEST_NULL;
        long wrong = -1;

        for (int i = 0; i < count; ++i) {
            in[i] = value(rank, i);
        }
        memset(out, 0, sizeof(int) * (size_t) count * (size_t) size);
        switch (family) {
        case ALLREDUCE:
            if (nonblocking) {
                MPI_Iallreduce(in, out, count, MPI_INT, MPI_SUM, comm, &request);
            } else {
                MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, comm);
            }
            break;
        case REDUCE:
            if (nonblocking) {
                MPI_Ireduce(in, out, count, MPI_INT, MPI_SUM, root, comm, &request);
            } else {
                MPI_Reduce(in, out, count, MPI_INT, MPI_SUM, root, comm);
            }
            break;
        case BCAST:
            if (rank == root) {
                memcpy(out, in, sizeof(int) * (size_t) count);
            }
            if (nonblocking) {
                MPI_Ibcast(out, count, MPI_INT, root, comm, &request);
            } else {
                MPI_Bcast(out, count, MPI_INT, root, comm);
            }
            break;
        case ALLGATHER:
            if (nonblocking) {
                MPI_Iallgather(in, count, MPI_INT, out, count, MPI_INT, comm, &request);
            } else {
                MPI_Allgather(in, count, MPI_INT, out, count, MPI_INT, comm);
            }
            break;
        }
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        for (long i = 0; i < count && wrong < 0; ++i) {
            switch (family) {
            case ALLREDUCE:
                wrong = out[i] == sum(size, (int) i) ? -1 : i;
                break;
            case REDUCE:
                wrong = rank != root || out[i] == sum(size, (int) i) ? -1 : i;
                break;
            case BCAST:
                wrong = out[i] == value(root, (int) i) ? -1 : i;
                break;
            case ALLGATHER:
                for (int r = 0; r < size && wrong < 0; ++r) {
                    wrong = out[(long) r * count + i] == value(r, (int) i) ? -1 : i;
                }
                break;
            }
        }
        CHECK(wrong < 0, "%s: %s%s of %d ints: element %ld wrong", what,
              nonblocking ? "i" : "", family_names[family], count, wrong);
    }
    free(in);
    free(out);
}

/* Runs family on comm and says what moved, summed over the world (which every
 * rank of the world must call: comm is the world's or a dup of it). */
static struct moved measure(MPI_Comm comm, enum family family, int count, const char *what)
{
    unsigned long long before[N_COUNTERS], after[N_COUNTERS];
    struct moved m, total;

    read_counters(before);
    run_checked(comm, family, count, what);
    read_counters(after);
    for (int c = 0; c < N_COUNTERS; ++c) {
        m.by[c] = after[c] - before[c];
    }
    MPI_Allreduce(m.by, total.by, N_COUNTERS, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

/* A dup of the world with one hint (key NULL: none). */
static MPI_Comm dup_with(const char *key, const char *value)
{
    MPI_Info info;
    MPI_Comm comm;

    MPI_Info_create(&info);
    if (NULL != key) {
        MPI_Info_set(info, key, value);
    }
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm);
    MPI_Info_free(&info);
    return comm;
}

static void key_of(enum family family, char *key, size_t len)
{
    snprintf(key, len, "coll_async_%s_algorithm", family_names[family]);
}

/* MPI_Comm_get_info returns the hint taken. */
static void say_get_info(MPI_Comm comm, const char *key, const char *want)
{
    char value[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    MPI_Info info;

    MPI_Comm_get_info(comm, &info);
#if MPI_VERSION >= 4
    /* MPI-4's call (MPI_Info_get is deprecated there); sized as the buffer. */
    int length = (int) sizeof(value);

    MPI_Info_get_string(info, key, &length, value, &flag);
#else
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
#endif
    MPI_Info_free(&info);
    CHECK(flag && 0 == strcmp(want, value), "MPI_Comm_get_info returns %s%s%s, set: %s", key,
          flag ? "=" : " not at all", flag ? value : "", want);
}

/* The leaders' algorithm family runs at count on a dup with the hint alg,
 * which must be alg; the world and a sibling dup made without a hint must
 * run what the world ran before (world_ran). */
static void between_hint(enum family family, const char *alg, int count, const char *world_ran)
{
    char key[64], what[160];
    MPI_Comm hinted, sibling;
    struct moved m;

    key_of(family, key, sizeof(key));
    snprintf(what, sizeof(what), "dup with %s=%s", key, alg);
    hinted = dup_with(key, alg);
    sibling = dup_with(NULL, NULL);
    m = measure(hinted, family, count, what);
    CHECK(0 == strcasecmp(alg, ran_between(&m)), "%s: %s between nodes ran %s", what,
          family_names[family], ran_between(&m));
    m = measure(sibling, family, count, "a sibling dup without hints");
    CHECK(0 == strcmp(world_ran, ran_between(&m)),
          "a sibling of the %s dup ran %s between nodes, the world %s", what, ran_between(&m),
          world_ran);
    m = measure(MPI_COMM_WORLD, family, count, "the world");
    CHECK(0 == strcmp(world_ran, ran_between(&m)),
          "after the %s dup the world ran %s between nodes, before %s", what, ran_between(&m),
          world_ran);
    MPI_Comm_free(&hinted);
    MPI_Comm_free(&sibling);
}

/* A hint that must be ignored (with a message test/run checks). */
static void ignored_hint(const char *key, const char *value, const char *world_ran)
{
    char what[160];
    MPI_Comm comm = dup_with(key, value);
    struct moved m;

    snprintf(what, sizeof(what), "dup with %s=%s (ignored)", key, value);
    m = measure(comm, ALLREDUCE, SMALL, what);
    CHECK(0 == strcmp(world_ran, ran_between(&m)), "%s: allreduce ran %s, the world %s", what,
          ran_between(&m), world_ran);
    MPI_Comm_free(&comm);
}

static void between(const char *forced)
{
    static const struct {
        enum family family;
        const char *alg;
    } hints[] = {{ALLREDUCE, "ring"},        {ALLREDUCE, "recursive_doubling"},
                 {ALLREDUCE, "rabenseifner"}, {BCAST, "binomial"},
                 {BCAST, "scatter_allgather"}, {ALLGATHER, "ring"},
                 {ALLGATHER, "recursive_doubling"}};
    char world_ran[3][64];
    struct moved m;
    MPI_Comm comm;

    for (int family = ALLREDUCE; family <= ALLGATHER; ++family) {
        m = measure(MPI_COMM_WORLD, family, SMALL, "the world");
        snprintf(world_ran[family], sizeof(world_ran[family]), "%s", ran_between(&m));
        if (0 == world_rank) {
            printf("coll_hints: the world's %s of %d ints ran %s between nodes\n",
                   family_names[family], SMALL, world_ran[family]);
        }
    }
    if (NULL != forced) {
        /* The job's parameter forces allreduce; the hint auto gives auto back. */
        CHECK(0 == strcmp(forced, world_ran[ALLREDUCE]),
              "allreduce forced to %s by the parameter ran %s", forced, world_ran[ALLREDUCE]);
        comm = dup_with("coll_async_allreduce_algorithm", "AUTO");
        m = measure(comm, ALLREDUCE, SMALL, "dup with coll_async_allreduce_algorithm=AUTO");
        CHECK(0 != strcmp(forced, ran_between(&m)) && 0 != strcmp("none", ran_between(&m)),
              "the hint auto over the parameter's %s ran %s", forced, ran_between(&m));
        MPI_Comm_free(&comm);
        return;
    }
    for (size_t h = 0; h < sizeof(hints) / sizeof(hints[0]); ++h) {
        between_hint(hints[h].family, hints[h].alg, SMALL, world_ran[hints[h].family]);
    }
    /* Any case, as the parameter takes it. */
    between_hint(ALLREDUCE, "RabenSeifner", SMALL, world_ran[ALLREDUCE]);
    /* The short key, the only one MPI_Info_set takes for the longest names. */
    comm = dup_with("coll_async_allreduce_alg", "recursive_doubling");
    m = measure(comm, ALLREDUCE, SMALL, "dup with coll_async_allreduce_alg=recursive_doubling");
    CHECK(0 == strcmp("recursive_doubling", ran_between(&m)),
          "the short key coll_async_allreduce_alg=recursive_doubling ran %s", ran_between(&m));
    MPI_Comm_free(&comm);
    ignored_hint("coll_async_allreduce_algorithm", "fastest", world_ran[ALLREDUCE]);
    ignored_hint("coll_async_allreduce_algoritm", "ring", world_ran[ALLREDUCE]);

    /* delegate: the call goes below, nothing of coll/async's runs. */
    comm = dup_with("coll_async_allreduce_algorithm", "delegate");
    m = measure(comm, ALLREDUCE, SMALL, "dup with coll_async_allreduce_algorithm=delegate");
    CHECK(2ull * world_size == m.by[C_DELEGATED] + m.by[C_IDELEGATED]
              && 0 == strcmp("none", ran_between(&m)),
          "delegate: %llu of %d calls delegated, between nodes %s",
          m.by[C_DELEGATED] + m.by[C_IDELEGATED], 2 * world_size, ran_between(&m));
    MPI_Comm_free(&comm);

    /* A schedule inside the nodes named for bcast steers its node stages (a
     * stage that hands the leaders' status on is a small bcast: staged). */
    m = measure(MPI_COMM_WORLD, BCAST, LARGE, "the world");
    if (0 != m.by[SHM_SINGLE_COPY]) {
        comm = dup_with("coll_async_bcast_algorithm", "staged");
        m = measure(comm, BCAST, LARGE, "dup with coll_async_bcast_algorithm=staged");
        CHECK(0 == m.by[SHM_SINGLE_COPY] && 0 != m.by[SHM_STAGED],
              "bcast=staged across nodes: the node stages ran %s", ran_shm(&m));
        MPI_Comm_free(&comm);
    } else if (0 == world_rank) {
        printf("coll_hints: no CMA (the world's large bcast ran %s inside the nodes): "
               "staged in the node stages not told apart\n", ran_shm(&m));
    }

    comm = dup_with("coll_async_allgather_algorithm", "ring");
    say_get_info(comm, "coll_async_allgather_algorithm", "ring");
    MPI_Comm_free(&comm);
    {
        /* Other constructors that take an info: MPI_Comm_split_type (its key keeps
         * the world's order, so Open MPI 4.1 returns the communicator it made with
         * the info), and MPI 4's MPI_Comm_idup_with_info, which Open MPI 5.0 has
         * while it says MPI 3.1. */
        const char *want = 0 == strcmp("ring", world_ran[ALLREDUCE]) ? "rabenseifner" : "ring";
        MPI_Info info;

        MPI_Info_create(&info);
        MPI_Info_set(info, "coll_async_allreduce_algorithm", want);
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, info, &comm);
        m = measure(comm, ALLREDUCE, SMALL, "MPI_Comm_split_type with an info");
        CHECK(0 == strcmp(want, ran_between(&m)), "split_type with %s ran %s", want,
              ran_between(&m));
        MPI_Comm_free(&comm);
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
        {
            MPI_Request request;

            MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &comm, &request);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
            m = measure(comm, ALLREDUCE, SMALL, "MPI_Comm_idup_with_info");
            CHECK(0 == strcmp(want, ran_between(&m)), "idup_with_info with %s ran %s", want,
                  ran_between(&m));
            MPI_Comm_free(&comm);
        }
#endif
        MPI_Info_free(&info);
    }
}

/* Inside one node: the schedule a hint names runs at both sizes. */
static void inside(void)
{
    static const struct {
        enum family family;
        const char *schedule;
        bool needs_cma;
    } hints[] = {{ALLREDUCE, "single_copy", true}, {ALLREDUCE, "staged", false},
                 {BCAST, "single_copy", true},     {BCAST, "staged", false},
                 {ALLGATHER, "single_copy", true}, {ALLGATHER, "staged", false},
                 {REDUCE, "single_copy", true},    {REDUCE, "rooted_chunks", false}};
    static const int counts[] = {SMALL, LARGE};
    char key[64], what[160], world_small[64];
    struct moved m;
    bool cma;

    m = measure(MPI_COMM_WORLD, BCAST, LARGE, "the world");
    cma = 0 == strcmp("single_copy", ran_shm(&m));
    m = measure(MPI_COMM_WORLD, ALLREDUCE, SMALL, "the world");
    snprintf(world_small, sizeof(world_small), "%s", ran_shm(&m));
    if (0 == world_rank) {
        printf("coll_hints: CMA %s; the world's allreduce of %d ints ran %s\n",
               cma ? "works" : "off or refused (single_copy not checked)", SMALL, world_small);
    }
    for (size_t h = 0; h < sizeof(hints) / sizeof(hints[0]); ++h) {
        MPI_Comm comm, sibling;

        if (hints[h].needs_cma && !cma) {
            continue;
        }
        key_of(hints[h].family, key, sizeof(key));
        comm = dup_with(key, hints[h].schedule);
        sibling = dup_with(NULL, NULL);
        for (int c = 0; c < 2; ++c) {
            snprintf(what, sizeof(what), "dup with %s=%s", key, hints[h].schedule);
            m = measure(comm, hints[h].family, counts[c], what);
            CHECK(0 == strcmp(hints[h].schedule, ran_shm(&m)), "%s: %s of %d ints ran %s", what,
                  family_names[hints[h].family], counts[c], ran_shm(&m));
        }
        m = measure(sibling, ALLREDUCE, SMALL, "a sibling dup");
        CHECK(0 == strcmp(world_small, ran_shm(&m)),
              "a sibling of the %s=%s dup ran %s for a small allreduce, the world %s", key,
              hints[h].schedule, ran_shm(&m), world_small);
        MPI_Comm_free(&comm);
        MPI_Comm_free(&sibling);
    }
    m = measure(MPI_COMM_WORLD, ALLREDUCE, SMALL, "the world");
    CHECK(0 == strcmp(world_small, ran_shm(&m)), "the world's small allreduce ran %s, before %s",
          ran_shm(&m), world_small);
}

/* NUMA stages: the world stages allreduce (auto from 2 domains); flat on a
 * communicator does not, numa does. */
static void numa(void)
{
    struct moved m;
    MPI_Comm flat, staged;

    m = measure(MPI_COMM_WORLD, ALLREDUCE, SMALL, "the world");
    CHECK(0 != m.by[C_NUMA], "the world's allreduce was not staged by NUMA domain");
    flat = dup_with("coll_async_allreduce_algorithm", "flat");
    staged = dup_with("coll_async_allreduce_algorithm", "numa");
    m = measure(flat, ALLREDUCE, SMALL, "dup with coll_async_allreduce_algorithm=flat");
    CHECK(0 == m.by[C_NUMA], "allreduce=flat: %llu calls staged", m.by[C_NUMA]);
    m = measure(staged, ALLREDUCE, SMALL, "dup with coll_async_allreduce_algorithm=numa");
    CHECK(0 != m.by[C_NUMA], "allreduce=numa: not staged");
    m = measure(flat, BCAST, SMALL, "dup with coll_async_allreduce_algorithm=flat");
    CHECK(0 != m.by[C_NUMA], "allreduce=flat turned bcast's NUMA stages off too");
    MPI_Comm_free(&flat);
    MPI_Comm_free(&staged);
}

/* With nothing below the component, delegate is refused (said in a help
 * message) instead of failing the communicator's creation. */
static void refused(void)
{
    MPI_Comm comm = dup_with("coll_async_allreduce_algorithm", "delegate");
    struct moved m = measure(comm, ALLREDUCE, SMALL, "dup with delegate, nothing below");

    CHECK(0 == m.by[C_DELEGATED] + m.by[C_IDELEGATED] && 0 != strcmp("none", ran_shm(&m)),
          "delegate with nothing below: %llu calls delegated, inside the node %s",
          m.by[C_DELEGATED] + m.by[C_IDELEGATED], ran_shm(&m));
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    const char *forced = argc > 3 && 0 == strcmp("--forced", argv[2]) ? argv[3] : NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    open_counters();
    if (0 == strcmp("between", mode)) {
        between(forced);
    } else if (0 == strcmp("inside", mode)) {
        inside();
    } else if (0 == strcmp("numa", mode)) {
        numa();
    } else if (0 == strcmp("refused", mode)) {
        refused();
    } else {
        if (0 == world_rank) {
            fprintf(stderr, "usage: coll_hints between [--forced ALG] | inside | numa | "
                    "refused\n");
        }
        MPI_Finalize();
        return 2;
    }
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (0 == world_rank) {
        printf("coll_hints %s: %ld checks, %ld failures\n", mode, checks, failures);
    }
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
    MPI_Finalize();
    return 0 == failures ? 0 : 1;
}
