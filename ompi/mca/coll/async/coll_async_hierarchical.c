/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: collectives across nodes, as runs of stages. See coll_async_hier.h.
 *
 * Every rank of a node runs the same stages on the node's channel, in the same
 * order, so their sequence numbers agree; the leaders add the stages between
 * nodes. allreduce: reduce to the leaders (one share of the vector per leader
 * above multi_leader_bytes), allreduce between nodes, broadcast from the
 * leaders. reduce and bcast: the root stands for its node, so its data needs no
 * extra hop; but a bcast over the leaders' multicast group
 * (coll_async_multicast.h) has the node's first leader, its member, stand for
 * it, after the root's local bcast when the root does not lead. barrier: local
 * barrier, leaders' barrier, release. allgather: local allgather into the
 * node's block, leaders' allgather of node blocks, broadcast of the whole.
 * gather: the node's blocks to its representative (as for reduce), the
 * representatives' binomial gather to the root, the root's copy into rank
 * order; scatter backwards. alltoall: the node's send buffers gathered at its
 * first leader, node-pair aggregates exchanged between the leaders, the receive
 * buffers scattered back. Those three are planned in coll_async_hier_exchanges.c
 * (their data: coll_async_hier_rooted.c, coll_async_hier_alltoall.c);
 * allgatherv and reduce_scatter(_block) by node in coll_async_hier_v.c; the run
 * and its stages are in coll_async_hier_run.h.
 *
 * A leader that fails between nodes tells its node: before each broadcast from a
 * leader, the leader broadcasts its status, and the ranks skip the data and
 * return an error instead of waiting for it.
 */

#include "ompi_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll_async_groups.h"
#include "coll_async_hier_run.h"
#include "coll_async_numa.h"

void *coll_async_hier_run_new(struct coll_async_hier *hier, enum coll_async_family family)
{
    struct run *run = calloc(1, sizeof(*run));

    if (NULL != run) {
        run->hier = hier;
        run->family = family;
        if (NULL != hier->numa
            && NULL == (run->numa_run = coll_async_numa_run_new(hier->numa, family))) {
            free(run);
            run = NULL;
        }
    }
    return run;
}

static void release_temporaries(struct run *run)
{
    coll_async_scratch_give(run->temp);
    free(run->rooted_peer);
    free(run->block_offset);
    free(run->block_bytes);
    coll_async_exchange_free(run->exchange[0]);
    coll_async_exchange_free(run->exchange[1]);
    run->exchange[0] = run->exchange[1] = NULL;
    run->temp = NULL;
    run->rooted_peer = NULL;
    run->block_offset = run->block_bytes = NULL;
}

void coll_async_hier_run_free(void *opaque)
{
    struct run *run = opaque;

    release_temporaries(run);
    coll_async_block_release(&run->blocks.mine);
    coll_async_block_release(&run->blocks.first);
    coll_async_hier_v_free(run->v);
    if (NULL != run->numa_run) {
        coll_async_numa_run_free(run->numa_run);
    }
    free(run);
}

struct coll_async_hier_blocks *coll_async_hier_run_blocks(void *opaque)
{
    return &((struct run *) opaque)->blocks;
}

/* Building the stages */

/* Above multi_leader_bytes, each of the node's leaders takes a share of the vector
 * between nodes, in parallel. */
static void plan_allreduce(struct run *run, const struct coll_async_sched *op)
{
    struct coll_async_hier *hier = run->hier;
    size_t size = op->reduction.size;
    int parts = coll_async_decision_leader_parts(op->bytes, hier->multi_leader_bytes,
                                                 hier->slots);
    size_t first[COLL_ASYNC_HIER_MAX_SLOTS], share[COLL_ASYNC_HIER_MAX_SLOTS];

    for (int part = 0; part < parts; ++part) {
        schedule_slice(op->count, size, parts, part, &first[part], &share[part]);
    }
    for (int part = 0; part < parts && hier->has_local; ++part) {
        if (0 < share[part]) {
            add_local(run, coll_async_reduction_begin, leader_of(hier, hier->node, part),
                      (const char *) op->sbuf + first[part] * size,
                      (char *) op->rbuf + first[part] * size, share[part], share[part] * size);
        }
    }
    if (!hier->has_local) {
        add_copy(run, op->sbuf, op->rbuf, op->bytes);
    }
    if (0 <= hier->slot && hier->slot < parts && 0 < share[hier->slot]) {
        add_net(run, COLL_ASYNC_FAMILY_ALLREDUCE, &hier->group, 0,
                (char *) op->rbuf + first[hier->slot] * size, share[hier->slot], 0);
    }
    for (int part = 0; part < parts && hier->has_local; ++part) {
        if (0 < share[part]) {
            add_from_leader(run, leader_of(hier, hier->node, part),
                            (char *) op->rbuf + first[part] * size, share[part] * size);
        }
    }
}

