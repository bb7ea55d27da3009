/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * bcast_loop: MPI_Bcast of SIZE bytes from rank 0, COUNT times, with nothing in
 * between, for tests that kill a rank while a bcast is under way: every moment of
 * the loop is inside a bcast. Every rank says "looping" after its first bcast; a
 * bcast that returns an error is said with the error's string, and aborts the job.
 * FORM: blocking (MPI_Bcast, the default), nonblocking (MPI_Ibcast then MPI_Wait:
 * the error comes from the wait), or nonblocking-multiple (the same under
 * MPI_THREAD_MULTIPLE).
 *
 *   bcast_loop [SIZE [COUNT [FORM]]]    (defaults: 262144 bytes, 100000 times, blocking)
 */

#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    size_t size = argc > 1 ? strtoul(argv[1], NULL, 10) : 262144;
    long count = argc > 2 ? strtol(argv[2], NULL, 10) : 100000;
    const char *form = argc > 3 ? argv[3] : "blocking";
    bool nonblocking = 0 == strncmp(form, "nonblocking", 11);
    char *buffer = malloc(size > 0 ? size : 1);
    int rank, rc, provided;

    if (0 == strcmp(form, "nonblocking-multiple")) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (NULL == buffer || size > (size_t) 1 << 30) {
        fprintf(stderr, "bcast_loop: SIZE up to 1 GiB\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    memset(buffer, 0 == rank ? 0x5a : 0, size);
    for (long i = 0; i < count; ++i) {
        if (nonblocking) {
            MPI_Request request;

            rc = MPI_Ibcast(buffer, (int) size, MPI_CHAR, 0, MPI_COMM_WORLD, &request);
            if (MPI_SUCCESS == rc) {
                rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
            }
        } else {
            rc = MPI_Bcast(buffer, (int) size, MPI_CHAR, 0, MPI_COMM_WORLD);
        }
        if (MPI_SUCCESS != rc) {
            char error[MPI_MAX_ERROR_STRING];
            int length;

            MPI_Error_string(rc, error, &length);
            printf("rank %d: MPI_%s %ld failed: %s\n", rank, nonblocking ? "Ibcast" : "Bcast", i,
                   error);
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (0 == i) {
            printf("rank %d: looping\n", rank);
            fflush(stdout);
        }
    }
    free(buffer);
    MPI_Finalize();
    return 0;
}
