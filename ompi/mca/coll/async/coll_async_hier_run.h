/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: a hierarchical run as its planners see it (internal to
 * coll_async_hierarchical.c, which runs the stages, and coll_async_hier_exchanges.c,
 * which plans the exchanges aggregated by node): its stages, and how a plan adds
 * them.
 */

#ifndef MCA_COLL_ASYNC_HIER_RUN_H
#define MCA_COLL_ASYNC_HIER_RUN_H

#include <stdlib.h>

#include "ompi/constants.h"

#include "coll_async.h"
#include "coll_async_exchange.h"
#include "coll_async_failure.h"
#include "coll_async_schedule.h"
#include "transport/coll_async_scratch.h"

#define MAX_STAGES (4 * COLL_ASYNC_HIER_MAX_SLOTS + 4)

enum stage_kind {
    STAGE_LOCAL,   /* a shared-memory schedule on the node's channel */
    STAGE_STATUS,  /* a leader's status, broadcast on the node's channel */
    STAGE_NET,     /* the leaders' algorithm between nodes */
    STAGE_MULTICAST, /* bcast over the leaders' multicast group */
    STAGE_COPY,    /* bytes from sbuf to rbuf */
    STAGE_PERMUTE, /* allgather: node-ordered blocks to rank order */
    STAGE_EXCHANGE, /* gather, scatter: the node's blocks with its representative */
    STAGE_ARRANGE, /* gather, scatter: the user's blocks to or from the layout */
    STAGE_REPACK,  /* alltoall: the leader's blocks between node and node-pair order */
    STAGE_SCAN,    /* scan, exscan: a fold (count: which, coll_async_hier_scan.c) */
    STAGE_UNPACK,  /* allgatherv: every rank's block from the layout to the user's */
};

struct stage {
    enum stage_kind kind;
    bool needs_status;                 /* skipped once the run has failed */
    void (*begin)(struct coll_async_op *op);
    enum coll_async_family net;         /* NET: the leaders' collective */
    const struct coll_async_leaders *group;
    int root;                          /* LOCAL, STATUS: local index; NET: group index */
    const void *sbuf;
    void *rbuf;
    size_t count, bytes;
    bool to_user, every_rank;          /* ARRANGE */
};

struct run {
    struct coll_async_hier *hier;
    enum coll_async_family family;
    struct stage stages[MAX_STAGES];
    int stage_count, at;
    bool started;                      /* the stage at `at` has begun */
    struct coll_async_sched local;     /* a LOCAL or STATUS stage's op */
    struct coll_async_internode net;   /* a NET stage's state */
    struct coll_async_multicast_call multicast; /* a MULTICAST stage's */
    struct coll_async_leaders rooted;  /* bcast and reduce: the root stands for its node */
    uint32_t *rooted_peer;
    size_t *block_offset, *block_bytes;
    char *temp;
    struct coll_async_exchange *exchange[2]; /* the EXCHANGE stages' plans */
    char *by_node;                     /* gather, scatter: the layout between nodes */
    int root;                          /* gather, scatter: the root */
    struct coll_async_hier_blocks blocks; /* gather, scatter: the user's */
    int32_t status, received;          /* 0, or how a leader failed */
    uint64_t tag;
    struct coll_async_failure failure; /* what failed between nodes, for the op to report */
    void *numa_run;                    /* node stages in NUMA stages (hier->numa), or NULL */
    bool numa_counted;                 /* this call is in coll_async_numa_staged */
    struct coll_async_hier_v *v;       /* allgatherv, reduce_scatter: per rank */
};

/* Building the stages */

static inline struct stage *add(struct run *run, enum stage_kind kind)
{
    struct stage *stage = &run->stages[run->stage_count++];

    *stage = (struct stage){.kind = kind};
    return stage;
}

static inline void add_local(struct run *run, void (*begin)(struct coll_async_op *),
                             int root_rank, const void *sbuf, void *rbuf, size_t count,
                             size_t bytes)
{
    struct stage *stage = add(run, STAGE_LOCAL);

    stage->begin = begin;
    stage->root = root_rank < 0 ? -1 : coll_async_hier_local_index(run->hier, root_rank);
    stage->sbuf = sbuf;
    stage->rbuf = rbuf;
    stage->count = count;
    stage->bytes = bytes;
}

