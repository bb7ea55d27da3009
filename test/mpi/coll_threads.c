/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_threads: collectives from several threads at once under MPI_THREAD_MULTIPLE.
 *
 * Each thread runs its own communicators (a dup of MPI_COMM_WORLD and a dup of
 * MPI_COMM_SELF), so the calls are legal concurrently: per round a blocking
 * allreduce; then, outstanding together, an iallreduce on its self communicator,
 * a start of its own persistent allreduce (MPI_Allreduce_init, created once by
 * the thread, restarted each round on new inputs) and an ibcast; then an
 * ibarrier. Every result is checked, and afterwards the component's
 * process-wide MPI_T counters must have moved by exactly the number of calls all
 * threads made: a lost update would show there.
 */

#include <mpi.h>
#include "mpi4_persistent.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pvar_counter.h"

#define THREADS 4
#define ROUNDS 300

struct worker {
    int id;
    MPI_Comm world, self; /* this thread's own communicators */
    long failures;
};

static int world_rank, world_size;

static void *work(void *arg)
{
    struct worker *w = arg;
    int pin = 0, pout = 0;
    MPI_Request persistent;

    /* Bound to pin and pout: each start reads the pin of its round. */
    MPI_Allreduce_init(&pin, &pout, 1, MPI_INT, MPI_MAX, w->world, MPI_INFO_NULL, &persistent);
    for (int round = 0; round < ROUNDS; ++round) {
        int mine = (world_rank + 1) * (w->id + 1) + round, sum = -1, copy = -1;
        int want = (w->id + 1) * world_size * (world_size + 1) / 2 + world_size * round;
        int root = (round + w->id) % world_size, bcast = world_rank == root ? mine : -1;
        int bcast_want = (root + 1) * (w->id + 1) + round;
        int max_want = world_size * (w->id + 1) + 2 * round;
        MPI_Request reqs[3];

        MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, w->world);
        MPI_Iallreduce(&mine, &copy, 1, MPI_INT, MPI_SUM, w->self, &reqs[0]);
        pin = mine + round;
        pout = -1;
        reqs[1] = persistent;
        MPI_Start(&reqs[1]);
        MPI_Ibcast(&bcast, 1, MPI_INT, root, w->world, &reqs[2]);
        MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
        MPI_Ibarrier(w->world, &reqs[0]);
        MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        if (sum != want || copy != mine || pout != max_want || bcast != bcast_want) {
            if (w->failures++ == 0) {
                fprintf(stderr, "coll_threads: rank %d thread %d round %d: allreduce %d "
                        "(expected %d), self iallreduce %d (expected %d), persistent "
                        "allreduce %d (expected %d), ibcast %d (expected %d)\n", world_rank,
                        w->id, round, sum, want, copy, mine, pout, max_want, bcast, bcast_want);
            }
        }
    }
    MPI_Request_free(&persistent);
    return NULL;
}

static long expect_count(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const char *name,
                         unsigned long long want)
{
    unsigned long long got = pvar_counter_read(session, handle);

    if (got == want) {
        return 0;
    }
    fprintf(stderr, "coll_threads: rank %d: counter coll_async_%s_native moved by %llu, "
            "expected %llu\n", world_rank, name, got, want);
    return 1;
}

int main(int argc, char **argv)
{
    struct worker workers[THREADS];
    pthread_t threads[THREADS];
    MPI_T_pvar_session session;
    MPI_T_pvar_handle allreduce, iallreduce, ibarrier, allreduce_init, ibcast;
    int provided, ignored;
    long failures = 0, total = 0;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (provided != MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "coll_threads: MPI_THREAD_MULTIPLE not provided\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_T_init_thread(MPI_THREAD_MULTIPLE, &ignored);
    MPI_T_pvar_session_create(&session);

    for (int t = 0; t < THREADS; ++t) {
        workers[t] = (struct worker){.id = t};
        MPI_Comm_dup(MPI_COMM_WORLD, &workers[t].world);
        MPI_Comm_dup(MPI_COMM_SELF, &workers[t].self);
    }

    /* All on one node: every call here is the component's own. */
    allreduce = pvar_counter(session, "coll_async_allreduce_native", "coll_threads");
    iallreduce = pvar_counter(session, "coll_async_iallreduce_native", "coll_threads");
    ibarrier = pvar_counter(session, "coll_async_ibarrier_native", "coll_threads");
    allreduce_init = pvar_counter(session, "coll_async_allreduce_init_native", "coll_threads");
    ibcast = pvar_counter(session, "coll_async_ibcast_native", "coll_threads");

    for (int t = 0; t < THREADS; ++t) {
        pthread_create(&threads[t], NULL, work, &workers[t]);
    }
    for (int t = 0; t < THREADS; ++t) {
        pthread_join(threads[t], NULL);
        failures += workers[t].failures;
    }

    failures += expect_count(session, allreduce, "allreduce", THREADS * ROUNDS);
    failures += expect_count(session, iallreduce, "iallreduce", THREADS * ROUNDS);
    failures += expect_count(session, ibarrier, "ibarrier", THREADS * ROUNDS);
    failures += expect_count(session, allreduce_init, "allreduce_init", THREADS * ROUNDS);
    /* Open MPI hands no ibcast on a single-process communicator to coll. */
    failures += expect_count(session, ibcast, "ibcast", world_size > 1 ? THREADS * ROUNDS : 0);

    MPI_T_pvar_handle_free(session, &allreduce);
    MPI_T_pvar_handle_free(session, &iallreduce);
    MPI_T_pvar_handle_free(session, &ibarrier);
    MPI_T_pvar_handle_free(session, &allreduce_init);
    MPI_T_pvar_handle_free(session, &ibcast);
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
    for (int t = 0; t < THREADS; ++t) {
        MPI_Comm_free(&workers[t].world);
        MPI_Comm_free(&workers[t].self);
    }

    MPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (0 == world_rank) {
        printf("coll_threads: %d ranks x %d threads x %d rounds, %ld failures\n", world_size,
               THREADS, ROUNDS, total);
    }
    MPI_Finalize();
    return 0 == total ? 0 : 1;
}
