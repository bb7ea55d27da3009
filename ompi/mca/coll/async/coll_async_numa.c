/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: collectives on one node as runs of NUMA stages. See
 * coll_async_numa.h.
 *
 * Each stage is one of the shared-memory schedules (coll_async_schedule.h) on a
 * domain's channel or on the leaders' channel; every rank of a channel runs the
 * same stages on it in the same order, so their sequence numbers agree.
 * allreduce: reduce to each domain's leader, allreduce between the leaders,
 * bcast from each leader. barrier: the domain's barrier, the leaders', then each
 * leader releases its domain. allgather: the domain's allgather into its block,
 * the leaders' allgather of domain blocks (one bcast per domain where domains
 * differ in size), a permute where domains are not consecutive ranks, a bcast
 * of the whole from each leader. Rooted, the leaders' channel is fixed, so the
 * root's domain leader stands for the root between domains: bcast from a root
 * that does not lead goes first to its domain, then from its leader to the
 * others'; reduce to it: the other domains reduce to their leaders, the leaders
 * to the root's domain leader, whose share then enters its domain's reduce to
 * the root (the builtin operations commute).
 *
 * Its own runner, not coll_async_hierarchical.c's: these stages are shared
 * memory only, on several channels, with no leader that can fail between nodes.
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "ompi/constants.h"

#include "coll_async.h"
#include "coll_async_groups.h"
#include "coll_async_numa.h"
#include "coll_async_schedule.h"
#include "transport/coll_async_scratch.h"

enum stage_kind {
    STAGE_SHM,     /* a shared-memory schedule on a domain's or the leaders' channel */
    STAGE_COPY,    /* bytes from sbuf to rbuf */
    STAGE_PERMUTE, /* allgather: domain-ordered blocks to rank order */
};

struct stage {
    enum stage_kind kind;
    void (*begin)(struct coll_async_op *op);
    struct coll_async_channel *channel;
    int root;          /* on the channel, -1: none */
    const void *sbuf;
    void *rbuf;
    size_t count, bytes;
};

struct run {
    struct coll_async_numa *numa;
    enum coll_async_family family;
    struct stage *stages; /* at most domain_count + 4 */
    int stage_count, at;
    bool started;
    struct coll_async_sched shm; /* the stage in progress */
    char *temp, *by_domain;
    char token;                  /* barrier: what the leaders' release carries */
    int status;
};

void *coll_async_numa_run_new(struct coll_async_numa *numa, enum coll_async_family family)
{
    struct run *run = calloc(1, sizeof(*run));

    if (NULL != run) {
        run->numa = numa;
        run->family = family;
        run->stages = calloc((size_t) numa->domain_count + 4, sizeof(*run->stages));
        if (NULL == run->stages) {
            free(run);
            run = NULL;
        }
    }
    return run;
}

static void release_temporaries(struct run *run)
{
    coll_async_scratch_give(run->temp);
    coll_async_scratch_give(run->by_domain);
    run->temp = run->by_domain = NULL;
}

void coll_async_numa_run_free(void *opaque)
{
    struct run *run = opaque;

    release_temporaries(run);
    free(run->stages);
    free(run);
}

/* Building the stages */

static struct stage *add(struct run *run, enum stage_kind kind)
{
    struct stage *stage = &run->stages[run->stage_count++];

    *stage = (struct stage){.kind = kind, .root = -1};
    return stage;
}

static void add_shm(struct run *run, void (*begin)(struct coll_async_op *),
                    struct coll_async_channel *channel, int root, const void *sbuf, void *rbuf,
                    size_t count, size_t bytes)
{
    struct stage *stage = add(run, STAGE_SHM);

    stage->begin = begin;
    stage->channel = channel;
    stage->root = root;
    stage->sbuf = sbuf;
    stage->rbuf = rbuf;
    stage->count = count;
    stage->bytes = bytes;
}