/* Over multicast: the node's first leader is its member, so a root that does
 * not lead hands its data to it first. */
static void plan_multicast_bcast(struct run *run, const struct coll_async_sched *op)
{
    struct coll_async_hier *hier = run->hier;
    int root_node = hier->node_of[op->root], leader = leader_of(hier, hier->node, 0);
    bool root_here = root_node == hier->node;

    if (root_here && op->root != leader && hier->has_local) {
        add_local(run, coll_async_bcast_begin, op->root, NULL, op->rbuf, 0, op->bytes);
    }
    if (0 == hier->slot) {
        struct stage *stage = add(run, STAGE_MULTICAST);

        stage->root = root_node;
        stage->rbuf = op->rbuf;
        stage->bytes = op->bytes;
    }
    if (!hier->has_local) {
        return;
    }
    if (!root_here) {
        add_from_leader(run, leader, op->rbuf, op->bytes);
    } else if (op->root == leader) {
        add_local(run, coll_async_bcast_begin, op->root, NULL, op->rbuf, 0, op->bytes);
    }
}

static int plan_bcast(struct run *run, const struct coll_async_sched *op)
{
    struct coll_async_hier *hier = run->hier;
    const struct coll_async_leaders *group;
    int rc;

    if (mca_coll_async_hier_multicast_takes(hier, op->bytes)) {
        plan_multicast_bcast(run, op);
        return OMPI_SUCCESS;
    }
    rc = rooted_group(run, op->root, &group);

    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    if (NULL != group) {
        add_net(run, COLL_ASYNC_FAMILY_BCAST, group, hier->node_of[op->root], op->rbuf, 0,
                op->bytes);
    }
    if (!hier->has_local) {
        return OMPI_SUCCESS;
    }
    if (hier->node_of[op->root] == hier->node) {
        add_local(run, coll_async_bcast_begin, op->root, NULL, op->rbuf, 0, op->bytes);
    } else {
        add_from_leader(run, representative(run, op->root), op->rbuf, op->bytes);
    }
    return OMPI_SUCCESS;
}

