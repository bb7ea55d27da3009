/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: blocks crossing between pairs of ranks over the mapper. See
 * coll_async_pairs.h.
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
    unsigned step; /* pairs a block a rank sends itself with its receive */
    bool receive;
    const struct coll_async_block *block;
    struct coll_async_block owned; /* the block, for lists the caller adds */
    char *packed;                  /* the bytes sent or received, when not the block's own */
};

struct pairs {
    struct coll_async_exchange *exchange; /* NULL: a list */
    struct coll_async_peers *peers;
    const char *name;
    int rank; /* this process's in the communicator, for messages */
    int self; /* this process's index among the plan's ranks; -1: none */
    int count, capacity;
    int pending; /* posted and not complete */
    struct coll_async_failure failure;
    struct crossing crossing[];
};

static bool carries_data(const struct coll_async_block *block)
{
    return NULL != block->dtype && 0 != block->bytes;
}

/* The crossing of block, or NULL when it carries nothing. */
static struct crossing *add(struct pairs *pairs, int rank, unsigned step, bool receive,
                            const struct coll_async_block *block)
{
    struct crossing *c = &pairs->crossing[pairs->count];

    if (!carries_data(block)) {
        return NULL;
    }
    *c = (struct crossing){
        .pairs = pairs, .rank = rank, .step = step, .receive = receive, .block = block};
    ++pairs->count;
    return c;
}

static struct pairs *pairs_new(int capacity, struct coll_async_peers *peers, const char *name,
                               int rank, int self)
{
    struct pairs *pairs = calloc(1, sizeof(*pairs) + (size_t) capacity * sizeof(struct crossing));

    if (NULL != pairs) {
        pairs->peers = peers;
        pairs->name = name;
        pairs->rank = rank;
        pairs->self = self;
        pairs->capacity = capacity;
    }
    return pairs;
}

/* The block this rank sends to rank, or NULL. */
static const struct coll_async_block *sent_to(const struct coll_async_exchange *plan, int rank)
{
    if (plan->personal) {
        return &plan->send[rank];
    }
    return plan->readers_first <= rank && rank <= plan->readers_last ? &plan->send[0] : NULL;
}

void *coll_async_pairs_new(struct coll_async_exchange *exchange, struct coll_async_peers *peers,
                           const char *name, int rank)
{
    struct pairs *pairs = pairs_new(2 * exchange->nranks, peers, name, rank, exchange->rank);

    if (NULL == pairs) {
        coll_async_exchange_free(exchange);
        return NULL;
    }
    pairs->exchange = exchange;
    /* Receives first, so that a peer's data finds its buffer posted. */
    for (int peer = 0; peer < exchange->nranks; ++peer) {
        if (peer != exchange->rank) {
            add(pairs, peer, 0, true, &exchange->recv[peer]);
        }
    }
    for (int peer = 0; peer < exchange->nranks; ++peer) {
        const struct coll_async_block *block = sent_to(exchange, peer);

        if (peer != exchange->rank && NULL != block) {
            add(pairs, peer, 0, false, block);
        }
    }
    return pairs;
}

void *coll_async_pairs_new_list(int capacity, struct coll_async_peers *peers, const char *name,
                                int rank)
{
    return pairs_new(capacity, peers, name, rank, rank);
}

int coll_async_pairs_add(void *opaque, int rank, unsigned step, bool receive, const void *base,
                         size_t count, struct ompi_datatype_t *dtype)
{
    struct pairs *pairs = opaque;
    struct coll_async_block block;
    struct crossing *c;

    if (pairs->count == pairs->capacity) {
        return OMPI_ERR_BAD_PARAM;
    }
    coll_async_block_set(&block, base, count, dtype);
    c = add(pairs, rank, step, receive, &block);
    if (NULL == c) {
        coll_async_block_release(&block);
        return OMPI_SUCCESS;
    }
    c->owned = block;
    c->block = &c->owned;
    return OMPI_SUCCESS;
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

    if (NULL == pairs) {
        return;
    }
    release_packed(pairs);
    for (int i = 0; i < pairs->count; ++i) {
        coll_async_block_release(&pairs->crossing[i].owned);
    }
    coll_async_exchange_free(pairs->exchange);
    free(pairs);
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

/* Packs what c sends where it must (not contiguous, or sent from where
 * something is received: an exchange in place), or makes room to receive. */
static int stage(struct pairs *pairs, struct crossing *c)
{
    bool in_place = NULL != pairs->exchange && pairs->exchange->in_place;
    const struct coll_async_block *block = c->block;

    if (NULL != block->contiguous && (c->receive || !in_place)) {
        return OMPI_SUCCESS;
    }
    c->packed = malloc(block->bytes);
    if (NULL == c->packed) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    return c->receive ? OMPI_SUCCESS : coll_async_block_pack(block, 0, c->packed, block->bytes);
}

/* A block a rank sends itself (a neighbour of its own) is copied to the
 * receive of the same step. */
static int copy_to_self(struct pairs *pairs, const struct crossing *send)
{
    for (int i = 0; i < pairs->count; ++i) {
        const struct crossing *c = &pairs->crossing[i];

        if (c->receive && c->rank == pairs->self && c->step == send->step) {
            return coll_async_block_copy(send->block, c->block);
        }
    }
    return OMPI_ERR_BAD_PARAM;
}

static int post(struct pairs *pairs, struct crossing *c)
{
    void *data = NULL != c->packed ? c->packed : c->block->contiguous;
    uint32_t peer = pairs->peers->id[c->rank];
    struct coll_async_net *net = pairs->peers->net;
    uint64_t tag = coll_async_peers_pair_tag(pairs->peers, c->rank, c->receive);

    c->transfer.complete = crossed;
    c->transfer.context = c;
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
    return NULL != pairs->exchange ? coll_async_exchange_finish(pairs->exchange) : OMPI_SUCCESS;
}

/* Records that crossing c failed with rc; the caller posts no more: what is
 * posted completes, the peers' transfers fail or wait at their end. */
static void failed(struct pairs *pairs, const struct crossing *c, int rc)
{
    char why[96];

    snprintf(why, sizeof(why), "%s a block with rank %d failed (%d)",
             c->receive ? "receiving" : "sending", c->rank, rc);
    fail(pairs, why);
}

void coll_async_pairs_begin(struct coll_async_op *op)
{
    struct pairs *pairs = op->plan;
    int rc;

    pairs->failure.topic = NULL;
    op->failure = NULL;
    op->step = wait_then_finish;
    pairs->pending = 0;
    /* Everything sent is packed before anything is received: a transport may
     * fill a receive as it is posted, and in place that is what is sent. */
    for (int i = 0; i < pairs->count; ++i) {
        struct crossing *c = &pairs->crossing[i];

        rc = c->rank == pairs->self ? OMPI_SUCCESS : stage(pairs, c);
        if (OMPI_SUCCESS != rc) {
            failed(pairs, c, rc);
            return;
        }
    }
    for (int i = 0; i < pairs->count; ++i) {
        struct crossing *c = &pairs->crossing[i];

        if (c->rank == pairs->self) {
            rc = c->receive ? OMPI_SUCCESS : copy_to_self(pairs, c);
        } else {
            ++pairs->pending;
            rc = post(pairs, c);
            pairs->pending -= 0 != rc;
        }
        if (OMPI_SUCCESS != rc) {
            failed(pairs, c, rc);
            return;
        }
    }
}
