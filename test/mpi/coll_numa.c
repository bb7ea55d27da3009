/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_numa: the collectives that run in NUMA stages (reduce, bcast, allreduce,
 * barrier, allgather), checked against references on communicators whose NUMA
 * domains are consecutive ranks and on ones where they are not (an
 * interleaving of the world's even and odd ranks, a rotation), and the MPI_T
 * counter coll_async_numa_staged, which must move by one per call or not at all.
 *
 *   mpirun -np N --mca coll_async_virtual_numa D coll_numa [--expect staged|flat]
 *
 * Counts of 1, 1000 and 70000 ints (the last more than a slot of the default
 * 256 KiB), roots first, middle and last, blocking and nonblocking, MPI_IN_PLACE
 * for allreduce. Rank 0 prints "coll_numa: N checks, F failures, numa_staged
 * moved by M of C calls"; the exit status is non-zero on any failure.
 */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pvar_counter.h"

static long checks, failures, calls;

#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        ++checks;                                                                  \
        if (!(cond)) {                                                             \
            char line_[256];                                                       \
            snprintf(line_, sizeof(line_), __VA_ARGS__);                           \
            fprintf(stderr, "coll_numa: rank %d: FAIL %s\n", world_rank(), line_); \
            ++failures;                                                            \
        }                                                                          \
    } while (0)

static int world_rank(void)
{
    int rank;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/* Rank r's i-th element. */
static int value(int r, int i)
{
    return r * 1000003 + i * 7 + 1;
}

static void fill(int *buf, int count, int r)
{
    for (int i = 0; i < count; ++i) {
        buf[i] = value(r, i);
    }
}

/* The i-th element of the sum over size ranks (ints wrap alike everywhere). */
static int sum(int size, int i)
{
    unsigned total = 0;

    for (int r = 0; r < size; ++r) {
        total += (unsigned) value(r, i);
    }
    return (int) total;
}

static int first_wrong_sum(const int *buf, int count, int size)
{
    for (int i = 0; i < count; ++i) {
        if (buf[i] != sum(size, i)) {
            return i;
        }
    }
    return -1;
}

static void reductions(MPI_Comm comm, const char *name, int count, int *a, int *b)
{
    int size, rank, wrong;
    MPI_Request request;

    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    fill(a, count, rank);
    MPI_Allreduce(a, b, count, MPI_INT, MPI_SUM, comm);
    wrong = first_wrong_sum(b, count, size);
    CHECK(wrong < 0, "%s allreduce count %d: element %d", name, count, wrong);
    MPI_Allreduce(MPI_IN_PLACE, a, count, MPI_INT, MPI_SUM, comm);
    wrong = first_wrong_sum(a, count, size);
    CHECK(wrong < 0, "%s allreduce in place count %d: element %d", name, count, wrong);
    fill(a, count, rank);
    MPI_Iallreduce(a, b, count, MPI_INT, MPI_SUM, comm, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    wrong = first_wrong_sum(b, count, size);
    CHECK(wrong < 0, "%s iallreduce count %d: element %d", name, count, wrong);
    calls += 3;
    for (int root = 0; root < size; root += size / 2 > 0 ? size / 2 : 1) {
        for (int at = 0; at < 2; ++at) {
            int r = 0 == at ? root : size - 1; /* also the last rank */

            memset(b, 0, sizeof(int) * (size_t) count);
            MPI_Reduce(a, b, count, MPI_INT, MPI_SUM, r, comm);
            wrong = rank == r ? first_wrong_sum(b, count, size) : -1;
            CHECK(wrong < 0, "%s reduce to %d count %d: element %d", name, r, count, wrong);
            ++calls;
        }
    }
}

static void copies(MPI_Comm comm, const char *name, int count, int *a, int *b)
{
    int size, rank;
    MPI_Request request;

    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    for (int root = 0; root < size; ++root) {
        if (rank == root) {
            fill(a, count, root);
        } else {
            memset(a, 0, sizeof(int) * (size_t) count);
        }
        if (root % 2) {
            MPI_Ibcast(a, count, MPI_INT, root, comm, &request);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
        } else {
            MPI_Bcast(a, count, MPI_INT, root, comm);
        }
        ++calls;
        for (int i = 0; i < count; ++i) {
            if (a[i] != value(root, i)) {
                CHECK(0, "%s bcast from %d count %d: element %d", name, root, count, i);
                break;
            }
        }
        ++checks;
    }
    fill(a, count, rank);
    MPI_Allgather(a, count, MPI_INT, b, count, MPI_INT, comm);
    ++calls;
    for (int r = 0; r < size; ++r) {
        int wrong = -1;

        for (int i = 0; i < count && wrong < 0; ++i) {
            wrong = b[(size_t) r * count + i] == value(r, i) ? -1 : i;
        }
        CHECK(wrong < 0, "%s allgather count %d: rank %d's block, element %d", name, count, r,
              wrong);
    }
    MPI_Barrier(comm);
    ++calls;
}

int main(int argc, char **argv)
{
    static const int counts[] = {1, 1000, 70000};
    const char *expect = "staged";
    int size, wrank, ignored;
    MPI_Comm comms[3];
    const char *names[3] = {"world", "interleaved", "rotated"};
    MPI_T_pvar_session session;
    MPI_T_pvar_handle staged;
    unsigned long long moved;
    long all[3], mine[3];
    int *a, *b;

    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "--expect") && i + 1 < argc) {
            expect = argv[++i];
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &ignored);
    MPI_T_pvar_session_create(&session);
    staged = pvar_counter(session, "coll_async_numa_staged", "coll_numa");
    comms[0] = MPI_COMM_WORLD;
    /* Even world ranks first, then the odd ones: pretend domains of consecutive
     * world ranks are no longer consecutive here. */
    MPI_Comm_split(MPI_COMM_WORLD, 0, (wrank % 2) * size + wrank, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, (wrank + 1) % size, &comms[2]);
    a = malloc(sizeof(int) * 70000 * (size_t) size);
    b = malloc(sizeof(int) * 70000 * (size_t) size);
    moved = pvar_counter_read(session, staged);
    for (int c = 0; c < 3; ++c) {
        for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); ++k) {
            reductions(comms[c], names[c], counts[k], a, b);
            copies(comms[c], names[c], counts[k], a, b);
        }
    }
    moved = pvar_counter_read(session, staged) - moved;
    if (0 == strcmp(expect, "staged")) {
        CHECK(moved == (unsigned long long) calls, "coll_async_numa_staged moved by %llu, expected %ld",
              moved, calls);
    } else {
        CHECK(0 == moved, "coll_async_numa_staged moved by %llu, expected 0", moved);
    }
    mine[0] = checks;
    mine[1] = failures;
    mine[2] = (long) moved;
    MPI_Reduce(mine, all, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 == wrank) {
        printf("coll_numa: %ld checks, %ld failures, numa_staged moved by %ld of %ld calls "
               "(all ranks)\n", all[0], all[1], all[2], calls * size);
    }
    free(a);
    free(b);
    MPI_Comm_free(&comms[1]);
    MPI_Comm_free(&comms[2]);
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
    MPI_Finalize();
    return 0 == failures ? 0 : 1;
}
