/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: a communicator that spans nodes, as the hierarchical schedules see
 * it.
 *
 * Its ranks grouped by node (nodes numbered in the order their first rank
 * appears), this node's ranks joined by a shared-memory channel, and per node
 * `slots` leaders: slot 0 leads the node in every collective; large allreduces
 * split the vector over all slots, each leader moving its share between nodes
 * from the rank near its NIC. Between nodes the leaders of one slot form a group
 * on the mapper between nodes (coll_async_internode.h); those of slot 0 may
 * also share a multicast group for bcast (coll_async_multicast.h).
 */

#ifndef MCA_COLL_ASYNC_HIER_H
#define MCA_COLL_ASYNC_HIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll_async_block.h"

#include "coll_async_internode.h"
#include "coll_async_multicast.h"
#include "coll_async_peers.h"
#include "transport/coll_async_channel.h"

struct coll_async_op;
struct coll_async_numa;
struct coll_async_hier_multicast;

#define COLL_ASYNC_HIER_MAX_SLOTS 8

struct coll_async_hier {
    const char *name;   /* the communicator's, for messages */
    unsigned cid;       /* the communicator's, for messages */
    int size, rank;     /* in the communicator */
    int node_count, node;
    int *node_of;       /* rank -> node */
    int *node_first;    /* node_count + 1 offsets into node_ranks */
    int *node_ranks;    /* the ranks of each node, ascending */
    int local_rank;     /* this rank's index among its node's */
    bool has_local;     /* this node holds several ranks: the channel is open */
    struct coll_async_channel local;
    /* This node's ranks split by NUMA domain, when they are in several: node
     * stages of the families it stages run as NUMA stages (coll_async_numa.h). */
    struct coll_async_numa *numa;
    bool rank_ordered;  /* node_ranks is 0 .. size - 1: blocks of a node are adjacent */

    int slots;          /* leaders per node, the same on every node */
    int *leaders;       /* node * slots + slot -> rank */
    int slot;           /* this rank's, or -1 */
    struct coll_async_leaders group; /* this rank's slot's group, when it leads */
    uint32_t *group_peer;
    int *ring;          /* profiled ring order of the groups, or NULL */

    struct coll_async_peers peers; /* every rank, on the mapper */

    size_t multi_leader_bytes;
    enum coll_async_alg algorithm[COLL_ASYNC_NUM_FAMILIES]; /* the parameters, per family */

    /* Which bcasts go over the leaders' multicast group, and the group: owned by
     * coll_async_hier_multicast.c, read through its functions (coll_async.h). */
    struct coll_async_hier_multicast *multicast;

    /* The families whose first call aggregated by node verbose level 1 said. */
    uint32_t said_aggregated;

    /* The tuning file's rows where every rank of the communicator read the same
     * ones (NULL: none, or they differ), the file's name, and what verbose
     * level 1 said of them: per row whether it chose a call, per family whether
     * the built-in thresholds chose one (no row). */
    const struct coll_async_tuning *tuning;
    const char *tuning_file;
    unsigned char *tuning_said;
    uint32_t said_built_in;
};

static inline int coll_async_hier_node_size(const struct coll_async_hier *hier, int node)
{
    return hier->node_first[node + 1] - hier->node_first[node];
}

/* The index of rank among the ranks of its node: its rank on that node's channel. */
int coll_async_hier_local_index(const struct coll_async_hier *hier, int rank);

/*
 * The hierarchical schedules (coll_async_hierarchical.c): a run of stages on
 * this node's channel (the shared-memory schedules) and between nodes (the
 * leaders' algorithms), for the families coll_async_decision_hierarchical()
 * names. The op is the base of a struct coll_async_sched, whose arguments are
 * those of the shared-memory schedules (coll_async_schedule.h); its plan is a
 * run from coll_async_hier_run_new(), freed by coll_async_hier_run_free().
 */
void *coll_async_hier_run_new(struct coll_async_hier *hier, enum coll_async_family family);
void coll_async_hier_run_free(void *run);
void coll_async_hier_begin(struct coll_async_op *op);

