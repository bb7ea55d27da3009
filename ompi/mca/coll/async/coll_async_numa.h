/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: a communicator of one node whose ranks are in several NUMA
 * domains, as its NUMA stages see it.
 *
 * Its ranks grouped by domain (domains numbered in the order their first rank
 * appears, the ranks of one ascending), each domain's ranks joined by a
 * shared-memory channel of their own, and the domains' leaders (each domain's
 * lowest rank, so leader i is the rank at index i of the leaders' channel)
 * joined by another. A collective then runs rank -> domain leader -> node and
 * back (coll_async_numa.c), and only the leaders read across domains: flat, on
 * the node's one channel, every rank polls every other rank's lines, across the
 * socket link for all those of the other domains.
 */

#ifndef MCA_COLL_ASYNC_NUMA_H
#define MCA_COLL_ASYNC_NUMA_H

#include <stdbool.h>

#include "coll_async_collectives.h"
#include "transport/coll_async_channel.h"

struct coll_async_op;

struct coll_async_numa {
    int size, rank;     /* in the communicator */
    int domain_count, domain;
    int *domain_of;     /* rank -> domain */
    int *domain_first;  /* domain_count + 1 offsets into domain_ranks */
    int *domain_ranks;  /* the ranks of each domain, ascending */
    int *leaders;       /* domain -> its lowest rank */
    int local_index;    /* this rank's index among its domain's: its rank on that channel */
    bool rank_ordered;  /* domain_ranks is 0 .. size - 1: a domain's blocks are adjacent */
    bool even;          /* every domain holds as many ranks */
    bool has_domain;    /* this rank's domain holds several ranks: its channel is open */
    struct coll_async_channel domain_channel;
    bool leads;         /* this rank leads its domain: the leaders' channel is open */
    struct coll_async_channel leaders_channel;
    bool staged[COLL_ASYNC_NUM_FAMILIES]; /* runs in NUMA stages (coll_async_decision_numa) */
    bool opened;        /* this rank opened the channels it needs: its vote */
    /* Settled at the first collective (coll_async_settle.c): a rank could not
     * open its channels, so every rank runs flat. Read by the stepping thread. */
    bool flat;
};

static inline int coll_async_numa_domain_size(const struct coll_async_numa *numa, int domain)
{
    return numa->domain_first[domain + 1] - numa->domain_first[domain];
}

/* The index of rank among the ranks of its domain: its rank on that domain's channel. */
int coll_async_numa_local_index(const struct coll_async_numa *numa, int rank);

/*
 * The NUMA stages (coll_async_numa.c) of reduce, bcast, allreduce, barrier and
 * allgather, for the families coll_async_decision_numa() names. The op is the
 * base of a struct coll_async_sched whose arguments are those of the
 * shared-memory schedules (coll_async_schedule.h), its channel unused; its plan
 * is a run from coll_async_numa_run_new(), freed by coll_async_numa_run_free().
 */
void *coll_async_numa_run_new(struct coll_async_numa *numa, enum coll_async_family family);
void coll_async_numa_run_free(void *run);
void coll_async_numa_begin(struct coll_async_op *op);

/* Inside a run across nodes (coll_async_hierarchical.c): the family of a node
 * stage that begin (one of coll_async_schedule.h's) would run with root
 * (COLL_ASYNC_NUM_FAMILIES: none of the five), and that stage begun on op as
 * NUMA stages of family instead, over run (from coll_async_numa_run_new(), reused
 * stage after stage). */
enum coll_async_family coll_async_numa_family(void (*begin)(struct coll_async_op *), int root);
void coll_async_numa_stage(struct coll_async_op *op, void *run, enum coll_async_family family);

#endif /* MCA_COLL_ASYNC_NUMA_H */
