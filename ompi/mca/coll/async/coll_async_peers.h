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
 * space, of which every collective that moves data over the mapper takes the
 * next base tag, every rank alike and in the same order.
 * Pure C, no Open MPI header.
 */

#ifndef MCA_COLL_ASYNC_PEERS_H
#define MCA_COLL_ASYNC_PEERS_H

#include <stdint.h>

#include "coll_async_internode.h"
#include "transport/coll_async_net.h"

struct coll_async_peers {
    struct coll_async_net *net;
    uint32_t *id;      /* rank -> transport id */
    uint64_t tag_base; /* the communicator's share of the tag space */
    uint64_t started;  /* collectives begun on the communicator (their tags) */
};

/* The base tag of the next collective: tag + step for step below
 * COLL_ASYNC_INTERNODE_TAG_STEPS is its own. */
static inline uint64_t coll_async_peers_next_tag(struct coll_async_peers *peers)
{
    uint64_t sequence = peers->started++ & ((UINT64_C(1) << 28) - 1);

    return peers->tag_base | sequence * COLL_ASYNC_INTERNODE_TAG_STEPS;
}

#endif /* MCA_COLL_ASYNC_PEERS_H */