/* On this rank's domain's channel, when it has one; root: a rank of the domain. */
static void add_domain(struct run *run, void (*begin)(struct coll_async_op *), int root_rank,
                       const void *sbuf, void *rbuf, size_t count, size_t bytes)
{
    struct coll_async_numa *numa = run->numa;

    if (numa->has_domain) {
        add_shm(run, begin, &numa->domain_channel,
                root_rank < 0 ? -1 : coll_async_numa_local_index(numa, root_rank), sbuf, rbuf,
                count, bytes);
    }
}

/* On the leaders' channel, when this rank leads; root: a domain. */
static void add_leaders(struct run *run, void (*begin)(struct coll_async_op *), int root_domain,
                        const void *sbuf, void *rbuf, size_t count, size_t bytes)
{
    if (run->numa->leads) {
        add_shm(run, begin, &run->numa->leaders_channel, root_domain, sbuf, rbuf, count, bytes);
    }
}

static void add_copy(struct run *run, const void *from, void *to, size_t bytes)
{
    struct stage *stage;

    if (from != to && 0 < bytes) {
        stage = add(run, STAGE_COPY);
        stage->sbuf = from;
        stage->rbuf = to;
        stage->bytes = bytes;
    }
}

static int my_leader(const struct run *run)
{
    return run->numa->leaders[run->numa->domain];
}

static void plan_allreduce(struct run *run, const struct coll_async_sched *op)
{
    if (run->numa->has_domain) {
        add_domain(run, coll_async_reduction_begin, my_leader(run), op->sbuf, op->rbuf, op->count,
                   op->bytes);
    } else {
        add_copy(run, op->sbuf, op->rbuf, op->bytes);
    }
    add_leaders(run, coll_async_reduction_begin, -1, op->rbuf, op->rbuf, op->count, op->bytes);
    add_domain(run, coll_async_bcast_begin, my_leader(run), NULL, op->rbuf, 0, op->bytes);
}

static void plan_bcast(struct run *run, const struct coll_async_sched *op)
{
    struct coll_async_numa *numa = run->numa;
    int root_domain = numa->domain_of[op->root];

    if (root_domain == numa->domain && op->root != my_leader(run)) {
        add_domain(run, coll_async_bcast_begin, op->root, NULL, op->rbuf, 0, op->bytes);
        add_leaders(run, coll_async_bcast_begin, root_domain, NULL, op->rbuf, 0, op->bytes);
        return;
    }
    add_leaders(run, coll_async_bcast_begin, root_domain, NULL, op->rbuf, 0, op->bytes);
    add_domain(run, coll_async_bcast_begin, my_leader(run), NULL, op->rbuf, 0, op->bytes);
}

