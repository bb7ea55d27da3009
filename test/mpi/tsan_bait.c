/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * tsan_bait: an erroneous MPI program that races inside coll/async, so that test/run
 * proves its ThreadSanitizer check goes red on a race in the component (and that the
 * suppressions, test/tsan.supp, do not hide one): under MPI_THREAD_MULTIPLE two
 * threads call MPI_Allreduce on MPI_COMM_WORLD at once, which MPI forbids (the
 * collectives of one communicator are called one at a time), so both write the
 * communicator's channel state unordered. Run with halt_on_error=1: the first
 * report ends the rank before the mixed-up collectives could wait on each other.
 */

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define COUNT (1 << 20)

static pthread_barrier_t start;

/* Both threads in the component at once: released together, on vectors long
 * enough that neither is done before the other begins. */
static void *allreduce(void *arg)
{
    int *in = calloc(COUNT, sizeof(int)), *out = calloc(COUNT, sizeof(int));

    (void) arg;
    pthread_barrier_wait(&start);
    for (int i = 0; i < 4; ++i) {
        MPI_Allreduce(in, out, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    free(in);
    free(out);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t threads[2];
    int provided;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Barrier(MPI_COMM_WORLD); /* the channel settled: the race is in the schedule */
    pthread_barrier_init(&start, NULL, 2);
    for (int t = 0; t < 2; ++t) {
        pthread_create(&threads[t], NULL, allreduce, NULL);
    }
    for (int t = 0; t < 2; ++t) {
        pthread_join(threads[t], NULL);
    }
    printf("tsan_bait: no report\n");
    MPI_Finalize();
    return 0;
}