static int plan_reduce(struct run *run, const struct coll_async_sched *op)
{
    struct coll_async_hier *hier = run->hier;
    const struct coll_async_leaders *group;
    int rc = rooted_group(run, op->root, &group);
    void *result = op->rbuf;

    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    /* A representative other than the root reduces into scratch. */
    if (NULL != group && hier->rank != op->root) {
        result = run->temp = coll_async_scratch_take(op->bytes);
        if (NULL == run->temp) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    if (hier->has_local) {
        add_local(run, coll_async_reduction_begin, representative(run, op->root), op->sbuf,
                  result, op->count, op->bytes);
    } else {
        add_copy(run, op->sbuf, result, op->bytes);
    }
    if (NULL != group) {
        add_net(run, COLL_ASYNC_FAMILY_REDUCE, group, hier->node_of[op->root], result,
                op->count, 0);
    }
    return OMPI_SUCCESS;
}

static void plan_barrier(struct run *run)
{
    struct coll_async_hier *hier = run->hier;

    if (hier->has_local) {
        add_local(run, coll_async_barrier_begin, -1, NULL, NULL, 0, 0);
    }
    if (0 == hier->slot) {
        add_net(run, COLL_ASYNC_FAMILY_BARRIER, &hier->group, 0, NULL, 0, 0);
    }
    if (hier->has_local) {
        /* The leader's status releases the node. */
        add(run, STAGE_STATUS)->root = coll_async_hier_local_index(hier,
                                                                    leader_of(hier, hier->node, 0));
    }
}

/* The nodes' blocks lie in rank order in rbuf when the nodes hold consecutive
 * ranks; otherwise they are gathered in node order in scratch and permuted. */
static int plan_allgather(struct run *run, const struct coll_async_sched *op)
{
    struct coll_async_hier *hier = run->hier;
    size_t block = op->bytes, total = block * (size_t) hier->size;
    char *by_node = op->rbuf;
    char *mine;

    if (!hier->rank_ordered) {
        by_node = run->temp = coll_async_scratch_take(total);
        if (NULL == by_node) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    mine = by_node + (size_t) hier->node_first[hier->node] * block;
    if (hier->has_local) {
        add_local(run, coll_async_allgather_begin, -1, op->sbuf, mine, 0, block);
    } else {
        add_copy(run, op->sbuf, mine, block);
    }
    if (0 == hier->slot) {
        run->block_offset = malloc(sizeof(size_t) * (size_t) hier->node_count);
        run->block_bytes = malloc(sizeof(size_t) * (size_t) hier->node_count);
        if (NULL == run->block_offset || NULL == run->block_bytes) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        for (int node = 0; node < hier->node_count; ++node) {
            run->block_offset[node] = (size_t) hier->node_first[node] * block;
            run->block_bytes[node] = (size_t) coll_async_hier_node_size(hier, node) * block;
        }
        add_net(run, COLL_ASYNC_FAMILY_ALLGATHER, &hier->group, 0, by_node, 0, total);
        if (!hier->rank_ordered) {
            struct stage *permute = add(run, STAGE_PERMUTE);

            permute->sbuf = by_node;
            permute->rbuf = op->rbuf;
            permute->bytes = block;
        }
    }
    if (hier->has_local) {
        add_from_leader(run, leader_of(hier, hier->node, 0), op->rbuf, total);
    }
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
        return plan_bcast(run, op);
    case COLL_ASYNC_FAMILY_BARRIER:
        plan_barrier(run);
        return OMPI_SUCCESS;
    case COLL_ASYNC_FAMILY_ALLGATHER:
        return plan_allgather(run, op);
    case COLL_ASYNC_FAMILY_GATHER:
        return coll_async_hier_plan_rooted(run, op, false);
    case COLL_ASYNC_FAMILY_SCATTER:
        return coll_async_hier_plan_rooted(run, op, true);
    case COLL_ASYNC_FAMILY_ALLTOALL:
        return coll_async_hier_plan_alltoall(run, op);
    case COLL_ASYNC_FAMILY_SCAN:
    case COLL_ASYNC_FAMILY_EXSCAN:
        return coll_async_hier_plan_scan(run, op, COLL_ASYNC_FAMILY_EXSCAN == run->family);
    case COLL_ASYNC_FAMILY_ALLGATHERV:
        return coll_async_hier_plan_allgatherv(run, op);
    case COLL_ASYNC_FAMILY_REDUCE_SCATTER:
    case COLL_ASYNC_FAMILY_REDUCE_SCATTER_BLOCK:
        return coll_async_hier_plan_reduce_scatter(run, op);
    default:
        return OMPI_ERR_BAD_PARAM; /* not hierarchical (coll_async_decision.c) */
    }
}

/* Running the stages */

/* A node stage on a node of several NUMA domains runs as NUMA stages where its
 * family does (coll_async_numa.h); whether it was begun so. */
static bool numa_stage(struct run *run, const struct stage *stage)
{
    enum coll_async_family family = coll_async_numa_family(stage->begin, stage->root);

    if (NULL == run->numa_run || COLL_ASYNC_NUM_FAMILIES == family
        || !run->hier->numa->staged[family] || run->hier->numa->flat) {
        return false;
    }
    coll_async_numa_stage(&run->local.base, run->numa_run, family);
    if (!run->numa_counted) {
        OPAL_THREAD_ADD_FETCH64(&mca_coll_async_numa_calls, 1);
        run->numa_counted = true;
    }
    return true;
}

/* The leaders' algorithm: the run's family's parameter where it names one between
 * nodes (allgatherv's ring runs the leaders' allgather as a ring), else that of
 * the collective the leaders run. */
static enum coll_async_alg leaders_alg(const struct run *run, const struct stage *stage)
{
    enum coll_async_alg own = run->hier->algorithm[run->family];

    return coll_async_decision_between_nodes(own) ? own : run->hier->algorithm[stage->net];
}

static void say_row(struct run *run, int level, int nodes, const struct coll_async_tuning_row *row,
                    size_t bytes, const char *instead);

/* Verbose level 1 (the first leader of the first group; the others at 2), once
 * per communicator and row: the row of the tuning file that chose the algorithm
 * of a stage between nodes, or, once per family, that none did. From the thread
 * that runs the stage, which may be the progress thread: said later. */
static void say_tuned(struct run *run, const struct stage *stage,
                      const struct coll_async_tuning_row *row, size_t bytes)
{
    struct coll_async_hier *hier = run->hier;
    int level = 0 == hier->slot && 0 == stage->group->rank ? 1 : 2;
    char instead[160] = "";

    if (opal_output_get_verbosity(mca_coll_async_output) < level) {
        return;
    }
    if (NULL == row) {
        if (coll_async_tuning_steers(run->family)
            && !(__atomic_fetch_or(&hier->said_built_in, 1u << run->family, __ATOMIC_RELAXED)
              & (1u << run->family))) {
            mca_coll_async_say_later(level,
                                     "coll:async: %s (cid %u): %s of %zu B between %d nodes: "
                                     "%s, by the built-in thresholds (no row of %s applies)",
                                     hier->name, hier->cid, coll_async_family_name(run->family),
                                     bytes, stage->group->size,
                                     coll_async_alg_names[run->net.alg], hier->tuning_file);
        }
        return;
    }
    if (COLL_ASYNC_ALG_MULTICAST == row->alg) {
        snprintf(instead, sizeof(instead), ", point to point here (%s): %s instead",
                 mca_coll_async_hier_multicast_rows_off(hier),
                 coll_async_alg_names[run->net.alg]);
    } else if (row->alg != run->net.alg) {
        snprintf(instead, sizeof(instead), ", which %d nodes cannot run: %s instead",
                 stage->group->size, coll_async_alg_names[run->net.alg]);
    }
    say_row(run, level, stage->group->size, row, bytes, instead);
}

/* Says once per communicator and row (at level) which row chose a stage between
 * nodes, and what ran instead where it was not the row's (instead: "" or ", ..."). */
static void say_row(struct run *run, int level, int nodes, const struct coll_async_tuning_row *row,
                    size_t bytes, const char *instead)
{
    struct coll_async_hier *hier = run->hier;
    char text[160];

    if (__atomic_exchange_n(&hier->tuning_said[row->index], 1, __ATOMIC_RELAXED)) {
        return;
    }
    coll_async_tuning_row_text(row, text, sizeof(text));
    mca_coll_async_say_later(level,
                             "coll:async: %s (cid %u): %s of %zu B between %d nodes: %s, "
                             "chosen by %s:%d (%s)%s",
                             hier->name, hier->cid, coll_async_family_name(run->family), bytes,
                             nodes, coll_async_alg_names[row->alg], hier->tuning_file, row->line,
                             text, instead);
}

/* A bcast over multicast that a row of the tuning file chose: said as any row's
 * (whether the group then works, its own line says: settled()). Only slot 0's
 * leaders run the stage: node 0's says it at level 1. */
static void say_multicast_row(struct run *run, const struct stage *stage)
{
    struct coll_async_hier *hier = run->hier;
    int level = 0 == hier->node ? 1 : 2;
    const struct coll_async_tuning_row *row;

    if (NULL == hier->tuning || opal_output_get_verbosity(mca_coll_async_output) < level) {
        return;
    }
    row = coll_async_tuning_choose(hier->tuning, COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_FAMILY_BCAST,
                                   hier->algorithm[COLL_ASYNC_FAMILY_BCAST], hier->node_count,
                                   stage->bytes);
    if (NULL != row) {
        say_row(run, level, hier->node_count, row, stage->bytes, "");
    }
}

/* A stage between nodes: its leaders' algorithm is the parameters', else the
 * tuning file's row for it, else the decision table's. */
static int start_net(struct run *run, struct stage *stage)
{
    struct coll_async_hier *hier = run->hier;
    const struct coll_async_tuning_row *row;
    size_t bytes;
    int rc;

    if (NULL == hier->tuning) {
        return coll_async_internode_start(&run->net, stage->net);
    }
    bytes = coll_async_internode_bytes(&run->net, stage->net);
    row = coll_async_tuning_choose(hier->tuning, run->family, stage->net, run->net.alg,
                                   stage->group->size, bytes);
    if (NULL != row) {
        run->net.alg = row->alg;
    } else if (COLL_ASYNC_ALG_AUTO != coll_async_decision_leaders(run->net.alg)) {
        return coll_async_internode_start(&run->net, stage->net); /* the parameter's */
    }
    rc = coll_async_internode_start(&run->net, stage->net);
    say_tuned(run, stage, row, bytes);
    return rc;
}

static int start_stage(struct run *run, const struct coll_async_sched *op, struct stage *stage)
{
    struct coll_async_hier *hier = run->hier;
    int rc;

    switch (stage->kind) {
    case STAGE_STATUS:
        run->received = run->status;
        run->local = (struct coll_async_sched){.channel = &hier->local,
                                               .algorithm = hier->algorithm,
                                               .rbuf = &run->received,
                                               .bytes = sizeof(run->received),
                                               .root = stage->root};
        coll_async_bcast_begin(&run->local.base);
        return OMPI_SUCCESS;
    case STAGE_LOCAL:
        run->local = (struct coll_async_sched){.channel = &hier->local,
                                               .algorithm = hier->algorithm,
                                               .sbuf = stage->sbuf,
                                               .rbuf = stage->rbuf,
                                               .count = stage->count,
                                               .bytes = stage->bytes,
                                               .reduction = op->reduction,
                                               .root = stage->root};
        if (!numa_stage(run, stage)) {
            stage->begin(&run->local.base);
        }
        return OMPI_SUCCESS;
    case STAGE_NET:
        run->net = (struct coll_async_internode){.group = stage->group,
                                                 .tag = run->tag,
                                                 .alg = leaders_alg(run, stage),
                                                 .buf = stage->rbuf,
                                                 .count = stage->count,
                                                 .reduction = &op->reduction,
                                                 .bytes = stage->bytes,
                                                 .root = stage->root,
                                                 .block_offset = run->block_offset,
                                                 .block_bytes = run->block_bytes,
                                                 .recv_buf = COLL_ASYNC_FAMILY_ALLTOALL == stage->net
                                                                 ? (char *) stage->rbuf
                                                                       + stage->count
                                                                 : NULL};
        rc = start_net(run, stage);
        if (OMPI_SUCCESS == rc) {
            OPAL_THREAD_ADD_FETCH64(&mca_coll_async_between_calls[run->net.alg], 1);
        }
        return rc;
    case STAGE_MULTICAST:
        say_multicast_row(run, stage);
        run->multicast = (struct coll_async_multicast_call){.group = mca_coll_async_hier_multicast_group(hier),
                                                            .tag = run->tag,
                                                            .root = stage->root,
                                                            .buf = stage->rbuf,
                                                            .bytes = stage->bytes};
        return coll_async_multicast_bcast_start(&run->multicast);
    case STAGE_EXCHANGE:
        run->local = (struct coll_async_sched){.channel = &hier->local,
                                               .algorithm = hier->algorithm,
                                               .base = {.plan = run->exchange[stage->count]},
                                               .root = -1};
        coll_async_exchange_begin(&run->local.base);
        return OMPI_SUCCESS;
    default:
        return OMPI_SUCCESS;
    }
}

/* A stage between nodes has ended with rc (0 or -errno, error saying why): a
 * failure is the run's status now, and the next stages tell the node. Said by
 * the thread that completes the collective, which this one may not be. */
static void ended_between_nodes(struct run *run, int rc, const char *error)
{
    if (0 != rc) {
        coll_async_failure_record(&run->failure, "network failed", run->hier->name,
                                  run->hier->rank, NULL != error ? error : "between nodes");
        run->status = rc < 0 ? rc : -EIO;
    }
}

static int continue_stage(struct run *run, const struct coll_async_sched *op,
                          struct stage *stage)
{
    int rc;

    switch (stage->kind) {
    case STAGE_LOCAL:
    case STAGE_EXCHANGE:
        return run->local.base.step(&run->local.base);
    case STAGE_STATUS:
        rc = run->local.base.step(&run->local.base);
        if (OMPI_SUCCESS == rc && 0 == run->status) {
            run->status = run->received;
        }
        return rc;
    case STAGE_NET:
        rc = coll_async_internode_progress(&run->net);
        if (COLL_ASYNC_INTERNODE_AGAIN != rc) {
            ended_between_nodes(run, rc, run->net.error);
            coll_async_internode_fini(&run->net);
        }
        return COLL_ASYNC_INTERNODE_AGAIN == rc ? COLL_ASYNC_AGAIN : OMPI_SUCCESS;
    case STAGE_MULTICAST:
        rc = coll_async_multicast_progress(&run->multicast);
        if (0 == rc) {
            /* What ran: multicast only where every leader attached (bench/tune reads
             * the counter to know), else the point-to-point bcast that fell back. */
            OPAL_THREAD_ADD_FETCH64(
                &mca_coll_async_between_calls[coll_async_multicast_ready(run->multicast.group)
                                                  ? COLL_ASYNC_ALG_MULTICAST
                                                  : run->multicast.x.alg],
                1);
        }
        if (COLL_ASYNC_INTERNODE_AGAIN != rc) {
            ended_between_nodes(run, rc, run->multicast.error);
        }
        return COLL_ASYNC_INTERNODE_AGAIN == rc ? COLL_ASYNC_AGAIN : OMPI_SUCCESS;
    case STAGE_COPY:
        memcpy(stage->rbuf, stage->sbuf, stage->bytes);
        return OMPI_SUCCESS;
    case STAGE_PERMUTE:
        coll_async_groups_permute(run->hier->node_ranks, run->hier->size, stage->sbuf,
                                  stage->rbuf, stage->bytes);
        return OMPI_SUCCESS;
    case STAGE_SCAN:
        coll_async_hier_scan_compute(run, op, stage);
        return OMPI_SUCCESS;
    case STAGE_UNPACK:
        return coll_async_hier_v_unpack(run);
    case STAGE_REPACK:
        return coll_async_hier_alltoall_repack(run->hier, &run->blocks, run->temp, stage->bytes,
                                               stage->to_user);
    case STAGE_ARRANGE:
        return coll_async_hier_rooted_copy(run->hier, &run->blocks, stage->root, run->by_node,
                                           stage->bytes, stage->to_user, stage->every_rank);
    }
    return OMPI_ERR_BAD_PARAM;
}

static int step(struct coll_async_op *op)
{
    struct run *run = op->plan;
    const struct coll_async_sched *sched = coll_async_sched_of(op);

    while (run->at < run->stage_count) {
        struct stage *stage = &run->stages[run->at];
        int rc = OMPI_SUCCESS;

        if (stage->needs_status && 0 != run->status) {
            ++run->at;
            continue;
        }
        if (!run->started) {
            rc = start_stage(run, sched, stage);
            if (OMPI_SUCCESS != rc) {
                run->status = rc;
                ++run->at;
                continue;
            }
            run->started = true;
        }
        rc = continue_stage(run, sched, stage);
        if (COLL_ASYNC_AGAIN == rc) {
            return COLL_ASYNC_AGAIN;
        }
        run->started = false;
        ++run->at;
        if (OMPI_SUCCESS != rc) {
            run->status = rc;
        }
    }
    release_temporaries(run);
    if (NULL != run->failure.topic) {
        op->failure = &run->failure;
    }
    return 0 == run->status ? OMPI_SUCCESS : OMPI_ERROR;
}

void coll_async_hier_begin(struct coll_async_op *op)
{
    struct run *run = op->plan;
    int rc;

    release_temporaries(run);
    run->stage_count = run->at = 0;
    run->started = false;
    run->status = 0;
    run->failure.topic = NULL;
    run->numa_counted = false;
    op->failure = NULL;
    run->tag = coll_async_peers_next_tag(&run->hier->peers);
    rc = plan(run, coll_async_sched_of(op));
    if (OMPI_SUCCESS != rc) {
        /* The stages planned so far still run, so the node's ranks stay in step;
         * the rest are skipped as after a failure between nodes. */
        run->status = rc;
    }
    op->step = step;
}