static int plan_reduce(struct run *run, const struct coll_async_sched *op)
{
    struct coll_async_numa *numa = run->numa;
    int root_domain = numa->domain_of[op->root];
    const void *share = op->sbuf; /* what this rank hands the leaders' reduce */

    if (root_domain == numa->domain && op->root == my_leader(run)) {
        if (numa->has_domain) {
            add_domain(run, coll_async_reduction_begin, op->root, op->sbuf, op->rbuf, op->count,
                       op->bytes);
            share = op->rbuf;
        }
        add_leaders(run, coll_async_reduction_begin, root_domain, share, op->rbuf, op->count,
                    op->bytes);
        return OMPI_SUCCESS;
    }
    /* A leader that is not the root reduces into scratch. */
    if (numa->leads && (numa->has_domain || root_domain == numa->domain)) {
        run->temp = coll_async_scratch_take(op->bytes);
        if (NULL == run->temp) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    if (root_domain != numa->domain) {
        if (numa->has_domain) {
            add_domain(run, coll_async_reduction_begin, my_leader(run), op->sbuf,
                       numa->leads ? run->temp : op->rbuf, op->count, op->bytes);
            share = run->temp;
        }
        add_leaders(run, coll_async_reduction_begin, root_domain, share, op->rbuf, op->count,
                    op->bytes);
        return OMPI_SUCCESS;
    }
    /* The root's domain, its root not the leader: the leader brings the other
     * domains' share into the domain's reduce. */
    add_leaders(run, coll_async_reduction_begin, root_domain, op->sbuf, run->temp, op->count,
                op->bytes);
    add_domain(run, coll_async_reduction_begin, op->root, numa->leads ? run->temp : op->sbuf,
               op->rbuf, op->count, op->bytes);
    return OMPI_SUCCESS;
}

static void plan_barrier(struct run *run)
{
    add_domain(run, coll_async_barrier_begin, -1, NULL, NULL, 0, 0);
    add_leaders(run, coll_async_barrier_begin, -1, NULL, NULL, 0, 0);
    add_domain(run, coll_async_bcast_begin, my_leader(run), NULL, &run->token, 0,
               sizeof(run->token));
}

/* The domains' blocks lie in rank order in rbuf when each domain holds
 * consecutive ranks; otherwise the leader gathers them in domain order in scratch
 * and permutes them, and the others' domain allgather goes to scratch. */
static int plan_allgather(struct run *run, const struct coll_async_sched *op)
{
    struct coll_async_numa *numa = run->numa;
    size_t block = op->bytes, total = block * (size_t) numa->size;
    size_t mine_at = (size_t) numa->domain_first[numa->domain] * block;
    size_t domain_bytes = (size_t) coll_async_numa_domain_size(numa, numa->domain) * block;
    char *by_domain = op->rbuf, *mine;

    if (!numa->rank_ordered) {
        by_domain = run->by_domain = coll_async_scratch_take(total);
        if (NULL == by_domain) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    mine = by_domain + mine_at;
    if (numa->has_domain) {
        add_domain(run, coll_async_allgather_begin, -1, op->sbuf, mine, 0, block);
    } else {
        add_copy(run, op->sbuf, mine, block);
    }
    if (numa->even) {
        add_leaders(run, coll_async_allgather_begin, -1, mine, by_domain, 0, domain_bytes);
    } else {
        for (int domain = 0; domain < numa->domain_count; ++domain) {
            add_leaders(run, coll_async_bcast_begin, domain, NULL,
                        by_domain + (size_t) numa->domain_first[domain] * block, 0,
                        (size_t) coll_async_numa_domain_size(numa, domain) * block);
        }
    }
    if (!numa->rank_ordered && numa->leads) {
        struct stage *permute = add(run, STAGE_PERMUTE);

        permute->sbuf = by_domain;
        permute->rbuf = op->rbuf;
        permute->bytes = block;
    }
    add_domain(run, coll_async_bcast_begin, my_leader(run), NULL, op->rbuf, 0, total);
    return OMPI_SUCCESS;
}

static int plan(struct run *run, const struct coll_async_sched *op)
{
    switch (run->family) {
    case COLL_ASYNC_FAMILY_ALLREDUCE:
        plan_allreduce(run, op);
        return OMPI_SUCCESS;
    case COLL_ASYNC_FAMILY_REDUCE:
        return plan_reduce(run, op);
    case COLL_ASYNC_FAMILY_BCAST:
        plan_bcast(run, op);
        return OMPI_SUCCESS;
    case COLL_ASYNC_FAMILY_BARRIER:
        plan_barrier(run);
        return OMPI_SUCCESS;
    case COLL_ASYNC_FAMILY_ALLGATHER:
        return plan_allgather(run, op);
    default:
        return OMPI_ERR_BAD_PARAM; /* not in NUMA stages (coll_async_decision.c) */
    }
}

/* Running the stages */

static int continue_stage(struct run *run, const struct coll_async_sched *op, struct stage *stage)
{
    switch (stage->kind) {
    case STAGE_SHM:
        if (!run->started) {
            run->shm = (struct coll_async_sched){.channel = stage->channel,
                                                 .algorithm = op->algorithm,
                                                 .sbuf = stage->sbuf,
                                                 .rbuf = stage->rbuf,
                                                 .count = stage->count,
                                                 .bytes = stage->bytes,
                                                 .reduction = op->reduction,
                                                 .root = stage->root};
            stage->begin(&run->shm.base);
            run->started = true;
        }
        return run->shm.base.step(&run->shm.base);
    case STAGE_COPY:
        memcpy(stage->rbuf, stage->sbuf, stage->bytes);
        return OMPI_SUCCESS;
    case STAGE_PERMUTE:
        coll_async_groups_permute(run->numa->domain_ranks, run->numa->size, stage->sbuf,
                                  stage->rbuf, stage->bytes);
        return OMPI_SUCCESS;
    }
    return OMPI_ERR_BAD_PARAM;
}

static int step(struct coll_async_op *op)
{
    struct run *run = op->plan;
    const struct coll_async_sched *sched = coll_async_sched_of(op);

    while (run->at < run->stage_count) {
        int rc = continue_stage(run, sched, &run->stages[run->at]);

        if (COLL_ASYNC_AGAIN == rc) {
            return COLL_ASYNC_AGAIN;
        }
        /* A failed stage still lets the next ones run, so the channels' ranks
         * stay in step; the call fails at the end. */
        run->started = false;
        ++run->at;
        if (OMPI_SUCCESS != rc) {
            run->status = rc;
        }
    }
    release_temporaries(run);
    return OMPI_SUCCESS == run->status ? OMPI_SUCCESS : OMPI_ERROR;
}

/* Plans the run's stages for op. */
static void start(struct coll_async_op *op, struct run *run)
{
    int rc;

    release_temporaries(run);
    run->stage_count = run->at = 0;
    run->started = false;
    run->status = OMPI_SUCCESS;
    rc = plan(run, coll_async_sched_of(op));
    if (OMPI_SUCCESS != rc) {
        /* Out of memory for scratch: the call fails, and, as in the
         * hierarchical runs, the peers of the stages it skips are not told. */
        run->status = rc;
    }
    op->step = step;
}

/* The schedule of family on the node's one channel. */
static void (*flat_begin(enum coll_async_family family))(struct coll_async_op *)
{
    switch (family) {
    case COLL_ASYNC_FAMILY_ALLREDUCE:
    case COLL_ASYNC_FAMILY_REDUCE:
        return coll_async_reduction_begin;
    case COLL_ASYNC_FAMILY_BCAST:
        return coll_async_bcast_begin;
    case COLL_ASYNC_FAMILY_ALLGATHER:
        return coll_async_allgather_begin;
    default:
        return coll_async_barrier_begin;
    }
}

void coll_async_numa_begin(struct coll_async_op *op)
{
    struct run *run = op->plan;

    if (run->numa->flat) {
        /* Not every rank opened its NUMA channels (settled before this begin):
         * all run on the node's channel, which op names. */
        flat_begin(run->family)(op);
        return;
    }
    OPAL_THREAD_ADD_FETCH64(&mca_coll_async_numa_calls, 1);
    start(op, run);
}

enum coll_async_family coll_async_numa_family(void (*begin)(struct coll_async_op *), int root)
{
    if (coll_async_reduction_begin == begin) {
        return root < 0 ? COLL_ASYNC_FAMILY_ALLREDUCE : COLL_ASYNC_FAMILY_REDUCE;
    }
    if (coll_async_bcast_begin == begin) {
        return COLL_ASYNC_FAMILY_BCAST;
    }
    if (coll_async_allgather_begin == begin) {
        return COLL_ASYNC_FAMILY_ALLGATHER;
    }
    return coll_async_barrier_begin == begin ? COLL_ASYNC_FAMILY_BARRIER
                                             : COLL_ASYNC_NUM_FAMILIES;
}

void coll_async_numa_stage(struct coll_async_op *op, void *opaque, enum coll_async_family family)
{
    struct run *run = opaque;

    run->family = family;
    op->plan = run;
    start(op, run);
}
