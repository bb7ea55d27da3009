/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * sanitizer_bait: an MPI program with a deliberate bug, built with the sanitizers,
 * so that test/run proves its sanitizer checks go red: by default rank 0 writes one
 * byte past a heap block (AddressSanitizer: heap-buffer-overflow); with "ubsan" it
 * overflows a signed int (UndefinedBehaviorSanitizer: runtime error).
 */

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        if (argc > 1 && 0 == strcmp(argv[1], "ubsan")) {
            volatile int big = INT_MAX;
            printf("sanitizer_bait: %d\n", big + argc); /* signed overflow */
        } else {
            volatile char *block = malloc(16);
            block[16] = 1; /* one past the end (volatile: a store before free() stays) */
            printf("sanitizer_bait: wrote past a block\n");
            free((char *) block);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
