/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_outstanding: many nonblocking collectives in flight on several
 * communicators at once, completed every way MPI allows.
 *
 * Per round, on each of four communicators (world, a dup, a split, the reversed
 * world) it starts an iallreduce, ibcast, ireduce, iallgather,
 * ireduce_scatter_block and ibarrier, with sizes that take the small, slot and
 * single-copy paths in turn, all before completing any. The round then completes
 * them with MPI_Waitall, MPI_Waitany, MPI_Testall, MPI_Test or MPI_Waitsome, and
 * in some rounds frees the ibarrier request while it is still active
 * (MPI_Request_free). Every result is checked against a reference, and the
 * component's counters must show every call taken natively.
 */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pvar_counter.h"

#define ROUNDS 24
#define COMMS 4
#define OPS 6 /* per communicator and round */

enum completion { WAITALL, WAITANY, TESTALL, TEST, WAITSOME, NUM_COMPLETIONS };

/* One started collective: its buffers and the check to run once it completes. */
struct pending {
    MPI_Comm comm;
    int rank, size, root, round;
    size_t count;
    long *in, *out;
    void (*verify)(struct pending *p);
};

static int world_rank;
static long failures;

static const size_t counts[] = {3, 3000, 100000}; /* small, slots, single copy */

static long value(int rank, size_t i, int round)
{
    return (long) (rank + 1) * 1000 + (long) (i % 977) + round;
}

static void fail(const struct pending *p, const char *what, size_t i, long got, long want)
{
    if (failures++ < 20) {
        fprintf(stderr, "coll_outstanding: rank %d round %d comm size %d: %s[%zu] = %ld, "
                "expected %ld\n", world_rank, p->round, p->size, what, i, got, want);
    }
}

static void verify_allreduce(struct pending *p)
{
    for (size_t i = 0; i < p->count; ++i) {
        long want = 0;
        for (int r = 0; r < p->size; ++r) {
            want += value(r, i, p->round);
        }
        if (p->out[i] != want) {
            fail(p, "iallreduce", i, p->out[i], want);
            return;
        }
    }
}

static void verify_bcast(struct pending *p)
{
    for (size_t i = 0; i < p->count; ++i) {
        if (p->in[i] != value(p->root, i, p->round)) {
            fail(p, "ibcast", i, p->in[i], value(p->root, i, p->round));
            return;
        }
    }
}

static void verify_reduce(struct pending *p)
{
    if (p->rank != p->root) {
        return;
    }
    for (size_t i = 0; i < p->count; ++i) {
        long want = value(p->size - 1, i, p->round); /* MPI_MAX */
        if (p->out[i] != want) {
            fail(p, "ireduce", i, p->out[i], want);
            return;
        }
    }
}

static void verify_allgather(struct pending *p)
{
    for (int r = 0; r < p->size; ++r) {
        for (size_t i = 0; i < p->count; ++i) {
            if (p->out[r * p->count + i] != value(r, i, p->round)) {
                fail(p, "iallgather", r * p->count + i, p->out[r * p->count + i],
                     value(r, i, p->round));
                return;
            }
        }
    }
}

static void verify_reduce_scatter_block(struct pending *p)
{
    for (size_t i = 0; i < p->count; ++i) {
        long want = 0;
        for (int r = 0; r < p->size; ++r) {
            want += value(r, p->rank * p->count + i, p->round);
        }
        if (p->out[i] != want) {
            fail(p, "ireduce_scatter_block", i, p->out[i], want);
            return;
        }
    }
}

static void verify_nothing(struct pending *p)
{
    (void) p;
}

static long *filled(size_t n, int rank, int round)
{
    long *buf = malloc(n * sizeof(*buf));

    for (size_t i = 0; i < n; ++i) {
        buf[i] = value(rank, i, round);
    }
    return buf;
}

