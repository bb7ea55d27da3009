/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: an exchange over the mapper. See coll_async_pairs.h.
 */

#include "ompi_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompi/constants.h"

#include "coll_async_failure.h"
#include "coll_async_pairs.h"

struct pairs;

/* One block crossing to or from one rank. */
struct crossing {
    struct coll_async_transfer transfer;
    struct pairs *pairs;
    int rank;
    bool receive;
    const struct coll_async_block *block;
    char *packed; /* the block's bytes when it is not contiguous */
};

struct pairs {
    struct coll_async_exchange *exchange;
    struct coll_async_peers *peers;
    const char *name;
    int rank;
    int count;   /* crossings of this collective */
    int pending; /* posted and not complete */
    struct coll_async_failure failure;
    struct crossing crossing[]; /* at most 2 per other rank */
};

void *coll_async_pairs_new(struct coll_async_exchange *exchange, struct coll_async_peers *peers,
                           const char *name, int rank)
{
    size_t most = 2 * (size_t) exchange->nranks;
    struct pairs *pairs = calloc(1, sizeof(*pairs) + most * sizeof(struct crossing));

    if (NULL == pairs) {
        coll_async_exchange_free(exchange);
        return NULL;
    }
    pairs->exchange = exchange;
    pairs->peers = peers;
    pairs->name = name;
    pairs->rank = rank;
    return pairs;
}

static void release_packed(struct pairs *pairs)
{
    for (int i = 0; i < pairs->count; ++i) {
        free(pairs->crossing[i].packed);
        pairs->crossing[i].packed = NULL;
    }
}

void coll_async_pairs_free(void *opaque)
{
    struct pairs *pairs = opaque;

    if (NULL != pairs) {
        release_packed(pairs);
        coll_async_exchange_free(pairs->exchange);
        free(pairs);
    }
}

static bool carries_data(const struct coll_async_block *block)
{
    return NULL != block->dtype && 0 != block->bytes;
}

/* The block this rank sends to rank, or NULL. */
static const struct coll_async_block *sent_to(const struct coll_async_exchange *plan, int rank)
{
    if (plan->personal) {
        return &plan->send[rank];
    }
    return plan->readers_first <= rank && rank <= plan->readers_last ? &plan->send[0] : NULL;
}

static void fail(struct pairs *pairs, const char *error)
{
    coll_async_failure_record(&pairs->failure, "network failed", pairs->name, pairs->rank, error);
}

static void crossed(struct coll_async_transfer *transfer)
{
    struct crossing *c = transfer->context;
    struct pairs *pairs = c->pairs;
    char why[160];

    --pairs->pending;
    if (0 != transfer->status) {
        fail(pairs, NULL != transfer->error ? transfer->error : "a transfer failed");
    } else if (c->receive && transfer->bytes != c->block->bytes) {
        snprintf(why, sizeof(why), "rank %d sent %zu bytes where %zu were expected", c->rank,
                 transfer->bytes, c->block->bytes);
        fail(pairs, why);
    } else if (c->receive && NULL != c->packed
               && OMPI_SUCCESS != coll_async_block_unpack(c->block, 0, c->packed, c->block->bytes)) {
        fail(pairs, "unpacking a received block failed");
    }
}

/* Adds the crossing of block to or from rank, packing what it sends. */
static int add(struct pairs *pairs, int rank, bool receive, const struct coll_async_block *block)
{
    struct crossing *c = &pairs->crossing[pairs->count++];

    *c = (struct crossing){.pairs = pairs, .rank = rank, .receive = receive, .block = block};
    c->transfer.complete = crossed;
    c->transfer.context = c;
    if (NULL != block->contiguous && (receive || !pairs->exchange->in_place)) {
        return OMPI_SUCCESS;
    }
    c->packed = malloc(block->bytes);
    if (NULL == c->packed) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    return receive ? OMPI_SUCCESS : coll_async_block_pack(block, 0, c->packed, block->bytes);
}

/* The crossings of this collective: receives first, so that a peer's data finds
 * its buffer posted. */
static int plan_crossings(struct pairs *pairs)
{
    const struct coll_async_exchange *plan = pairs->exchange;
    int rc = OMPI_SUCCESS;

    pairs->count = 0;
    for (int rank = 0; rank < plan->nranks && OMPI_SUCCESS == rc; ++rank) {
        if (rank != plan->rank && carries_data(&plan->recv[rank])) {
            rc = add(pairs, rank, true, &plan->recv[rank]);
        }
    }
    for (int rank = 0; rank < plan->nranks && OMPI_SUCCESS == rc; ++rank) {
        const struct coll_async_block *block = sent_to(plan, rank);

        if (rank != plan->rank && NULL != block && carries_data(block)) {
            rc = add(pairs, rank, false, block);
        }
    }
    return rc;
}

static int post(struct pairs *pairs, struct crossing *c, uint64_t tag)
{
    void *data = NULL != c->packed ? c->packed : c->block->contiguous;
    uint32_t peer = pairs->peers->id[c->rank];
    struct coll_async_net *net = pairs->peers->net;

    return c->receive
               ? coll_async_net_recv_bulk(net, peer, tag, data, c->block->bytes, &c->transfer)
               : coll_async_net_send_bulk(net, peer, tag, data, c->block->bytes, &c->transfer);
}

static int wait_then_finish(struct coll_async_op *op)
{
    struct pairs *pairs = op->plan;

    if (0 != pairs->pending) {
        return COLL_ASYNC_AGAIN;
    }
    release_packed(pairs);
    if (NULL != pairs->failure.topic) {
        op->failure = &pairs->failure;
        return OMPI_ERROR;
    }
    return coll_async_exchange_finish(pairs->exchange);
}

void coll_async_pairs_begin(struct coll_async_op *op)
{
    struct pairs *pairs = op->plan;
    uint64_t tag = coll_async_peers_next_tag(pairs->peers); /* every rank takes it */
    char why[96];
    int rc;

    pairs->failure.topic = NULL;
    op->failure = NULL;
    op->step = wait_then_finish;
    pairs->pending = 0;
    rc = plan_crossings(pairs);
    if (OMPI_SUCCESS != rc) {
        fail(pairs, "out of memory for the blocks of a collective");
        pairs->count = 0; /* post nothing: the peers' transfers fail at their end */
    }
    for (int i = 0; i < pairs->count; ++i) {
        ++pairs->pending;
        rc = post(pairs, &pairs->crossing[i], tag);
        if (0 != rc) {
            --pairs->pending;
            snprintf(why, sizeof(why), "posting a transfer with rank %d failed: %s",
                     pairs->crossing[i].rank, strerror(-rc));
            fail(pairs, why);
            break;
        }
    }
}
