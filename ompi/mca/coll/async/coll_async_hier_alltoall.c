/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the data of an alltoall aggregated by node (see coll_async_hier.h):
 * how the node's leader lays out the blocks it gathered from its ranks, sends to
 * the other nodes' leaders, receives from them and scatters back.
 *
 * With R the ranks of this node, n those of the communicator and B a block, the
 * leader's scratch holds three areas of R n B bytes:
 *   G  the node's send buffers, G[j][q]: from local rank j to rank q, as the
 *      node's exchange gathered them; later U, U[k][r]: from rank r to local
 *      rank k, each local rank's receive buffer as the node's exchange scatters it;
 *   S  per node b, at R first(b) B, the R x R_b blocks for its ranks: S_b[j][k]
 *      from local rank j to b's k-th rank;
 *   T  per node b, at the same offset, the R_b x R blocks from it: T_b[j][k] from
 *      b's j-th rank to local rank k. This node's own part goes from G to T
 *      directly.
 */

#include "ompi_config.h"

#include <string.h>

#include "ompi/constants.h"

#include "coll_async_hier.h"

void coll_async_hier_alltoall_layout(const struct coll_async_hier *hier, size_t block,
                                     size_t *offset, size_t *bytes)
{
    size_t local = (size_t) coll_async_hier_node_size(hier, hier->node);

    for (int b = 0; b < hier->node_count; ++b) {
        offset[b] = local * (size_t) hier->node_first[b] * block;
        bytes[b] = local * (size_t) coll_async_hier_node_size(hier, b) * block;
    }
}

/* G to S (and to T for this node's own blocks). */
static void outbound(const struct coll_async_hier *hier, char *g, char *s, char *t, size_t block)
{
    size_t n = (size_t) hier->size, local = (size_t) coll_async_hier_node_size(hier, hier->node);

    for (int b = 0; b < hier->node_count; ++b) {
        size_t first = (size_t) hier->node_first[b], rb = (size_t) coll_async_hier_node_size(hier, b);
        char *to = (b == hier->node ? t : s) + local * first * block;

        for (size_t j = 0; j < local; ++j) {
            for (size_t k = 0; k < rb; ++k) {
                size_t q = (size_t) hier->node_ranks[first + k];

                memcpy(to + (j * rb + k) * block, g + (j * n + q) * block, block);
            }
        }
    }
}

/* T to U. */
static void inbound(const struct coll_async_hier *hier, const char *t, char *u, size_t block)
{
    size_t n = (size_t) hier->size, local = (size_t) coll_async_hier_node_size(hier, hier->node);

    for (int b = 0; b < hier->node_count; ++b) {
        size_t first = (size_t) hier->node_first[b], rb = (size_t) coll_async_hier_node_size(hier, b);
        const char *from = t + local * first * block;

        for (size_t j = 0; j < rb; ++j) {
            size_t r = (size_t) hier->node_ranks[first + j];

            for (size_t k = 0; k < local; ++k) {
                memcpy(u + (k * n + r) * block, from + (j * local + k) * block, block);
            }
        }
    }
}

int coll_async_hier_alltoall_repack(const struct coll_async_hier *hier,
                                    const struct coll_async_hier_blocks *blocks, char *scratch,
                                    size_t block, bool in)
{
    size_t area = (size_t) coll_async_hier_node_size(hier, hier->node) * (size_t) hier->size
                  * block;
    char *g = scratch, *s = scratch + area, *t = scratch + 2 * area;
    int rc = OMPI_SUCCESS;

    if (!in) {
        /* Alone on its node, the leader's own send buffer is all of G. */
        if (!hier->has_local) {
            rc = coll_async_block_pack(&blocks->mine, 0, g, area);
        }
        outbound(hier, g, s, t, block);
        return rc;
    }
    inbound(hier, t, g, block);
    return hier->has_local ? OMPI_SUCCESS : coll_async_block_unpack(&blocks->first, 0, g, area);
}
