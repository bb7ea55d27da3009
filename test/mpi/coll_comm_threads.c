/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_comm_threads: communicators created and freed from several threads at once
 * under MPI_THREAD_MULTIPLE, the pattern of task runtimes and of libraries that
 * keep a private communicator per thread.
 *
 * Each thread has a parent of its own (a dup of MPI_COMM_WORLD made before the
 * threads start) and, per iteration, makes a communicator from it with one of
 * the constructors (dup, idup, create, create_group, split, dup_with_info; "mix"
 * cycles through them), runs a collective on it (every other one nonblocking, so
 * that its first collective is run by the progress thread), checks the result
 * and frees it. The threads' creations interleave differently on each rank, which
 * is what made two ranks' set-ups wait on each other.
 *
 * Afterwards the process-wide MPI_T counters must show every one of those
 * collectives native: a communicator whose set-up fell back would show up as
 * delegated. Prints the time the loop took, and how many shared-memory segments
 * this process took again from freed communicators (coll_async_shm_reused).
 *
 *   coll_comm_threads [-m dup|idup|create|create_group|split|dup_with_info|mix]
 *                     [-n iterations] [-t threads] [-c] [-o] [-r]
 *   -c: no collective; -o: no counters (Open MPI's own components, for the time);
 *   -r: fail unless every rank reused segments
 */

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pvar_counter.h"

enum mode { DUP, IDUP, CREATE, CREATE_GROUP, SPLIT, DUP_WITH_INFO, NUM_MODES, MIX = NUM_MODES };
static const char *const mode_names[] = {"dup", "idup", "create", "create_group",
                                         "split", "dup_with_info", "mix"};

#define MAX_THREADS 16

struct worker {
    int id;
    MPI_Comm parent;
    long failures, blocking, nonblocking;
};

static int world_rank, world_size, iterations = 1234, threads = 4;
static enum mode mode = DUP;
static int collectives = 1, counted = 1, must_reuse = 0;

static MPI_Comm make(struct worker *w, int iteration)
{
    enum mode how = MIX == mode ? (enum mode) ((iteration + w->id) % NUM_MODES) : mode;
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Group group;
    MPI_Request request;
    MPI_Info info;

    switch (how) {
    case DUP:
        MPI_Comm_dup(w->parent, &comm);
        break;
    case IDUP:
        MPI_Comm_idup(w->parent, &comm, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        break;
    case CREATE:
        MPI_Comm_group(w->parent, &group);
        MPI_Comm_create(w->parent, group, &comm);
        MPI_Group_free(&group);
        break;
    case CREATE_GROUP:
        MPI_Comm_group(w->parent, &group);
        /* The tag keeps the threads' creations apart (they share no parent anyway). */
        MPI_Comm_create_group(w->parent, group, w->id, &comm);
        MPI_Group_free(&group);
        break;
    case SPLIT:
        /* Reversed: the new communicator's rank 0 is the parent's last. */
        MPI_Comm_split(w->parent, 0, world_size - world_rank, &comm);
        break;
    case DUP_WITH_INFO:
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
        MPI_Comm_dup_with_info(w->parent, info, &comm);
        MPI_Info_free(&info);
        break;
    default:
        abort();
    }
    return comm;
}

static void *work(void *arg)
{
    struct worker *w = arg;

    for (int iteration = 0; iteration < iterations; ++iteration) {
        MPI_Comm comm = make(w, iteration);
        int rank, size, mine, sum = -1, want;

        if (MPI_COMM_NULL == comm) {
            if (w->failures++ == 0) {
                fprintf(stderr, "coll_comm_threads: rank %d thread %d iteration %d: no "
                        "communicator\n", world_rank, w->id, iteration);
            }
            continue;
        }
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        mine = (rank + 1) * (w->id + 1) + iteration;
        want = (w->id + 1) * size * (size + 1) / 2 + size * iteration;
        if (collectives && iteration % 2 == 0) {
            MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comm);
            ++w->blocking;
        } else if (collectives) {
            MPI_Request request;

            MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comm, &request);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
            ++w->nonblocking;
        }
        if (collectives && sum != want && w->failures++ == 0) {
            fprintf(stderr, "coll_comm_threads: rank %d thread %d iteration %d: allreduce %d, "
                    "expected %d\n", world_rank, w->id, iteration, sum, want);
        }
        MPI_Comm_free(&comm);
    }
    return NULL;
}

/* The threads' collectives all native: blocking ones exactly; nonblocking ones
 * at least (Open MPI's own communicator creation calls iallreduce on the
 * parents), and none delegated. */