/*
 * Gather and scatter aggregated by node: the node's ranks gather their blocks at
 * the node's representative over the node's channel (the root on its node, the
 * first leader elsewhere), the representatives gather theirs at the root between
 * nodes, and the root puts them in rank order; scatter the other way. The op's
 * bytes are one rank's block, packed; the blocks themselves are the user's,
 * set by the caller in the run's coll_async_hier_run_blocks() (released with
 * the run): mine, this rank's send (gather) or receive (scatter) block, empty at
 * a root in place; at the root first and stride, rank 0's block on the root's
 * side and the distance between ranks' blocks.
 */
struct coll_async_hier_blocks {
    struct coll_async_block mine, first;
    ptrdiff_t stride;
};
struct coll_async_hier_blocks *coll_async_hier_run_blocks(void *run);

/* coll_async_hier_rooted.c: the layout between nodes (every rank's block
 * packed, in node order from the root's node; offset and bytes per node relative
 * to the root's, node_count each), the exchange of this node's blocks with the
 * representative rep (its blocks in that layout at by_node), and the copies
 * between the user's blocks and by_node (every rank's at the root, or this
 * rank's own). */
struct coll_async_exchange;
void coll_async_hier_rooted_layout(const struct coll_async_hier *hier, int root_node,
                                   size_t block, size_t *offset, size_t *bytes);
/* Whether the root's own blocks are that layout: its node first, every node's
 * ranks consecutive, its blocks contiguous and adjacent. */
bool coll_async_hier_root_holds_layout(const struct coll_async_hier *hier,
                                       const struct coll_async_hier_blocks *blocks,
                                       int root_node, size_t block);
struct coll_async_exchange *coll_async_hier_node_exchange(const struct coll_async_hier *hier,
                                                          const struct coll_async_hier_blocks *blocks,
                                                          bool scatter, int rep, int root_node,
                                                          char *by_node, size_t block);
/* coll_async_hier_alltoall.c: the offsets and sizes of the node-pair aggregates
 * (node_count each), and the leader's repacking of its scratch (3 areas of this
 * node's ranks x the communicator's x block) out of node order (in: false) or
 * into it; a leader alone on its node packs its own send buffer (blocks' mine)
 * first, or unpacks into its receive buffer (blocks' first) last. */
void coll_async_hier_alltoall_layout(const struct coll_async_hier *hier, size_t block,
                                     size_t *offset, size_t *bytes);
int coll_async_hier_alltoall_repack(const struct coll_async_hier *hier,
                                    const struct coll_async_hier_blocks *blocks, char *scratch,
                                    size_t block, bool in);
int coll_async_hier_rooted_copy(const struct coll_async_hier *hier,
                                const struct coll_async_hier_blocks *blocks, int root_node,
                                char *by_node, size_t block, bool to_user, bool every_rank);

/*
 * allgatherv and reduce_scatter(_block) across nodes by node (coll_async_hier_v.c):
 * per rank the packed size of its block and where it lies in the run's layout
 * (allgatherv: every block packed in node order, so that each node's blocks are
 * adjacent and the leaders' allgather moves one per node; reduce_scatter: the
 * rank's part of the vector, in rank order). allgatherv also takes this rank's
 * send block (mine) and every rank's receive block (recv). Set by the caller in
 * the run's coll_async_hier_run_v(), released with the run; NULL when out of
 * memory.
 */
struct coll_async_hier_v {
    int nranks;
    size_t *bytes, *offset;
    struct coll_async_block mine;
    struct coll_async_block *recv; /* allgatherv: [nranks] */
};
struct coll_async_hier_v *coll_async_hier_run_v(void *run, bool with_recv);
void coll_async_hier_v_free(struct coll_async_hier_v *v);
/* allgatherv's offsets in node order, from the sizes. */
void coll_async_hier_v_by_node(const struct coll_async_hier *hier, struct coll_async_hier_v *v);

#endif /* MCA_COLL_ASYNC_HIER_H */
