/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * bench/tune: the families it measures, each as one call with known inputs and a
 * reference for its result. Reductions sum ints (exact in any order); the others
 * move bytes whose value depends on the sending rank and the place, so a block
 * in the wrong place or from the wrong rank fails the check.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune.h"

const struct tune_family_info tune_families[TUNE_NUM_FAMILIES] = {
    [TUNE_ALLREDUCE] = {"allreduce", COLL_ASYNC_FAMILY_ALLREDUCE, 3,
                        {COLL_ASYNC_ALG_RING, COLL_ASYNC_ALG_RECURSIVE_DOUBLING,
                         COLL_ASYNC_ALG_RABENSEIFNER},
                        true},
    [TUNE_BCAST] = {"bcast", COLL_ASYNC_FAMILY_BCAST, 2,
                    {COLL_ASYNC_ALG_BINOMIAL, COLL_ASYNC_ALG_SCATTER_ALLGATHER}, true},
    [TUNE_ALLGATHER] = {"allgather", COLL_ASYNC_FAMILY_ALLGATHER, 2,
                        {COLL_ASYNC_ALG_RING, COLL_ASYNC_ALG_RECURSIVE_DOUBLING}, true},
    [TUNE_ALLGATHERV] = {"allgatherv", COLL_ASYNC_FAMILY_ALLGATHERV, 2,
                         {COLL_ASYNC_ALG_RING, COLL_ASYNC_ALG_RECURSIVE_DOUBLING}, false},
    [TUNE_REDUCE_SCATTER] = {"reduce_scatter", COLL_ASYNC_FAMILY_REDUCE_SCATTER, 3,
                             {COLL_ASYNC_ALG_RING, COLL_ASYNC_ALG_RECURSIVE_DOUBLING,
                              COLL_ASYNC_ALG_RABENSEIFNER},
                             false},
    [TUNE_REDUCE_SCATTER_BLOCK] = {"reduce_scatter_block", COLL_ASYNC_FAMILY_REDUCE_SCATTER_BLOCK,
                                   3,
                                   {COLL_ASYNC_ALG_RING, COLL_ASYNC_ALG_RECURSIVE_DOUBLING,
                                    COLL_ASYNC_ALG_RABENSEIFNER},
                                   false},
};

static bool reduces(enum tune_family family)
{
    return TUNE_ALLREDUCE == family || TUNE_REDUCE_SCATTER == family
           || TUNE_REDUCE_SCATTER_BLOCK == family;
}

static bool gathers(enum tune_family family)
{
    return TUNE_ALLGATHER == family || TUNE_ALLGATHERV == family;
}

struct tune_shape tune_shape_of(enum tune_family family, size_t nominal, int ranks)
{
    struct tune_shape s = {0};
    size_t n = (size_t) ranks;

    if (TUNE_ALLREDUCE == family) {
        s.count = nominal / sizeof(int) > 0 ? nominal / sizeof(int) : 1;
        s.bytes = s.send_bytes = s.recv_bytes = s.count * sizeof(int);
    } else if (reduces(family)) { /* each rank's part equal, the whole vector the size */
        size_t per = nominal / sizeof(int) / n > 0 ? nominal / sizeof(int) / n : 1;

        s.count = per * n;
        s.bytes = s.send_bytes = s.count * sizeof(int);
        s.recv_bytes = per * sizeof(int);
    } else if (gathers(family)) { /* the whole result the size, a block per rank */
        size_t block = nominal / n > 0 ? nominal / n : 1;

        s.count = block;
        s.send_bytes = block;
        s.bytes = s.recv_bytes = block * n;
    } else {
        s.bytes = s.count = s.recv_bytes = nominal > 0 ? nominal : 1;
    }
    return s;
}

int tune_buffers_init(struct tune_buffers *b, size_t bytes, int ranks)
{
    size_t floor_bytes = 4 * sizeof(int) * (size_t) ranks;

    b->bytes = (bytes > floor_bytes ? bytes : floor_bytes) + 64;
    b->send = aligned_alloc(64, (b->bytes + 63) / 64 * 64);
    b->recv = aligned_alloc(64, (b->bytes + 63) / 64 * 64);
    b->counts = calloc((size_t) ranks, sizeof(int));
    b->displs = calloc((size_t) ranks, sizeof(int));
    if (NULL == b->send || NULL == b->recv || NULL == b->counts || NULL == b->displs) {
        tune_buffers_free(b);
        return -1;
    }
    memset(b->send, 0, b->bytes);
    memset(b->recv, 0, b->bytes);
    return 0;
}

void tune_buffers_free(struct tune_buffers *b)
{
    free(b->send);
    free(b->recv);
    free(b->counts);
    free(b->displs);
    *b = (struct tune_buffers){0};
}

static int ranks_of(MPI_Comm comm)
{
    int n;

    MPI_Comm_size(comm, &n);
    return n;
}

static int rank_of(MPI_Comm comm)
{
    int r;

    MPI_Comm_rank(comm, &r);
    return r;
}

