/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the leaders' algorithms between nodes.
 *
 * One leader per node forms a group on the mapper between nodes (TCP or verbs
 * per peer); these algorithms run a collective among them as a resumable state
 * machine, which the hierarchical
 * schedules drive from the engine (coll_async_hier.h). Each algorithm is planned
 * at start as this rank's list of rounds (send at most one block, receive at
 * most one, then maybe reduce what came), numbered by steps that all ranks
 * number alike, so a transfer's tag is the collective's base tag plus its step.
 *
 * Never calls coll_async_net_progress(): the engine's driver does.
 * Pure C, no Open MPI header (reductions go through coll_async_reduce()).
 */

#ifndef MCA_COLL_ASYNC_INTERNODE_H
#define MCA_COLL_ASYNC_INTERNODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll_async_decision.h"
#include "coll_async_reduction.h"
#include "transport/coll_async_net.h"

/* Steps an algorithm may add to a collective's base tag: tag + step, step < this
 * (a ring allreduce takes 2(n - 1): 32768 nodes). */
#define COLL_ASYNC_INTERNODE_TAG_STEPS 65536

/* The group a collective runs in between nodes: one leader per node. */
struct coll_async_leaders {
    struct coll_async_net *net;
    int size;             /* leaders */
    int rank;             /* this process's index among them */
    const uint32_t *peer; /* index -> the transport's peer id */
    const int *ring;      /* ring position -> index (profiled order); NULL: identity */
};

struct coll_async_internode_round;
struct coll_async_internode_transfers;

struct coll_async_internode {
    /* Set by the caller before start. */
    const struct coll_async_leaders *group;
    uint64_t tag;            /* base tag, unique per collective in flight on the group */
    enum coll_async_alg alg; /* the parameter's, then what runs */
    /* allreduce: in/out, count elements; reduce_scatter: the same, only each
     * leader's block (block_offset, block_bytes: whole elements) reduced at the end; bcast: bytes, the root's in, the others' out;
     * reduce: every leader's input, the result at the root (the others' is
     * clobbered); allgather: the whole result, this leader's block in place;
     * gather: the root's result, each leader's block in place, its subtree's
     * blocks received next to it; scatter: the root's blocks, each leader's
     * subtree received in place. */
    void *buf;
    size_t count;
    const struct coll_async_reduction *reduction;
    size_t bytes;
    int root;                /* bcast, reduce: group index */
    /* allgather, reduce_scatter: per group index; gather, scatter: per rank relative to the root
     * (the root's first), blocks of consecutive relative ranks adjacent */
    const size_t *block_offset, *block_bytes;
    void *recv_buf;          /* alltoall: what comes, per group index at block_offset too */
    const char *error;       /* after a failure: why */

    /* Private. */
    struct coll_async_internode_round *rounds;
    int round_count, at;
    int posted;              /* the round at `at` has its transfers posted */
    char *scratch;
    struct coll_async_internode_transfers *transfers;
};

/* Resolves alg through the decision table (coll_async_decision_between()), plans
 * the rounds of family (allreduce, bcast, reduce, barrier, allgather, gather,
 * scatter, alltoall; reduce_scatter, always a ring); 0 or -errno. */
int coll_async_internode_start(struct coll_async_internode *x, enum coll_async_family family);

/* The size the decision table chooses family's algorithm by, from x's arguments:
 * reductions' vector, allgather's (and gather's, scatter's, alltoall's) blocks
 * together, else bytes. */
size_t coll_async_internode_bytes(const struct coll_async_internode *x,
                                  enum coll_async_family family);

/* Posts what can be posted: 0 done, COLL_ASYNC_INTERNODE_AGAIN, or -errno (x->error
 * says why). */
#define COLL_ASYNC_INTERNODE_AGAIN 1
int coll_async_internode_progress(struct coll_async_internode *x);

/* Round i (< round_count) of a started collective: its step, the group index it
 * sends to and receives from (-1: none), the byte counts, and whether what comes
 * is reduced (bench/simulate prices that). Every send must meet
 * a receive of the same step and length at its peer, or a rendezvous transport
 * waits for ever: tests check that the leaders' plans pair up. */
struct coll_async_internode_round_plan {
    int step, to, from;
    size_t send_bytes, recv_bytes;
    bool reduces;
};
struct coll_async_internode_round_plan
coll_async_internode_round_plan(const struct coll_async_internode *x, int i);

/* Frees what start took. After a failure, transfers still in the transport's
 * hands (a peer that never answers) keep their memory: it is left to them, not
 * freed under them. */
void coll_async_internode_fini(struct coll_async_internode *x);

#endif /* MCA_COLL_ASYNC_INTERNODE_H */
