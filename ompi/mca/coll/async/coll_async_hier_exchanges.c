/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the stages of gather, scatter and alltoall aggregated by node (see
 * coll_async_hier.h); their data is coll_async_hier_rooted.c's and
 * coll_async_hier_alltoall.c's, the stages run in coll_async_hierarchical.c.
 */

#include "ompi_config.h"

#include "coll_async_hier_run.h"

/* Gather and scatter: the layout between nodes, at a representative (in the
 * root's own buffer where that is the layout). */
static int rooted_layout(struct run *run, int root_node, size_t total)
{
    struct coll_async_hier *hier = run->hier;
    size_t nodes = (size_t) hier->node_count, block = total / (size_t) hier->size;

    if (hier->rank == run->root && coll_async_hier_root_holds_layout(hier, &run->blocks,
                                                                     root_node, block)) {
        run->by_node = run->blocks.first.contiguous;
    } else {
        run->by_node = run->temp = coll_async_scratch_take(total);
    }
    run->block_offset = malloc(sizeof(size_t) * nodes);
    run->block_bytes = malloc(sizeof(size_t) * nodes);
    if (NULL == run->by_node || NULL == run->block_offset || NULL == run->block_bytes) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    coll_async_hier_rooted_layout(hier, root_node, total / (size_t) hier->size,
                                  run->block_offset, run->block_bytes);
    return OMPI_SUCCESS;
}

/* The node's exchange with rep of this rank's block of mine; gathering into
 * (scattering from) by_node at rep. */
static int add_exchange(struct run *run, const struct coll_async_hier_blocks *mine, bool scatter,
                        int rep, int root_node, size_t block)
{
    struct stage *stage;

    run->exchange[scatter] = coll_async_hier_node_exchange(run->hier, mine, scatter, rep,
                                                           root_node, run->by_node, block);
    if (NULL == run->exchange[scatter]) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    stage = add(run, STAGE_EXCHANGE);
    stage->needs_status = scatter;
    stage->count = scatter;
    return OMPI_SUCCESS;
}

static void add_arrange(struct run *run, int root_node, size_t block, bool to_user,
                        bool every_rank)
{
    struct stage *stage = add(run, STAGE_ARRANGE);

    stage->root = root_node;
    stage->bytes = block;
    stage->to_user = to_user;
    stage->every_rank = every_rank;
    stage->needs_status = to_user; /* after the stage between nodes */
}

int coll_async_hier_plan_rooted(struct run *run, const struct coll_async_sched *op, bool scatter)
{
    struct coll_async_hier *hier = run->hier;
    const struct coll_async_leaders *group;
    int root_node = hier->node_of[op->root], rep = representative(run, op->root);
    size_t total = op->bytes * (size_t) hier->size;
    int rc = rooted_group(run, op->root, &group);
    bool root_copies;

    run->root = op->root;
    run->by_node = NULL;
    if (OMPI_SUCCESS == rc && hier->rank == rep) {
        rc = rooted_layout(run, root_node, total);
    }
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    root_copies = hier->rank == op->root && run->by_node != run->blocks.first.contiguous;
    if (scatter && root_copies) {
        add_arrange(run, root_node, op->bytes, false, true);
    }
    if (!scatter) {
        if (hier->has_local) {
            rc = add_exchange(run, &run->blocks, false, rep, root_node, op->bytes);
        } else {
            add_arrange(run, root_node, op->bytes, false, false);
        }
    }
    if (NULL != group) {
        add_net(run, scatter ? COLL_ASYNC_FAMILY_SCATTER : COLL_ASYNC_FAMILY_GATHER, group,
                root_node, run->by_node, 0, total);
    }
    if (!scatter) {
        if (root_copies) {
            add_arrange(run, root_node, op->bytes, true, true);
        }
        return rc;
    }
    if (!hier->has_local) {
        add_arrange(run, root_node, op->bytes, true, false);
        return OMPI_SUCCESS;
    }
    /* The representative's status first: after a failure between nodes the
     * node's ranks must not wait for blocks that never come. */
    add(run, STAGE_STATUS)->root = coll_async_hier_local_index(hier, rep);
    return OMPI_SUCCESS == rc ? add_exchange(run, &run->blocks, true, rep, root_node, op->bytes)
                              : rc;
}

/* The node's first leader gathers the node's send buffers, exchanges node-pair
 * aggregates with the other leaders, scatters the receive buffers; a leader
 * alone on its node packs and unpacks its own in the repacking. */
int coll_async_hier_plan_alltoall(struct run *run, const struct coll_async_sched *op)
{
    struct coll_async_hier *hier = run->hier;
    int leader = leader_of(hier, hier->node, 0), rc = OMPI_SUCCESS;
    size_t row = op->bytes * (size_t) hier->size;
    size_t area = row * (size_t) coll_async_hier_node_size(hier, hier->node);
    struct coll_async_hier_blocks receive = {.mine = run->blocks.first};
    struct stage *stage;

    run->by_node = NULL;
    if (hier->rank == leader) {
        run->by_node = run->temp = coll_async_scratch_take(3 * area);
        run->block_offset = malloc(sizeof(size_t) * (size_t) hier->node_count);
        run->block_bytes = malloc(sizeof(size_t) * (size_t) hier->node_count);
        if (NULL == run->temp || NULL == run->block_offset || NULL == run->block_bytes) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        coll_async_hier_alltoall_layout(hier, op->bytes, run->block_offset, run->block_bytes);
    }
    if (hier->has_local) {
        rc = add_exchange(run, &run->blocks, false, leader, hier->node, row);
    }
    if (hier->rank == leader) {
        add(run, STAGE_REPACK)->bytes = op->bytes;
        /* S, and T after it (count: the offset between them) */
        add_net(run, COLL_ASYNC_FAMILY_ALLTOALL, &hier->group, 0, run->temp + area, area, 0);
        stage = add(run, STAGE_REPACK);
        stage->bytes = op->bytes;
        stage->to_user = stage->needs_status = true;
    }
    if (!hier->has_local || OMPI_SUCCESS != rc) {
        return rc;
    }
    add(run, STAGE_STATUS)->root = coll_async_hier_local_index(hier, leader);
    return add_exchange(run, &receive, true, leader, hier->node, row);
}
