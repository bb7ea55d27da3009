/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: a communicator's ranks as the mapper (coll_async_net.h) sees
 * them: each rank's transport id, and the communicator's share of the tag
 * space. Two kinds of tags share it:
 *   - a collective's base tag, of which every rank takes the next for each
 *     collective, alike and in order (the hierarchy's stages, whose every rank
 *     takes part in every collective);
 *   - a pair's tag: the k-th block one rank sends another over a communicator
 *     pairs with the k-th block that one receives from it, so a rank that
 *     moves nothing in a collective need not take anything (on an
 *     intercommunicator, a rank passing MPI_PROC_NULL, which Open MPI may not
 *     even hand to the component).
 * Pure C, no Open MPI header.
 */

#ifndef MCA_COLL_ASYNC_PEERS_H
#define MCA_COLL_ASYNC_PEERS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "coll_async_internode.h"
#include "transport/coll_async_net.h"

struct coll_async_peers {
    struct coll_async_net *net;
    uint32_t *id;      /* rank -> transport id */
    uint64_t *crossed; /* rank -> blocks sent to it [2 * rank], received [2 * rank + 1] */
    uint64_t tag_base; /* the communicator's share of the tag space */
    uint64_t started;  /* collectives begun on the communicator (their tags) */
};

/* Room for size ranks, zeroed; 0 or -ENOMEM (nothing allocated). */
static inline int coll_async_peers_alloc(struct coll_async_peers *peers, int size)
{
    peers->id = calloc((size_t) size, sizeof(*peers->id));
    peers->crossed = calloc(2 * (size_t) size, sizeof(*peers->crossed));
    if (NULL == peers->id || NULL == peers->crossed) {
        free(peers->id);
        free(peers->crossed);
        peers->id = NULL;
        peers->crossed = NULL;
        return -ENOMEM;
    }
    return 0;
}

static inline void coll_async_peers_free(struct coll_async_peers *peers)
{
    free(peers->id);
    free(peers->crossed);
    peers->id = NULL;
    peers->crossed = NULL;
}

/* The pairs' tags lie above every collective's (2^23 sequence numbers of
 * COLL_ASYNC_INTERNODE_TAG_STEPS steps each). */
#define COLL_ASYNC_PEERS_PAIR_TAG (UINT64_C(1) << 39)

/* An agreement's pairs (coll_async_agree.c) count apart from the communicator's
 * and take the upper half of its pair tags: tag_base carries this bit. */
#define COLL_ASYNC_PEERS_AGREEMENT_TAG (UINT64_C(1) << 38)

/* The tag of the next block this rank sends to rank (receiving: receives from
 * it). */
static inline uint64_t coll_async_peers_pair_tag(struct coll_async_peers *peers, int rank,
                                                 bool receiving)
{
    uint64_t k = peers->crossed[2 * (size_t) rank + receiving]++;

    return peers->tag_base | COLL_ASYNC_PEERS_PAIR_TAG | (k & (COLL_ASYNC_PEERS_PAIR_TAG - 1));
}

/* The base tag of the next collective: tag + step for step below
 * COLL_ASYNC_INTERNODE_TAG_STEPS is its own. */
static inline uint64_t coll_async_peers_next_tag(struct coll_async_peers *peers)
{
    uint64_t sequence = peers->started++ & ((UINT64_C(1) << 23) - 1);

    return peers->tag_base | sequence * COLL_ASYNC_INTERNODE_TAG_STEPS;
}

#endif /* MCA_COLL_ASYNC_PEERS_H */