static int check_counters(const struct pvar_families *counters,
                          const unsigned long long blocking[PVAR_PATHS],
                          const unsigned long long nonblocking[PVAR_PATHS], const long calls[2])
{
    const unsigned long long *before[2] = {blocking, nonblocking};
    static const char *const names[2] = {"allreduce", "iallreduce"};
    int wrong = 0;

    for (int form = 0; form < 2; ++form) {
        unsigned long long now[PVAR_PATHS];
        unsigned long long native, delegated;

        pvar_families_read(counters, 0, 0 == form ? PVAR_FORM_BLOCKING : PVAR_FORM_NONBLOCKING,
                           now);
        native = now[PVAR_PATH_NATIVE] - before[form][PVAR_PATH_NATIVE];
        delegated = now[PVAR_PATH_DELEGATED] - before[form][PVAR_PATH_DELEGATED];
        if (0 != delegated || native < (unsigned long long) calls[form]
            || (0 == form && native != (unsigned long long) calls[form])) {
            fprintf(stderr, "coll_comm_threads: rank %d: %s: %llu native and %llu delegated "
                    "for the threads' %ld calls\n", world_rank, names[form], native, delegated,
                    calls[form]);
            ++wrong;
        }
    }
    return wrong;
}

static void usage(void)
{
    fprintf(stderr, "usage: coll_comm_threads [-m dup|idup|create|create_group|split|"
            "dup_with_info|mix] [-n iterations] [-t threads] [-c] [-o] [-r]\n");
    exit(2);
}

static void parse(int argc, char **argv)
{
    int opt;

    while (-1 != (opt = getopt(argc, argv, "m:n:t:cor"))) {
        switch (opt) {
        case 'm':
            mode = NUM_MODES + 1;
            for (int m = 0; m <= MIX; ++m) {
                if (0 == strcmp(optarg, mode_names[m])) {
                    mode = (enum mode) m;
                }
            }
            if (mode > MIX) {
                usage();
            }
            break;
        case 'n':
            iterations = atoi(optarg);
            break;
        case 't':
            threads = atoi(optarg);
            if (threads < 1 || threads > MAX_THREADS) {
                usage();
            }
            break;
        case 'c':
            collectives = 0;
            break;
        case 'o':
            counted = 0;
            break;
        case 'r':
            must_reuse = 1;
            break;
        default:
            usage();
        }
    }
}

int main(int argc, char **argv)
{
    static const char *const families[] = {"allreduce"};
    struct worker workers[MAX_THREADS];
    pthread_t tids[MAX_THREADS];
    struct pvar_families counters;
    unsigned long long blocking[PVAR_PATHS], nonblocking[PVAR_PATHS], reused = 0;
    MPI_T_pvar_handle reused_counter = MPI_T_PVAR_HANDLE_NULL;
    long failures = 0, calls[2] = {0, 0}, all_failures, fewest_reused = 0;
    int provided, wrong = 0;
    double start, took;

    parse(argc, argv);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "coll_comm_threads: MPI_THREAD_MULTIPLE not provided\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    for (int t = 0; t < threads; ++t) {
        workers[t] = (struct worker){.id = t};
        MPI_Comm_dup(MPI_COMM_WORLD, &workers[t].parent);
    }
    if (counted) {
        pvar_families_open(&counters, families, 1, "coll_comm_threads");
        pvar_families_read(&counters, 0, PVAR_FORM_BLOCKING, blocking);
        pvar_families_read(&counters, 0, PVAR_FORM_NONBLOCKING, nonblocking);
        reused_counter = pvar_counter(counters.session, "coll_async_shm_reused",
                                      "coll_comm_threads");
        reused = pvar_counter_read(counters.session, reused_counter);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime();
    for (int t = 0; t < threads; ++t) {
        pthread_create(&tids[t], NULL, work, &workers[t]);
    }
    for (int t = 0; t < threads; ++t) {
        pthread_join(tids[t], NULL);
        failures += workers[t].failures;
        calls[0] += workers[t].blocking;
        calls[1] += workers[t].nonblocking;
    }
    took = MPI_Wtime() - start;
    /* Every collective of the threads native, none delegated. */
    if (counted) {
        wrong += check_counters(&counters, blocking, nonblocking, calls);
        reused = pvar_counter_read(counters.session, reused_counter) - reused;
        MPI_T_pvar_handle_free(counters.session, &reused_counter);
        pvar_families_close(&counters);
    }
    MPI_Allreduce(&(long){(long) reused}, &fewest_reused, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    if (must_reuse && 0 == fewest_reused) {
        fprintf(stderr, "coll_comm_threads: rank %d: %llu shared-memory segments reused\n",
                world_rank, reused);
        ++wrong;
    }
    failures += wrong;
    for (int t = 0; t < threads; ++t) {
        MPI_Comm_free(&workers[t].parent);
    }
    MPI_Allreduce(&failures, &all_failures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (0 == world_rank) {
        printf("coll_comm_threads: %s, %d threads x %d communicators, %d ranks: %.2f s%s\n",
               mode_names[mode], threads, iterations, world_size, took,
               collectives ? "" : " (no collective)");
        if (counted) {
            printf("coll_comm_threads: at least %ld shared-memory segments reused per rank\n",
                   fewest_reused);
        }
        printf("%s\n", 0 == all_failures ? "No Errors" : "FAILED");
    }
    MPI_Finalize();
    return 0 == all_failures ? 0 : 1;
}