/* Starts the six collectives of one round on one communicator. */
static void start(MPI_Comm comm, int round, int salt, struct pending *p, MPI_Request *req)
{
    int rank, size;
    size_t n = counts[(round + salt) % 3];

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int k = 0; k < OPS; ++k) {
        p[k] = (struct pending){.comm = comm, .rank = rank, .size = size, .round = round,
                                .count = n, .root = (round + k) % size};
    }

    p[0].in = filled(n, rank, round);
    p[0].out = calloc(n, sizeof(long));
    p[0].verify = verify_allreduce;
    MPI_Iallreduce(p[0].in, p[0].out, (int) n, MPI_LONG, MPI_SUM, comm, &req[0]);

    p[1].in = rank == p[1].root ? filled(n, rank, round) : calloc(n, sizeof(long));
    p[1].verify = verify_bcast;
    MPI_Ibcast(p[1].in, (int) n, MPI_LONG, p[1].root, comm, &req[1]);

    p[2].in = filled(n, rank, round);
    p[2].out = calloc(n, sizeof(long));
    p[2].verify = verify_reduce;
    MPI_Ireduce(p[2].in, p[2].out, (int) n, MPI_LONG, MPI_MAX, p[2].root, comm, &req[2]);

    p[3].in = filled(n, rank, round);
    p[3].out = calloc(n * size, sizeof(long));
    p[3].verify = verify_allgather;
    MPI_Iallgather(p[3].in, (int) n, MPI_LONG, p[3].out, (int) n, MPI_LONG, comm, &req[3]);

    p[4].in = filled(n * size, rank, round);
    p[4].out = calloc(n, sizeof(long));
    p[4].verify = verify_reduce_scatter_block;
    MPI_Ireduce_scatter_block(p[4].in, p[4].out, (int) n, MPI_LONG, MPI_SUM, comm, &req[4]);

    p[5].verify = verify_nothing;
    MPI_Ibarrier(comm, &req[5]);
    /* Freeing an active request is legal; the barrier still completes. */
    if (0 == round % 4) {
        MPI_Request_free(&req[5]);
    }
}

static void complete(enum completion how, int n, MPI_Request *req)
{
    int done = 0, index, flag, outcount, *indices = malloc(n * sizeof(int));

    switch (how) {
    case WAITALL:
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        break;
    case WAITANY:
        do {
            MPI_Waitany(n, req, &index, MPI_STATUS_IGNORE);
        } while (MPI_UNDEFINED != index);
        break;
    case TESTALL:
        do {
            MPI_Testall(n, req, &flag, MPI_STATUSES_IGNORE);
        } while (!flag);
        break;
    case TEST:
        for (int i = n - 1; i >= 0; --i) {
            do {
                MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE);
            } while (!flag);
        }
        break;
    default:
        while (done < n) {
            MPI_Waitsome(n, req, &outcount, indices, MPI_STATUSES_IGNORE);
            if (MPI_UNDEFINED == outcount) {
                break;
            }
            done += outcount;
        }
    }
    for (int i = 0; i < n; ++i) {
        if (MPI_REQUEST_NULL != req[i]) {
            fail(&(struct pending){.round = -1}, "request not freed", (size_t) i, 0, 0);
        }
    }
    free(indices);
}

int main(int argc, char **argv)
{
    static const char *const names[] = {"iallreduce", "ibcast", "ireduce", "iallgather",
                                        "ireduce_scatter_block", "ibarrier"};
    struct pending p[COMMS * OPS];
    MPI_Request req[COMMS * OPS];
    MPI_Comm comms[COMMS];
    MPI_T_pvar_session session;
    MPI_T_pvar_handle native[OPS];
    int provided, world_size;
    long total;

    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    /* Same group, new communicators: Open MPI never hands ibcast on a
     * single-process communicator to coll, so every one spans the job. */
    MPI_Comm_split(MPI_COMM_WORLD, 0, world_rank, &comms[2]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &comms[3]);

    MPI_T_pvar_session_create(&session);
    for (int k = 0; k < OPS; ++k) {
        char name[64];
        snprintf(name, sizeof(name), "coll_async_%s_native", names[k]);
        native[k] = pvar_counter(session, name, "coll_outstanding");
    }

    for (int round = 0; round < ROUNDS; ++round) {
        for (int c = 0; c < COMMS; ++c) {
            start(comms[c], round, c, &p[c * OPS], &req[c * OPS]);
        }
        complete((enum completion) (round % NUM_COMPLETIONS), COMMS * OPS, req);
        /* A blocking collective after the freed ibarrier: ordered behind it. */
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < COMMS * OPS; ++i) {
            p[i].verify(&p[i]);
            free(p[i].in);
            free(p[i].out);
        }
    }

    for (int k = 0; k < OPS; ++k) {
        unsigned long long moved = pvar_counter_read(session, native[k]);
        if (moved != (unsigned long long) ROUNDS * COMMS) {
            fail(&(struct pending){.round = -1}, names[k], 0, (long) moved, ROUNDS * COMMS);
        }
        MPI_T_pvar_handle_free(session, &native[k]);
    }
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();

    for (int c = 1; c < COMMS; ++c) {
        MPI_Comm_free(&comms[c]);
    }
    MPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (0 == world_rank) {
        printf("coll_outstanding: %d ranks, %d rounds x %d communicators x %d collectives, "
               "%ld failures\n", world_size, ROUNDS, COMMS, OPS, total);
    }
    MPI_Finalize();
    return 0 == total ? 0 : 1;
}