int tune_call(enum tune_family family, const struct tune_shape *shape, struct tune_buffers *b,
              MPI_Comm comm)
{
    int count = (int) shape->count;

    switch (family) {
    case TUNE_ALLREDUCE:
        return MPI_Allreduce(b->send, b->recv, count, MPI_INT, MPI_SUM, comm);
    case TUNE_BCAST:
        return MPI_Bcast(b->recv, count, MPI_CHAR, 0, comm);
    case TUNE_ALLGATHER:
        return MPI_Allgather(b->send, count, MPI_CHAR, b->recv, count, MPI_CHAR, comm);
    case TUNE_ALLGATHERV:
        return MPI_Allgatherv(b->send, count, MPI_CHAR, b->recv, b->counts, b->displs, MPI_CHAR,
                              comm);
    case TUNE_REDUCE_SCATTER:
        return MPI_Reduce_scatter(b->send, b->recv, b->counts, MPI_INT, MPI_SUM, comm);
    case TUNE_REDUCE_SCATTER_BLOCK:
        return MPI_Reduce_scatter_block(b->send, b->recv, (int) (shape->recv_bytes / sizeof(int)),
                                        MPI_INT, MPI_SUM, comm);
    default:
        return MPI_ERR_ARG;
    }
}

/* The inputs: rank r's element i of a reduction is (r + 1) (i % 13 + 1), so the
 * sum is (i % 13 + 1) n (n + 1) / 2; rank r's byte i of a block r + ... */
static int reduce_input(int rank, size_t i)
{
    return (rank + 1) * (int) (i % 13 + 1);
}

static int reduce_expected(int ranks, size_t i)
{
    return (int) (i % 13 + 1) * ranks * (ranks + 1) / 2;
}

static unsigned char block_byte(int rank, size_t i)
{
    return (unsigned char) ((size_t) rank * 31 + i * 7 + 1);
}

static unsigned char bcast_byte(size_t i)
{
    return (unsigned char) (i * 7 + 3);
}

void tune_fill(enum tune_family family, const struct tune_shape *shape, struct tune_buffers *b,
               MPI_Comm comm)
{
    int rank = rank_of(comm), ranks = ranks_of(comm);
    int *in = (int *) b->send;

    memset(b->recv, 0, shape->recv_bytes);
    if (reduces(family)) {
        for (size_t i = 0; i < shape->count; ++i) {
            in[i] = reduce_input(rank, i);
        }
        for (int r = 0; r < ranks; ++r) {
            b->counts[r] = (int) (shape->recv_bytes / sizeof(int));
        }
    } else if (gathers(family)) {
        for (size_t i = 0; i < shape->count; ++i) {
            b->send[i] = (char) block_byte(rank, i);
        }
        for (int r = 0; r < ranks; ++r) {
            b->counts[r] = (int) shape->count;
            b->displs[r] = r * (int) shape->count;
        }
    } else if (0 == rank) {
        for (size_t i = 0; i < shape->count; ++i) {
            b->recv[i] = (char) bcast_byte(i);
        }
    }
}

bool tune_check(enum tune_family family, const struct tune_shape *shape,
                const struct tune_buffers *b, MPI_Comm comm, char *why, size_t len)
{
    int rank = rank_of(comm), ranks = ranks_of(comm);
    const int *out = (const int *) b->recv;
    const unsigned char *bytes = (const unsigned char *) b->recv;

    if (TUNE_ALLREDUCE == family) {
        for (size_t i = 0; i < shape->count; ++i) {
            if (out[i] != reduce_expected(ranks, i)) {
                snprintf(why, len, "element %zu is %d, expected %d", i, out[i],
                         reduce_expected(ranks, i));
                return false;
            }
        }
    } else if (reduces(family)) {
        size_t per = shape->recv_bytes / sizeof(int);

        for (size_t j = 0; j < per; ++j) {
            size_t i = (size_t) rank * per + j;

            if (out[j] != reduce_expected(ranks, i)) {
                snprintf(why, len, "element %zu of its part (%zu of the vector) is %d, expected %d",
                         j, i, out[j], reduce_expected(ranks, i));
                return false;
            }
        }
    } else if (gathers(family)) {
        for (int r = 0; r < ranks; ++r) {
            for (size_t i = 0; i < shape->count; ++i) {
                unsigned char got = bytes[(size_t) r * shape->count + i];

                if (got != block_byte(r, i)) {
                    snprintf(why, len, "byte %zu of rank %d's block is %u, expected %u", i, r,
                             got, block_byte(r, i));
                    return false;
                }
            }
        }
    } else {
        for (size_t i = 0; i < shape->count; ++i) {
            if (bytes[i] != bcast_byte(i)) {
                snprintf(why, len, "byte %zu is %u, expected %u", i, bytes[i], bcast_byte(i));
                return false;
            }
        }
    }
    return true;
}

enum coll_async_alg tune_auto_pick(enum tune_family family, size_t bytes, size_t count, int ranks,
                                   int nodes, bool *by_node)
{
    const struct tune_family_info *f = &tune_families[family];
    size_t block = gathers(family) ? bytes / (size_t) ranks : count / (size_t) ranks * sizeof(int);

    *by_node = true;
    if (TUNE_ALLGATHERV == family || TUNE_REDUCE_SCATTER == family
        || TUNE_REDUCE_SCATTER_BLOCK == family) {
        *by_node = coll_async_decision_aggregated(f->family, COLL_ASYNC_ALG_AUTO, block, ranks,
                                                  nodes);
    }
    /* reduce_scatter by node on ranks in node order: the leaders' ring
     * reduce_scatter, which the file's `ring` names (coll_async_hier_v.c). */
    if (TUNE_REDUCE_SCATTER == family || TUNE_REDUCE_SCATTER_BLOCK == family) {
        return COLL_ASYNC_ALG_RING;
    }
    return coll_async_decision_between(f->family, COLL_ASYNC_ALG_AUTO, bytes, count, nodes);
}