/* The leader's status, then (unless it failed) its data, to the node's ranks. */
static inline void add_from_leader(struct run *run, int leader, void *buf, size_t bytes)
{
    struct stage *status = add(run, STAGE_STATUS);

    status->root = coll_async_hier_local_index(run->hier, leader);
    add_local(run, coll_async_bcast_begin, leader, NULL, buf, 0, bytes);
    run->stages[run->stage_count - 1].needs_status = true;
}

static inline void add_net(struct run *run, enum coll_async_family family,
                           const struct coll_async_leaders *group, int root, void *buf,
                           size_t count, size_t bytes)
{
    struct stage *stage = add(run, STAGE_NET);

    stage->net = family;
    stage->group = group;
    stage->root = root;
    stage->rbuf = buf;
    stage->count = count;
    stage->bytes = bytes;
}

static inline void add_copy(struct run *run, const void *from, void *to, size_t bytes)
{
    struct stage *stage;

    if (from != to && 0 < bytes) {
        stage = add(run, STAGE_COPY);
        stage->sbuf = from;
        stage->rbuf = to;
        stage->bytes = bytes;
    }
}

static inline int leader_of(const struct coll_async_hier *hier, int node, int slot)
{
    return hier->leaders[node * hier->slots + slot];
}

/* The group (run->rooted) of one rank per node, stands_for(hier, node, root)
 * standing for each, ring its profiled order or NULL; *group is NULL when this
 * rank is not in it. */
static inline int node_group(struct run *run,
                             int (*stands_for)(const struct coll_async_hier *hier, int node,
                                               int root),
                             int root, const int *ring, const struct coll_async_leaders **group)
{
    struct coll_async_hier *hier = run->hier;

    *group = NULL;
    run->rooted_peer = malloc(sizeof(uint32_t) * (size_t) hier->node_count);
    if (NULL == run->rooted_peer) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (int node = 0; node < hier->node_count; ++node) {
        run->rooted_peer[node] = hier->peers.id[stands_for(hier, node, root)];
    }
    run->rooted = (struct coll_async_leaders){.net = hier->peers.net,
                                              .size = hier->node_count,
                                              .rank = hier->node,
                                              .peer = run->rooted_peer,
                                              .ring = ring};
    if (hier->peers.id[hier->rank] == run->rooted_peer[hier->node]) {
        *group = &run->rooted;
    }
    return OMPI_SUCCESS;
}

/* The root on its node, the node's first leader elsewhere. */
static inline int root_or_leader(const struct coll_async_hier *hier, int node, int root)
{
    return node == hier->node_of[root] ? root : leader_of(hier, node, 0);
}

/* bcast and reduce: the group of one rank per node in which the root stands for
 * its node; NULL when this rank is not in it. */
static inline int rooted_group(struct run *run, int root, const struct coll_async_leaders **group)
{
    return node_group(run, root_or_leader, root, run->hier->ring, group);
}

/* The rank that stands for this node in a rooted collective. */
static inline int representative(const struct run *run, int root)
{
    return root_or_leader(run->hier, run->hier->node, root);
}

/* coll_async_hier_exchanges.c: gather and scatter (scatter: true) through the
 * root's representatives, alltoall through the nodes' first leaders. */
int coll_async_hier_plan_rooted(struct run *run, const struct coll_async_sched *op, bool scatter);
int coll_async_hier_plan_alltoall(struct run *run, const struct coll_async_sched *op);

/* coll_async_hier_scan.c: scan and exscan (exclusive: true) in node order, and
 * its SCAN stages' folds: this rank's prefix inside its node (and the tail's
 * total), the tail's prefix of the nodes before, that prefix folded in. */
#define COLL_ASYNC_HIER_SCAN_LOCAL 0
#define COLL_ASYNC_HIER_SCAN_PREFIX 1
#define COLL_ASYNC_HIER_SCAN_FINISH 2
int coll_async_hier_plan_scan(struct run *run, const struct coll_async_sched *op, bool exclusive);
void coll_async_hier_scan_compute(struct run *run, const struct coll_async_sched *op,
                                  const struct stage *stage);

/* coll_async_hier_v.c: allgatherv with the nodes' counts, reduce_scatter(_block)
 * through the leaders' allreduce, and allgatherv's UNPACK stage. */
int coll_async_hier_plan_allgatherv(struct run *run, const struct coll_async_sched *op);
int coll_async_hier_plan_reduce_scatter(struct run *run, const struct coll_async_sched *op);
int coll_async_hier_v_unpack(const struct run *run);

#endif /* MCA_COLL_ASYNC_HIER_RUN_H */
