/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_refcount: the datatypes' reference counts after many nonblocking collectives
 * across nodes (issue 26). Under MPI_THREAD_SINGLE Open MPI counts references
 * without atomics, so a retain or release on coll/async's progress thread races
 * with the application thread's own and loses counts; the hierarchical runs made
 * their node stages' blocks there, retaining the user's datatype and MPI_BYTE, and
 * a predefined datatype's count reached 0: "free(): invalid pointer". Rounds of
 * igather, iallgatherv, iscan and ialltoall of MPI_INT and of a vector type, posted
 * while the earlier ones run, then every request completed: the counts of MPI_INT,
 * MPI_BYTE and the vector must be where they started.
 *
 *   mpirun -np 4 --mca coll async --mca coll_async_virtual_nodes 2
 *          [--mca coll_async_gather_algorithm binomial ...] coll_refcount [ROUNDS]
 *
 * The count is read where Open MPI keeps it in a release build (after the class
 * pointer of the object every datatype starts with); a count that does not look
 * like one (a debug build) skips the program (exit 77).
 */

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define INFLIGHT 16
#define COUNT 64

static int32_t refcount(MPI_Datatype t)
{
    return ((volatile int32_t *) (void *) t)[2];
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 400, rank, size, drift = 0, any;
    MPI_Datatype vec, types[3];
    int32_t before[3];
    const char *names[3] = {"MPI_INT", "MPI_BYTE", "vector(MPI_INT)"};
    int *in, *out, *counts, *displs;
    MPI_Request req[INFLIGHT];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Type_vector(COUNT / 2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    types[0] = MPI_INT, types[1] = MPI_BYTE, types[2] = vec;
    in = calloc((size_t) COUNT * (size_t) size * 2, sizeof(int));
    out = calloc((size_t) COUNT * (size_t) size * 2 * INFLIGHT, sizeof(int));
    counts = calloc((size_t) size, sizeof(int));
    displs = calloc((size_t) size, sizeof(int));
    for (int i = 0; i < size; ++i) counts[i] = COUNT, displs[i] = i * COUNT;
    for (int t = 0; t < 3; ++t) {
        before[t] = refcount(types[t]);
        if (before[t] < 1 || before[t] > (1 << 24)) {
            if (0 == rank) printf("coll_refcount: skipped: no reference count where expected\n");
            MPI_Finalize();
            return 77;
        }
    }
    for (int r = 0; r < rounds; ++r) {
        for (int k = 0; k < INFLIGHT; ++k) {
            int *o = out + (size_t) k * COUNT * (size_t) size * 2, flag;
            switch ((r + k) % 5) {
            case 0: MPI_Igather(in, COUNT, MPI_INT, o, COUNT, MPI_INT, k % size, MPI_COMM_WORLD, &req[k]); break;
            case 1: MPI_Iallgatherv(in, COUNT, MPI_INT, o, counts, displs, MPI_INT, MPI_COMM_WORLD, &req[k]); break;
            case 2: MPI_Iscan(in, o, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[k]); break;
            case 3: MPI_Igather(in, 2, vec, o, 2, vec, k % size, MPI_COMM_WORLD, &req[k]); break;
            default: MPI_Ialltoall(in, COUNT, MPI_INT, o, COUNT, MPI_INT, MPI_COMM_WORLD, &req[k]); break;
            }
            MPI_Test(&req[k > 0 ? k - 1 : 0], &flag, MPI_STATUS_IGNORE);
        }
        MPI_Waitall(INFLIGHT, req, MPI_STATUSES_IGNORE);
    }
    for (int t = 0; t < 3; ++t) {
        int32_t now = refcount(types[t]);
        if (now != before[t]) {
            fprintf(stderr, "coll_refcount: rank %d: %s's reference count %d, was %d before %d "
                    "rounds\n", rank, names[t], (int) now, (int) before[t], rounds);
            drift = 1;
        }
    }
    MPI_Allreduce(&drift, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("coll_refcount: %d rounds of %d nonblocking collectives on %d ranks: %s\n", rounds,
               INFLIGHT, size, any ? "reference counts moved" : "reference counts unchanged");
    }
    MPI_Type_free(&vec);
    free(in), free(out), free(counts), free(displs);
    MPI_Finalize();
    return any;
}
