/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: an exchange carried over the mapper (coll_async_net.h), each
 * block one tagged bulk transfer between its two ranks, wherever they run.
 *
 * The same exchange plan (coll_async_exchange.h) that runs through a node's
 * shared memory runs here across nodes: the collectives without a hierarchical
 * schedule (gather, scatter, alltoall and their v and w forms, allgatherv,
 * scan, exscan, reduce_scatter) and the reductions the leaders' algorithms do
 * not take (derived datatypes, user-defined operations, folded in rank order).
 * A block that is not contiguous is packed whole before it is sent, and
 * unpacked when it has arrived; in place, what is sent is copied first. All transfers of one collective are posted at
 * once under the collective's own tag; the engine's driver progresses them.
 */

#ifndef MCA_COLL_ASYNC_PAIRS_H
#define MCA_COLL_ASYNC_PAIRS_H

#include "coll_async_engine.h"
#include "coll_async_exchange.h"
#include "coll_async_peers.h"

/* An op's plan: exchange (owned from here on) between the ranks of peers; name
 * and rank (this process's) are for messages. NULL when out of memory, the
 * exchange freed. */
void *coll_async_pairs_new(struct coll_async_exchange *exchange, struct coll_async_peers *peers,
                           const char *name, int rank);
void coll_async_pairs_free(void *pairs);

/* The begin of ops whose plan is from coll_async_pairs_new(). */
void coll_async_pairs_begin(struct coll_async_op *op);

#endif /* MCA_COLL_ASYNC_PAIRS_H */
