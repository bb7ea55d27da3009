/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * setup_time - what MPI set-up costs: MPI_Init, MPI_Comm_dup and MPI_Comm_split,
 * and the first collective on MPI_COMM_WORLD (where transports between nodes
 * open their connections). bench/compare_setup runs it under several coll
 * selections and prints the table.
 *
 * Each figure is the slowest rank's: a collective set-up is as slow as its
 * slowest member. Prints one line:
 *   setup_time: ranks N init_ms X first_barrier_ms X dup_us X split_us X
 *
 *   setup_time [-n COUNT]    communicators created and freed per kind (default 20)
 */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* Seconds per communicator made by dup (split == 0) or split, created count at
 * a time and then freed; the freeing is not timed. */
static double time_creation(int count, int split)
{
    MPI_Comm *comms = malloc(sizeof(*comms) * (size_t) count);
    int rank;
    double start;

    if (NULL == comms) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    start = now_s();
    for (int i = 0; i < count; ++i) {
        if (split) {
            MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &comms[i]);
        } else {
            MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
        }
    }
    start = (now_s() - start) / count;
    for (int i = 0; i < count; ++i) {
        MPI_Comm_free(&comms[i]);
    }
    free(comms);
    return start;
}

int main(int argc, char **argv)
{
    double start = now_s(), mine[4], slowest[4];
    int count = 20, opt, rank, size;

    while ((opt = getopt(argc, argv, "n:")) != -1) {
        if ('n' != opt || (count = atoi(optarg)) < 1) {
            fprintf(stderr, "usage: setup_time [-n COUNT]\n");
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    mine[0] = now_s() - start;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    start = now_s();
    MPI_Barrier(MPI_COMM_WORLD);
    mine[1] = now_s() - start;
    mine[2] = time_creation(count, 0);
    mine[3] = time_creation(count, 1);
    MPI_Reduce(mine, slowest, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("setup_time: ranks %d init_ms %.1f first_barrier_ms %.2f dup_us %.0f "
               "split_us %.0f\n",
               size, 1e3 * slowest[0], 1e3 * slowest[1], 1e6 * slowest[2], 1e6 * slowest[3]);
    }
    MPI_Finalize();
    return 0;
}
