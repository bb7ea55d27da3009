/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: allgatherv and reduce_scatter(_block) across nodes, planned as
 * hierarchical runs (coll_async_hier.h), and their per-rank sizes.
 *
 * allgatherv with the nodes' counts: the node's ranks hand their blocks to its
 * first leader over the node's channel (the shared-memory exchange), packed in
 * node order; the leaders allgather the nodes' blocks, each node's the sum of
 * its ranks' (the per-node sizes of the hierarchical allgather); the leader
 * broadcasts the whole layout to its node, and every rank unpacks each rank's
 * block to where its displacement puts it, which also undoes the node order
 * where a node's ranks are not consecutive.
 *
 * reduce_scatter(_block), commutative operations with a kernel: the node's
 * ranks reduce the whole vector to its first leader (the shared-memory reduce),
 * the leaders reduce_scatter it between nodes (a ring, each node's part the sum
 * of its ranks' counts) where each node's ranks are consecutive, else allreduce
 * it, and each leader scatters its node's ranks' parts over the node's channel.
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "ompi/datatype/ompi_datatype.h"

#include "coll_async_hier_run.h"

struct coll_async_hier_v *coll_async_hier_run_v(void *opaque, bool with_recv)
{
    struct run *run = opaque;
    int n = run->hier->size;
    struct coll_async_hier_v *v = calloc(1, sizeof(*v));

    if (NULL == v) {
        return NULL;
    }
    run->v = v;
    v->nranks = n;
    v->bytes = calloc((size_t) n, sizeof(size_t));
    v->offset = calloc((size_t) n, sizeof(size_t));
    if (with_recv) {
        v->recv = calloc((size_t) n, sizeof(*v->recv));
    }
    if (NULL == v->bytes || NULL == v->offset || (with_recv && NULL == v->recv)) {
        return NULL; /* freed with the run */
    }
    return v;
}

void coll_async_hier_v_free(struct coll_async_hier_v *v)
{
    if (NULL == v) {
        return;
    }
    if (NULL != v->recv) {
        for (int rank = 0; rank < v->nranks; ++rank) {
            coll_async_block_release(&v->recv[rank]);
        }
    }
    coll_async_block_release(&v->mine);
    free(v->recv);
    free(v->bytes);
    free(v->offset);
    free(v);
}

void coll_async_hier_v_by_node(const struct coll_async_hier *hier, struct coll_async_hier_v *v)
{
    size_t at = 0;

    for (int i = 0; i < hier->size; ++i) {
        int rank = hier->node_ranks[i];

        v->offset[rank] = at;
        at += v->bytes[rank];
    }
}

static void bytes_at(struct coll_async_block *block, char *at, size_t bytes)
{
    coll_async_block_borrow(block, at, bytes, &ompi_mpi_byte.dt);
}

/* The rank at index j of this node. */
static int local_rank_at(const struct coll_async_hier *hier, int j)
{
    return hier->node_ranks[hier->node_first[hier->node] + j];
}

/* The node's blocks to its leader, into the layout at by_node. */
static struct coll_async_exchange *gather_to_leader(const struct run *run, int leader,
                                                    char *by_node)
{
    const struct coll_async_hier *hier = run->hier;
    const struct coll_async_hier_v *v = run->v;
    int nranks = coll_async_hier_node_size(hier, hier->node);
    int leader_local = coll_async_hier_local_index(hier, leader);
    struct coll_async_exchange *plan = coll_async_exchange_new(nranks, hier->local_rank, false, 0);

    if (NULL == plan) {
        return NULL;
    }
    plan->readers_first = plan->readers_last = leader_local;
    if (hier->rank != leader) {
        coll_async_block_borrow(&plan->send[0], v->mine.base, v->mine.count, v->mine.dtype);
        return plan;
    }
    for (int j = 0; j < nranks; ++j) {
        int rank = local_rank_at(hier, j);
        char *at = by_node + v->offset[rank];

        if (j != hier->local_rank) {
            bytes_at(&plan->recv[j], at, v->bytes[rank]);
        } else {
            coll_async_block_borrow(&plan->self_from, v->mine.base, v->mine.count, v->mine.dtype);
            bytes_at(&plan->self_to, at, v->bytes[rank]);
        }
    }
    return plan;
}

/* The leader's parts of the vector at result to the node's ranks' rbuf. */
static struct coll_async_exchange *scatter_from_leader(const struct run *run, int leader,
                                                       char *result, void *rbuf)
{
    const struct coll_async_hier *hier = run->hier;
    const struct coll_async_hier_v *v = run->v;
    int nranks = coll_async_hier_node_size(hier, hier->node);
    int leader_local = coll_async_hier_local_index(hier, leader);
    struct coll_async_exchange *plan = coll_async_exchange_new(nranks, hier->local_rank, true, 0);

    if (NULL == plan) {
        return NULL;
    }
    if (hier->rank != leader) {
        bytes_at(&plan->recv[leader_local], rbuf, v->bytes[hier->rank]);
        return plan;
    }
    for (int j = 0; j < nranks; ++j) {
        int rank = local_rank_at(hier, j);

        if (j != hier->local_rank) {
            bytes_at(&plan->send[j], result + v->offset[rank], v->bytes[rank]);
        } else {
            bytes_at(&plan->self_from, result + v->offset[rank], v->bytes[rank]);
            bytes_at(&plan->self_to, rbuf, v->bytes[rank]);
        }
    }
    return plan;
}

/* Each node's blocks between the leaders: where its first rank's starts, the
 * sum of its ranks' (their blocks adjacent in the layout). */
static int node_blocks(struct run *run)
{
    const struct coll_async_hier *hier = run->hier;
    const struct coll_async_hier_v *v = run->v;

    run->block_offset = malloc(sizeof(size_t) * (size_t) hier->node_count);
    run->block_bytes = calloc((size_t) hier->node_count, sizeof(size_t));
    if (NULL == run->block_offset || NULL == run->block_bytes) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (int node = 0; node < hier->node_count; ++node) {
        run->block_offset[node] = v->offset[hier->node_ranks[hier->node_first[node]]];
        for (int i = hier->node_first[node]; i < hier->node_first[node + 1]; ++i) {
            run->block_bytes[node] += v->bytes[hier->node_ranks[i]];
        }
    }
    return OMPI_SUCCESS;
}

static void add_exchange(struct run *run, int which, bool needs_status)
{
    struct stage *stage = add(run, STAGE_EXCHANGE);

    stage->count = (size_t) which;
    stage->needs_status = needs_status;
}

int coll_async_hier_plan_allgatherv(struct run *run, const struct coll_async_sched *op)
{
    struct coll_async_hier *hier = run->hier;
    const struct coll_async_hier_v *v = run->v;
    int leader = leader_of(hier, hier->node, 0);
    size_t total = op->bytes;
    char *by_node = run->temp = coll_async_scratch_take(total);

    if (NULL == by_node) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (hier->has_local) {
        run->exchange[0] = gather_to_leader(run, leader, by_node);
        if (NULL == run->exchange[0]) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        add_exchange(run, 0, false);
    } else if (0 < v->bytes[hier->rank]) {
        int rc = coll_async_block_pack(&v->mine, 0, by_node + v->offset[hier->rank],
                                       v->bytes[hier->rank]);

        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
    if (0 == hier->slot) {
        if (OMPI_SUCCESS != node_blocks(run)) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        add_net(run, COLL_ASYNC_FAMILY_ALLGATHER, &hier->group, 0, by_node, 0, total);
    }
    if (hier->has_local) {
        add_from_leader(run, leader, by_node, total);
    }
    add(run, STAGE_UNPACK)->needs_status = true;
    return OMPI_SUCCESS;
}

int coll_async_hier_v_unpack(const struct run *run)
{
    const struct coll_async_hier_v *v = run->v;

    for (int rank = 0; rank < v->nranks; ++rank) {
        if (0 < v->bytes[rank]) {
            int rc = coll_async_block_unpack(&v->recv[rank], 0, run->temp + v->offset[rank],
                                             v->bytes[rank]);

            if (OMPI_SUCCESS != rc) {
                return rc;
            }
        }
    }
    return OMPI_SUCCESS;
}

/* Between nodes: a ring reduce_scatter of the nodes' parts where each node's
 * ranks are consecutive (its part one range of the vector) and the family's
 * parameter leaves the ring (auto, ring); else an allreduce of the whole vector
 * (recursive_doubling and rabenseifner name its algorithm). */
static int add_leaders_stage(struct run *run, const struct coll_async_sched *op, char *result)
{
    struct coll_async_hier *hier = run->hier;
    enum coll_async_alg alg = hier->algorithm[run->family];
    /* A row of the tuning file for the family chooses as the parameter would. */
    const struct coll_async_tuning_row *row
        = coll_async_tuning_choose(hier->tuning, run->family, COLL_ASYNC_FAMILY_ALLREDUCE, alg,
                                   hier->group.size, op->bytes);

    if (NULL != row) {
        alg = row->alg;
    }
    if (!hier->rank_ordered || (COLL_ASYNC_ALG_AUTO != alg && COLL_ASYNC_ALG_RING != alg)) {
        add_net(run, COLL_ASYNC_FAMILY_ALLREDUCE, &hier->group, 0, result, op->count, 0);
        return OMPI_SUCCESS;
    }
    if (OMPI_SUCCESS != node_blocks(run)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    add_net(run, COLL_ASYNC_FAMILY_REDUCE_SCATTER, &hier->group, 0, result, op->count, 0);
    return OMPI_SUCCESS;
}

int coll_async_hier_plan_reduce_scatter(struct run *run, const struct coll_async_sched *op)
{
    struct coll_async_hier *hier = run->hier;
    int leader = leader_of(hier, hier->node, 0);
    char *result = op->rbuf;

    /* The leader reduces into scratch: its rbuf holds its part alone. */
    if (hier->rank == leader) {
        result = run->temp = coll_async_scratch_take(op->bytes);
        if (NULL == result) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    if (hier->has_local) {
        add_local(run, coll_async_reduction_begin, leader, op->sbuf, result, op->count,
                  op->bytes);
    } else {
        add_copy(run, op->sbuf, result, op->bytes);
    }
    if (0 == hier->slot) {
        int rc = add_leaders_stage(run, op, result);

        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
    if (hier->has_local) {
        run->exchange[0] = scatter_from_leader(run, leader, result, op->rbuf);
        if (NULL == run->exchange[0]) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        add(run, STAGE_STATUS)->root = coll_async_hier_local_index(hier, leader);
        add_exchange(run, 0, true);
    } else {
        struct stage *copy = add(run, STAGE_COPY);

        copy->sbuf = result + run->v->offset[hier->rank];
        copy->rbuf = op->rbuf;
        copy->bytes = run->v->bytes[hier->rank];
        copy->needs_status = true;
    }
    return OMPI_SUCCESS;
}
