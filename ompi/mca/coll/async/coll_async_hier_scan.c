/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: scan and exscan across nodes in node order (see coll_async_hier.h),
 * where each node's ranks are consecutive and the component has a kernel for the
 * operation (commutative: folds in any order agree).
 *
 * Each rank hands its input to the later ranks of its node over the node's
 * channel and folds what it received (its prefix inside the node); each node's
 * last rank, its tail, folds the node's total, the tails allgather their totals
 * between nodes, each tail folds those of the nodes before its own and hands that
 * to its node (its status first), and every rank folds it in. Node 0 needs none.
 *
 * The scratch: R received inputs, the nodes' totals, the prefix, of bytes each.
 */

#include "ompi_config.h"

#include <string.h>

#include "ompi/datatype/ompi_datatype.h"

#include "coll_async_hier_run.h"

/* The node's last rank, which holds its total (root: unused, as node_group()
 * asks). */
static int tail_of(const struct coll_async_hier *hier, int node, int root)
{
    (void) root;
    return hier->node_ranks[hier->node_first[node + 1] - 1];
}

/* Every rank's input to the later ranks of its node, into their scratch. */
static struct coll_async_exchange *node_exchange(const struct coll_async_hier *hier,
                                                 const void *input, char *received, size_t bytes)
{
    int local = coll_async_hier_node_size(hier, hier->node), me = hier->local_rank;
    struct coll_async_exchange *plan = coll_async_exchange_new(local, me, false, 0);

    if (NULL == plan) {
        return NULL;
    }
    plan->uniform = true;
    plan->readers_first = me + 1;
    plan->readers_last = local - 1;
    coll_async_block_borrow(&plan->send[0], input, bytes, &ompi_mpi_byte.dt);
    for (int i = 0; i < me; ++i) {
        coll_async_block_borrow(&plan->recv[i], received + (size_t) i * bytes, bytes,
                                &ompi_mpi_byte.dt);
    }
    return plan;
}

int coll_async_hier_plan_scan(struct run *run, const struct coll_async_sched *op, bool exclusive)
{
    struct coll_async_hier *hier = run->hier;
    size_t local = (size_t) coll_async_hier_node_size(hier, hier->node), bytes = op->bytes;
    const struct coll_async_leaders *group;
    int rc = node_group(run, tail_of, -1, NULL, &group); /* the nodes' tails */
    struct stage *stage;

    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    run->temp = coll_async_scratch_take((local + (size_t) hier->node_count + 1) * bytes);
    run->block_offset = malloc(sizeof(size_t) * (size_t) hier->node_count);
    run->block_bytes = malloc(sizeof(size_t) * (size_t) hier->node_count);
    if (NULL == run->temp || NULL == run->block_offset || NULL == run->block_bytes) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (int node = 0; node < hier->node_count; ++node) {
        run->block_offset[node] = (size_t) node * bytes;
        run->block_bytes[node] = bytes;
    }
    if (hier->has_local) {
        run->exchange[0] = node_exchange(hier, op->sbuf, run->temp, bytes);
        if (NULL == run->exchange[0]) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        add(run, STAGE_EXCHANGE)->count = 0;
    }
    stage = add(run, STAGE_SCAN);
    stage->count = COLL_ASYNC_HIER_SCAN_LOCAL;
    stage->to_user = exclusive;
    if (NULL != group) {
        add_net(run, COLL_ASYNC_FAMILY_ALLGATHER, group, 0, run->temp + local * bytes, 0,
                (size_t) hier->node_count * bytes);
        if (0 < hier->node) {
            add(run, STAGE_SCAN)->count = COLL_ASYNC_HIER_SCAN_PREFIX;
        }
    }
    if (0 == hier->node) {
        return OMPI_SUCCESS; /* nothing before it */
    }
    if (hier->has_local) {
        add_from_leader(run, tail_of(hier, hier->node, -1),
                        run->temp + (local + (size_t) hier->node_count) * bytes, bytes);
    }
    stage = add(run, STAGE_SCAN);
    stage->count = COLL_ASYNC_HIER_SCAN_FINISH;
    stage->to_user = exclusive;
    stage->needs_status = true;
    return OMPI_SUCCESS;
}

/* into = in[0] op ... op in[n - 1], in a stride of bytes. */
static void fold(const struct coll_async_sched *op, void *into, const char *in, int n)
{
    if (0 < n) {
        memcpy(into, in, op->bytes);
    }
    for (int i = 1; i < n; ++i) {
        coll_async_reduce(&op->reduction, into, in + (size_t) i * op->bytes, op->count);
    }
}

void coll_async_hier_scan_compute(struct run *run, const struct coll_async_sched *op,
                                  const struct stage *stage)
{
    struct coll_async_hier *hier = run->hier;
    int local = coll_async_hier_node_size(hier, hier->node), me = hier->local_rank;
    char *received = run->temp, *totals = received + (size_t) local * op->bytes;
    char *prefix = totals + (size_t) hier->node_count * op->bytes;
    bool exclusive = stage->to_user;

    switch (stage->count) {
    case COLL_ASYNC_HIER_SCAN_LOCAL:
        if (me == local - 1) { /* the tail: the node's total, before rbuf changes */
            fold(op, totals + (size_t) hier->node * op->bytes, received, me);
            if (0 < me) {
                coll_async_reduce(&op->reduction, totals + (size_t) hier->node * op->bytes,
                                  op->sbuf, op->count);
            } else {
                memcpy(totals + (size_t) hier->node * op->bytes, op->sbuf, op->bytes);
            }
        }
        if (!exclusive) {
            memmove(op->rbuf, op->sbuf, op->bytes);
            for (int i = 0; i < me; ++i) {
                coll_async_reduce(&op->reduction, op->rbuf, received + (size_t) i * op->bytes,
                                  op->count);
            }
        } else {
            fold(op, op->rbuf, received, me);
        }
        return;
    case COLL_ASYNC_HIER_SCAN_PREFIX:
        fold(op, prefix, totals, hier->node);
        return;
    default: /* FINISH */
        if (exclusive && 0 == me) {
            memcpy(op->rbuf, prefix, op->bytes);
        } else {
            coll_async_reduce(&op->reduction, op->rbuf, prefix, op->count);
        }
        return;
    }
}
