/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: blocks crossing between pairs of ranks over the mapper
 * (coll_async_net.h), each one tagged bulk transfer between its two ranks,
 * wherever they run.
 *
 * The same exchange plan (coll_async_exchange.h) that runs through a node's
 * shared memory runs here across nodes: the collectives without a hierarchical
 * schedule (gather, scatter, alltoall and their v and w forms, allgatherv,
 * scan, exscan, reduce_scatter) and the reductions the leaders' algorithms do
 * not take (derived datatypes, user-defined operations, folded in rank order).
 * The neighbourhood collectives add their blocks one by one, in the order that
 * pairs each receive with its send.
 * A block that is not contiguous is packed whole before it is sent, and
 * unpacked when it has arrived; in place, what is sent is copied first. All
 * transfers of one collective are posted at once, each under its pair's next
 * tag (coll_async_peers.h); the engine's driver progresses them.
 */

#ifndef MCA_COLL_ASYNC_PAIRS_H
#define MCA_COLL_ASYNC_PAIRS_H

#include <stdbool.h>
#include <stddef.h>

#include "coll_async_engine.h"
#include "coll_async_exchange.h"
#include "coll_async_peers.h"

struct ompi_datatype_t;

/* An op's plan: exchange (owned from here on) between the ranks of peers; name
 * and rank (this process's) are for messages. NULL when out of memory, the
 * exchange freed. */
void *coll_async_pairs_new(struct coll_async_exchange *exchange, struct coll_async_peers *peers,
                           const char *name, int rank);
void coll_async_pairs_free(void *pairs);

/* A plan of at most capacity blocks that the caller adds (the neighbourhood
 * collectives); peers may be NULL where every block is the rank's own. NULL
 * when out of memory. */
void *coll_async_pairs_new_list(int capacity, struct coll_async_peers *peers, const char *name,
                                int rank);
/* Adds count dtype at base, sent to or received from rank: the k-th block
 * added for a pair of ranks pairs with the k-th its other rank adds for it
 * (for a rank that is its own neighbour: the send and the receive of the
 * same step, copied). Empty blocks are left out. OMPI_SUCCESS, or
 * OMPI_ERR_BAD_PARAM past the capacity. */
int coll_async_pairs_add(void *pairs, int rank, unsigned step, bool receive, const void *base,
                         size_t count, struct ompi_datatype_t *dtype);

/* The begin of ops whose plan is from coll_async_pairs_new(). */
void coll_async_pairs_begin(struct coll_async_op *op);

#endif /* MCA_COLL_ASYNC_PAIRS_H */
