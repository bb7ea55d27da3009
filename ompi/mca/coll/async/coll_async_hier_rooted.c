/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the data of a gather or scatter aggregated by node (see
 * coll_async_hier.h): where each rank's block lies while it crosses between
 * nodes, the exchange that gathers or scatters a node's blocks at its
 * representative, and the copies between that layout and the user's blocks.
 *
 * Between nodes the blocks lie packed, in node order starting at the root's
 * node, each node's in rank order: the blocks of a binomial subtree of nodes
 * (consecutive relative to the root) are adjacent and cross as one message, and
 * no node's ranks need be consecutive in the communicator.
 */

#include "ompi_config.h"

#include "ompi/constants.h"
#include "ompi/datatype/ompi_datatype.h"

#include "coll_async_exchange.h"
#include "coll_async_hier.h"

/* The block of node-order index i (into node_ranks) in the layout from
 * root_node: the nodes from the root's on, wrapping round. */
static size_t position(const struct coll_async_hier *hier, int root_node, int i, size_t block)
{
    int from = hier->node_first[root_node];

    return (size_t) ((i - from + hier->size) % hier->size) * block;
}

void coll_async_hier_rooted_layout(const struct coll_async_hier *hier, int root_node,
                                   size_t block, size_t *offset, size_t *bytes)
{
    for (int v = 0; v < hier->node_count; ++v) {
        int node = (root_node + v) % hier->node_count;

        offset[v] = position(hier, root_node, hier->node_first[node], block);
        bytes[v] = (size_t) coll_async_hier_node_size(hier, node) * block;
    }
}

bool coll_async_hier_root_holds_layout(const struct coll_async_hier *hier,
                                       const struct coll_async_hier_blocks *blocks,
                                       int root_node, size_t block)
{
    return hier->rank_ordered && 0 == hier->node_first[root_node]
           && NULL != blocks->first.contiguous && (ptrdiff_t) block == blocks->stride;
}

/* The user's block of rank: at the root, on the root's side; elsewhere (or at
 * a root that gave its own block) this rank's own. */
static void user_block(const struct coll_async_hier_blocks *blocks, int rank, bool root_side,
                       struct coll_async_block *block)
{
    if (root_side) {
        coll_async_block_borrow(block, blocks->first.base + (ptrdiff_t) rank * blocks->stride,
                             blocks->first.count, blocks->first.dtype);
    } else {
        coll_async_block_borrow(block, blocks->mine.base, blocks->mine.count, blocks->mine.dtype);
    }
}

/* This rank's own block: its argument, or in place the root's slot for it. */
static void own_block(const struct coll_async_hier *hier, const struct coll_async_hier_blocks *blocks,
                      struct coll_async_block *block)
{
    user_block(blocks, hier->rank, NULL == blocks->mine.dtype, block);
}

static void bytes_at(struct coll_async_block *block, char *at, size_t bytes)
{
    coll_async_block_borrow(block, at, bytes, &ompi_mpi_byte.dt);
}

struct coll_async_exchange *coll_async_hier_node_exchange(const struct coll_async_hier *hier,
                                                          const struct coll_async_hier_blocks *blocks,
                                                          bool scatter, int rep, int root_node,
                                                          char *by_node, size_t block)
{
    int nranks = coll_async_hier_node_size(hier, hier->node);
    int first = hier->node_first[hier->node], rep_local = coll_async_hier_local_index(hier, rep);
    struct coll_async_exchange *plan = coll_async_exchange_new(nranks, hier->local_rank, scatter, 0);

    if (NULL == plan) {
        return NULL;
    }
    plan->uniform = true;
    if (!scatter) {
        plan->readers_first = plan->readers_last = rep_local;
    }
    if (hier->rank != rep) {
        if (scatter) {
            own_block(hier, blocks, &plan->recv[rep_local]);
        } else {
            own_block(hier, blocks, &plan->send[0]);
        }
        return plan;
    }
    for (int j = 0; j < nranks; ++j) {
        char *at = by_node + position(hier, root_node, first + j, block);

        if (j != hier->local_rank) {
            bytes_at(scatter ? &plan->send[j] : &plan->recv[j], at, block);
        } else if (scatter) {
            bytes_at(&plan->self_from, at, block);
            if (NULL != blocks->mine.dtype) { /* a root in place keeps its block */
                own_block(hier, blocks, &plan->self_to);
            }
        } else {
            own_block(hier, blocks, &plan->self_from);
            bytes_at(&plan->self_to, at, block);
        }
    }
    return plan;
}

/* One rank's block between the user's memory and the layout. */
static int copy_block(const struct coll_async_block *user, char *at, size_t block, bool to_user)
{
    return to_user ? coll_async_block_unpack(user, 0, at, block)
                   : coll_async_block_pack(user, 0, at, block);
}

int coll_async_hier_rooted_copy(const struct coll_async_hier *hier,
                                const struct coll_async_hier_blocks *blocks, int root_node,
                                char *by_node, size_t block, bool to_user, bool every_rank)
{
    struct coll_async_block user;
    int rc = OMPI_SUCCESS;

    if (!every_rank) {
        if (to_user && NULL == blocks->mine.dtype) {
            return OMPI_SUCCESS; /* a root's scatter in place: its block stays */
        }
        own_block(hier, blocks, &user);
        rc = copy_block(&user, by_node + position(hier, root_node, hier->node_first[hier->node]
                                                                       + hier->local_rank,
                                                  block),
                        block, to_user);
        coll_async_block_release(&user);
        return rc;
    }
    for (int i = 0; i < hier->size && OMPI_SUCCESS == rc; ++i) {
        int rank = hier->node_ranks[i];

        user_block(blocks, rank, true, &user);
        rc = copy_block(&user, by_node + position(hier, root_node, i, block), block, to_user);
        coll_async_block_release(&user);
    }
    return rc;
}
