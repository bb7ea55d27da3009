/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: from MPI arguments to ops. See coll_async_native.h.
 */

#include "ompi_config.h"

#include <stdio.h>
#include <string.h>

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/op/op.h"
#include "opal/runtime/opal_progress.h"

#include "coll_async_exchange.h"
#include "coll_async_native.h"
#include "coll_async_numa.h"
#include "coll_async_pairs.h"
#include "coll_async_request.h"
#include "coll_async_say.h"
#include "coll_async_schedule.h"

static void progress(void)
{
    opal_progress();
}

static int nothing(struct coll_async_op *op)
{
    (void) op;
    return OMPI_SUCCESS;
}

static int size_of(const struct coll_async_call *call)
{
    return ompi_comm_size(call->comm);
}

static int rank_of(const struct coll_async_call *call)
{
    return ompi_comm_rank(call->comm);
}

/* Whether the communicator has a shared-memory channel: the specialised schedules
 * need it (and, besides, contiguous data and a kernel). */
static bool has_channel(const struct coll_async_call *call)
{
    return call->module->has_channel;
}

/* Whether the communicator spans nodes: its native collectives are hierarchical. */
static bool spans_nodes(const struct coll_async_call *call)
{
    return NULL != call->module->hier;
}

int coll_async_native_run(const struct coll_async_call *call, struct coll_async_sched *op,
                          bool driven)
{
    int rc;

    mca_coll_async_module_report_settled(call->module, call->comm);
    op->channel = &call->module->channel;
    op->algorithm = call->module->algorithm;
    op->base.stream = NULL != call->stream ? call->stream : &call->module->stream;
    switch (coll_async_form_of(call->coll)) {
    case COLL_ASYNC_BLOCKING:
        rc = driven ? coll_async_engine_run_driven(&op->base, progress)
                    : coll_async_engine_run(&op->base, progress);
        mca_coll_async_say_failure(op->base.failure);
        rc = mca_coll_async_mpi_error(rc);
        coll_async_op_free_plan(&op->base);
        return rc;
    case COLL_ASYNC_NONBLOCKING:
        return mca_coll_async_request_post(op, call->comm, call->request);
    default:
        return mca_coll_async_request_persistent(op, call->coll, call->comm, call->request);
    }
}

/* Across nodes, or over the mapper, a blocking op runs as the engine's driver
 * runs it, the only thread that may touch the network. */
static int execute(const struct coll_async_call *call, struct coll_async_sched *op)
{
    return coll_async_native_run(call, op, spans_nodes(call) || NULL != call->peers);
}

/* Whether every rank's blocks have one size, known to all (coll_async_exchange.h):
 * decided by the collective, never by arguments that only the root reads. */
static bool uniform(enum coll_async_family family)
{
    switch (family) {
    case COLL_ASYNC_FAMILY_ALLGATHERV:
    case COLL_ASYNC_FAMILY_ALLTOALLV:
    case COLL_ASYNC_FAMILY_ALLTOALLW:
    case COLL_ASYNC_FAMILY_GATHERV:
    case COLL_ASYNC_FAMILY_SCATTERV:
    case COLL_ASYNC_FAMILY_REDUCE_SCATTER:
        return false;
    default:
        return true;
    }
}

static int execute_plan(const struct coll_async_call *call, struct coll_async_exchange *plan)
{
    struct coll_async_sched work = {.base = {.begin = coll_async_exchange_begin,
                                             .plan = plan,
                                             .free_plan = coll_async_exchange_free},
                                    .root = -1};

    if (NULL == plan) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    plan->uniform = uniform(coll_async_family_of(call->coll));
    if (spans_nodes(call) || NULL != call->peers) {
        /* Across nodes (and for an agreement) every block is a transfer over the
         * mapper. */
        work.base.begin = coll_async_pairs_begin;
        work.base.free_plan = coll_async_pairs_free;
        work.base.plan = coll_async_pairs_new(plan,
                                              NULL != call->peers ? call->peers
                                                                  : &call->module->hier->peers,
                                              call->comm->c_name, rank_of(call));
        if (NULL == work.base.plan) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    return execute(call, &work);
}

/* Runs op on this node's channel, in NUMA stages where its family runs so on
 * this communicator (coll_async_decision_numa()), or as a hierarchical run of its
 * family across nodes (one of those coll_async_decision_hierarchical() names). */
static int execute_native(const struct coll_async_call *call, struct coll_async_sched *op)
{
    struct coll_async_numa *numa = call->module->numa;
    enum coll_async_family family = coll_async_family_of(call->coll);

    if (NULL != numa && numa->staged[family]) {
        op->base.begin = coll_async_numa_begin;
        op->base.plan = coll_async_numa_run_new(numa, family);
        op->base.free_plan = coll_async_numa_run_free;
        if (NULL == op->base.plan) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        return execute(call, op);
    }
    if (!spans_nodes(call)) {
        return execute(call, op);
    }
    op->base.begin = coll_async_hier_begin;
    op->base.plan = coll_async_hier_run_new(call->module->hier, coll_async_family_of(call->coll));
    op->base.free_plan = coll_async_hier_run_free;
    return NULL == op->base.plan ? OMPI_ERR_OUT_OF_RESOURCE : execute(call, op);
}

static int execute_nothing(const struct coll_async_call *call)
{
    struct coll_async_sched work = {.base = {.step = nothing}, .root = -1};

    return execute(call, &work);
}

/* Where the data of (buf, count, dtype) starts, for a contiguous layout. */
static char *data_start(const void *buf, struct ompi_datatype_t *dtype)
{
    ptrdiff_t true_lb, true_extent;

    ompi_datatype_get_true_extent(dtype, &true_lb, &true_extent);
    return (char *) buf + true_lb;
}

static size_t bytes_of(struct ompi_datatype_t *dtype, size_t count)
{
    size_t size;

    ompi_datatype_type_size(dtype, &size);
    return size * count;
}

static ptrdiff_t extent_of(struct ompi_datatype_t *dtype)
{
    ptrdiff_t lb, extent;

    ompi_datatype_get_extent(dtype, &lb, &extent);
    return extent;
}

static bool contiguous(struct ompi_datatype_t *dtype, size_t count)
{
    return coll_async_block_contiguous(dtype, count);
}

/* Reductions */

/* The receive buffer holds the input with MPI_IN_PLACE. */
static const void *input_of(const void *sbuf, void *rbuf)
{
    return MPI_IN_PLACE == sbuf ? rbuf : sbuf;
}

/*
 * The exchange form of a reduction over a shared plan: every rank sends its whole
 * input to the ranks readers_first..readers_last (none when that is empty), and
 * those that receive fold ranks first..last.
 */
static int fold_inputs(const struct coll_async_call *call, const void *sbuf, void *rbuf,
                       size_t count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                       bool receives, int first, int last, int readers_first, int readers_last)
{
    int n = size_of(call), me = rank_of(call);
    const void *input = input_of(sbuf, rbuf);
    size_t scratch = receives ? (size_t) n * coll_async_exchange_scratch_block(dtype, count) : 0;
    struct coll_async_exchange *plan = coll_async_exchange_new(n, me, false, scratch);

    if (NULL == plan) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (readers_first <= readers_last) {
        coll_async_block_set(&plan->send[0], input, count, dtype);
        plan->readers_first = readers_first;
        plan->readers_last = readers_last;
    }
    if (receives) {
        coll_async_exchange_set_fold(plan, op, dtype, count, first, last, rbuf);
        if (first <= me && me <= last) {
            coll_async_block_set(&plan->self_from, input, count, dtype);
        }
    }
    return execute_plan(call, plan);
}

int coll_async_native_agree(const struct coll_async_call *call, void *buf, size_t count,
                            struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    int last = size_of(call) - 1;

    return fold_inputs(call, MPI_IN_PLACE, buf, count, dtype, op, true, 0, last, 0, last);
}

int coll_async_native_reduce(const struct coll_async_call *call, const void *sbuf, void *rbuf,
                             size_t count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                             int root)
{
    struct coll_async_sched work = {.base = {.begin = coll_async_reduction_begin}, .root = root};
    bool kernel = coll_async_reduction_supported(dtype, op);
    int me = rank_of(call);

    if (OMPI_COMM_IS_INTER(call->comm)) {
        return coll_async_intercomm_reduce(call, sbuf, rbuf, count, dtype, op, root);
    }
    if (0 == count) {
        return execute_nothing(call);
    }
    if (!kernel || (!spans_nodes(call) && !has_channel(call))) {
        /* allreduce: every rank folds; reduce: the root, from all the others. */
        return fold_inputs(call, sbuf, rbuf, count, dtype, op, root < 0 || root == me, 0,
                           size_of(call) - 1, root < 0 ? 0 : root,
                           root < 0 ? size_of(call) - 1 : root == me ? -1 : root);
    }
    coll_async_reduction_resolve(&work.reduction, dtype, op);
    work.sbuf = input_of(sbuf, rbuf);
    work.rbuf = rbuf;
    work.count = count;
    work.bytes = work.count * work.reduction.size;
    return execute_native(call, &work);
}

static bool aggregated(const struct coll_async_call *call, size_t block);

void coll_async_native_say_aggregated(const struct coll_async_call *call, const char *how,
                                 const char *first)
{
    struct coll_async_hier *hier = call->module->hier;
    enum coll_async_family family = coll_async_family_of(call->coll);

    if (!(hier->said_aggregated & (1u << family))) {
        hier->said_aggregated |= 1u << family;
        opal_output_verbose(1, mca_coll_async_output, "coll:async: %s: %s %s between %d nodes%s",
                            call->comm->c_name, coll_async_family_name(family), how,
                            hier->node_count, first);
    }
}

int coll_async_native_scan(const struct coll_async_call *call, const void *sbuf, void *rbuf,
                           size_t count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                           bool exclusive)
{
    int n = size_of(call), me = rank_of(call);
    int last = exclusive ? me - 1 : me;
    struct coll_async_sched work = {.base = {.begin = coll_async_reduction_begin}, .root = -1};

    if (0 == count) {
        return execute_nothing(call);
    }
    /* Across nodes in node order, where the nodes hold consecutive ranks (as every
     * rank of the communicator knows alike). */
    if (spans_nodes(call) && call->module->hier->rank_ordered
        && coll_async_reduction_supported(dtype, op) && contiguous(dtype, count)
        && aggregated(call, bytes_of(dtype, count))) {
        coll_async_reduction_resolve(&work.reduction, dtype, op);
        work.sbuf = data_start(input_of(sbuf, rbuf), dtype);
        work.rbuf = data_start(rbuf, dtype);
        work.count = count;
        work.bytes = work.count * work.reduction.size;
        coll_async_native_say_aggregated(call, "in node order", "");
        return execute_native(call, &work);
    }
    /* Rank r folds ranks 0..r (0..r-1 for exscan); the last rank's input is
     * nobody's, and exscan leaves rank 0's buffer undefined. */
    return fold_inputs(call, sbuf, rbuf, count, dtype, op, last >= 0, 0, last, me + 1, n - 1);
}

int coll_async_native_reduce_scatter(const struct coll_async_call *call, const void *sbuf,
                                     void *rbuf, size_t rcount, struct coll_async_values rcounts,
                                     struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    struct coll_async_sched work = {.base = {.begin = coll_async_reduce_scatter_block_begin},
                                    .root = -1};
    int n = size_of(call), me = rank_of(call);
    const char *input = input_of(sbuf, rbuf);
    struct coll_async_exchange *plan;
    size_t offset = 0, mine;
    int rc;

    if (OMPI_COMM_IS_INTER(call->comm)) {
        return coll_async_intercomm_reduce_scatter(call, sbuf, rbuf, rcount, rcounts, dtype, op);
    }
    if (spans_nodes(call)
        && coll_async_native_reduce_scatter_by_node(call, sbuf, rbuf, rcount, rcounts, dtype, op,
                                                    &rc)) {
        return rc;
    }
    if (NULL == rcounts.values && has_channel(call) && 0 < rcount
        && coll_async_reduction_supported(dtype, op)) {
        coll_async_reduction_resolve(&work.reduction, dtype, op);
        work.sbuf = input;
        work.rbuf = rbuf;
        work.count = rcount;
        work.bytes = work.count * work.reduction.size;
        return execute(call, &work);
    }
    /* Each rank sends block j of its input to rank j and folds the n blocks it
     * receives, in rank order. */
    mine = coll_async_reduce_scatter_count(rcount, rcounts, me);
    plan = coll_async_exchange_new(n, me, true,
                                   (size_t) n * coll_async_exchange_scratch_block(dtype, mine));
    if (NULL == plan) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (int rank = 0; rank < n; ++rank) {
        size_t count = coll_async_reduce_scatter_count(rcount, rcounts, rank);
        const char *block = input + (ptrdiff_t) offset * extent_of(dtype);

        coll_async_block_set(rank == me ? &plan->self_from : &plan->send[rank], block, count,
                             dtype);
        offset += count;
    }
    if (0 < mine) {
        coll_async_exchange_set_fold(plan, op, dtype, mine, 0, n - 1, rbuf);
    }
    return execute_plan(call, plan);
}

/* Data movement */

int coll_async_native_bcast(const struct coll_async_call *call, void *buf, size_t count,
                            struct ompi_datatype_t *dtype, int root)
{
    struct coll_async_sched work = {.base = {.begin = coll_async_bcast_begin}, .root = root};
    struct coll_async_exchange *plan;

    if (OMPI_COMM_IS_INTER(call->comm)) {
        return coll_async_intercomm_bcast(call, buf, count, dtype, root);
    }
    work.bytes = bytes_of(dtype, count);
    if (1 == size_of(call) || 0 == work.bytes) {
        return execute_nothing(call);
    }
    if (contiguous(dtype, count)) {
        work.rbuf = data_start(buf, dtype);
        return execute_native(call, &work);
    }
    plan = coll_async_exchange_new(size_of(call), rank_of(call), false, 0);
    if (NULL != plan) {
        coll_async_block_set(root == rank_of(call) ? &plan->send[0] : &plan->recv[root], buf,
                             count, dtype);
    }
    return execute_plan(call, plan);
}

int coll_async_native_barrier(const struct coll_async_call *call)
{
    struct coll_async_sched work = {.base = {.begin = coll_async_barrier_begin}, .root = -1};

    if (OMPI_COMM_IS_INTER(call->comm)) {
        return coll_async_intercomm_barrier(call);
    }
    if (1 == size_of(call)) {
        return execute_nothing(call);
    }
    return execute_native(call, &work);
}

void coll_async_side_at(const struct coll_async_side *side, int i, const char **base,
                        size_t *count, struct ompi_datatype_t **dtype)
{
    *dtype = NULL != side->dtypes ? side->dtypes[i] : side->dtype;
    *base = side->buf;
    if (NULL == side->counts.values) {
        *base += (ptrdiff_t) i * (ptrdiff_t) side->count * extent_of(*dtype);
        *count = side->count;
    } else {
        ptrdiff_t displ = coll_async_displ_at(side->displs, i);

        *base += NULL != side->dtypes ? displ : displ * extent_of(*dtype);
        *count = coll_async_count_at(side->counts, i);
    }
}

void coll_async_side_block(const struct coll_async_side *side, int i,
                           struct coll_async_block *block)
{
    struct ompi_datatype_t *dtype;
    const char *base;
    size_t count;

    coll_async_side_at(side, i, &base, &count, &dtype);
    coll_async_block_set(block, base, count, dtype);
}

/* The one block a side names (the send side of a gather, ...). */
static void single_block(const struct coll_async_side *side, struct coll_async_block *block)
{
    coll_async_block_set(block, side->buf, side->count, side->dtype);
}

/*
 * A gather or scatter across nodes aggregated by node (coll_async_hier.h):
 * mine is this rank's block (NULL: in place at the root), all the root's side.
 * The choice rests on the block's size alone, which every rank knows alike.
 */
static bool aggregated(const struct coll_async_call *call, size_t block)
{
    enum coll_async_family family = coll_async_family_of(call->coll);

    return spans_nodes(call)
           && coll_async_decision_aggregated(family, call->module->hier->algorithm[family], block,
                                             size_of(call), call->module->hier->node_count);
}

static int execute_aggregated(const struct coll_async_call *call, int root, size_t block,
                              const struct coll_async_side *mine,
                              const struct coll_async_side *all)
{
    struct coll_async_sched work = {.bytes = block, .root = root};
    struct coll_async_hier_blocks *blocks;
    char first[64];

    work.base.begin = coll_async_hier_begin;
    work.base.free_plan = coll_async_hier_run_free;
    work.base.plan = coll_async_hier_run_new(call->module->hier,
                                             coll_async_family_of(call->coll));
    if (NULL == work.base.plan) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    blocks = coll_async_hier_run_blocks(work.base.plan);
    if (NULL != mine) {
        single_block(mine, &blocks->mine);
    }
    if (root < 0 || root == rank_of(call)) {
        single_block(all, &blocks->first);
        blocks->stride = (ptrdiff_t) all->count * extent_of(all->dtype);
    }
    if (root >= 0) {
        snprintf(first, sizeof(first), " (the first: root %d, %zu B per rank)", root, block);
    } else {
        snprintf(first, sizeof(first), " (the first: %zu B per rank)", block);
    }
    coll_async_native_say_aggregated(call, "aggregated by node", first);
    return execute(call, &work);
}

/* The allgather the shared-memory schedule takes: equal contiguous blocks. */
static int fast_allgather(const struct coll_async_call *call, const struct coll_async_side *send,
                          const struct coll_async_side *recv)
{
    struct coll_async_sched work = {.base = {.begin = coll_async_allgather_begin}, .root = -1};

    work.bytes = bytes_of(recv->dtype, recv->count);
    if (0 == work.bytes) {
        return execute_nothing(call);
    }
    work.rbuf = data_start(recv->buf, recv->dtype);
    work.sbuf = MPI_IN_PLACE == send->buf
                    ? (char *) work.rbuf + (size_t) rank_of(call) * work.bytes
                    : data_start(send->buf, send->dtype);
    return execute_native(call, &work);
}

static bool fast_allgather_fits(const struct coll_async_call *call,
                                const struct coll_async_side *send,
                                const struct coll_async_side *recv, int root)
{
    return root < 0 && NULL == recv->counts.values && (has_channel(call) || spans_nodes(call))
           && contiguous(recv->dtype, recv->count * (size_t) size_of(call))
           && (MPI_IN_PLACE == send->buf || contiguous(send->dtype, send->count));
}

int coll_async_native_gather(const struct coll_async_call *call,
                             const struct coll_async_side *send,
                             const struct coll_async_side *recv, int root)
{
    int n = size_of(call), me = rank_of(call), rc;
    bool receives = root < 0 || root == me;
    struct coll_async_exchange *plan;

    if (OMPI_COMM_IS_INTER(call->comm)) {
        return coll_async_intercomm_gather(call, send, recv, root);
    }
    if (root < 0 && NULL == recv->counts.values && 0 == bytes_of(recv->dtype, recv->count)) {
        return execute_nothing(call); /* allgather of nothing, whatever the datatype */
    }
    if (fast_allgather_fits(call, send, recv, root)) {
        return fast_allgather(call, send, recv);
    }
    if (root < 0 && NULL != recv->counts.values && spans_nodes(call)
        && coll_async_native_allgatherv_by_node(call, send, recv, &rc)) {
        return rc;
    }
    if (root >= 0 && NULL == recv->counts.values) {
        bool in_place = root == me && MPI_IN_PLACE == send->buf;
        size_t block = in_place ? bytes_of(recv->dtype, recv->count)
                                : bytes_of(send->dtype, send->count);

        if (aggregated(call, block)) {
            return execute_aggregated(call, root, block, in_place ? NULL : send, recv);
        }
    }
    plan = coll_async_exchange_new(n, me, false, 0);
    if (NULL == plan) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (root >= 0) {
        plan->readers_first = plan->readers_last = root;
    }
    if (MPI_IN_PLACE != send->buf && root != me) {
        single_block(send, &plan->send[0]);
    }
    if (receives) {
        for (int rank = 0; rank < n; ++rank) {
            coll_async_side_block(recv, rank, rank == me ? &plan->self_to : &plan->recv[rank]);
        }
        if (MPI_IN_PLACE != send->buf) {
            single_block(send, &plan->self_from);
        }
    }
    /* allgather(v) in place: this rank's block is where the others read it. */
    if (MPI_IN_PLACE == send->buf && root < 0) {
        plan->send[0] = plan->self_to;
        OBJ_RETAIN(plan->send[0].dtype);
    }
    return execute_plan(call, plan);
}

int coll_async_native_scatter(const struct coll_async_call *call,
                              const struct coll_async_side *send,
                              const struct coll_async_side *recv, int root)
{
    int n = size_of(call), me = rank_of(call);
    struct coll_async_exchange *plan;

    if (OMPI_COMM_IS_INTER(call->comm)) {
        return coll_async_intercomm_scatter(call, send, recv, root);
    }
    if (NULL == send->counts.values) {
        bool in_place = root == me && MPI_IN_PLACE == recv->buf;
        size_t block = root == me ? bytes_of(send->dtype, send->count)
                                  : bytes_of(recv->dtype, recv->count);

        if (aggregated(call, block)) {
            return execute_aggregated(call, root, block, in_place ? NULL : recv, send);
        }
    }
    plan = coll_async_exchange_new(n, me, true, 0);
    if (NULL == plan) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (root == me) {
        for (int rank = 0; rank < n; ++rank) {
            coll_async_side_block(send, rank, rank == me ? &plan->self_from : &plan->send[rank]);
        }
        /* At the root, MPI_IN_PLACE is given as the receive buffer. */
        if (MPI_IN_PLACE != recv->buf) {
            single_block(recv, &plan->self_to);
        }
    } else {
        single_block(recv, &plan->recv[root]);
    }
    return execute_plan(call, plan);
}

int coll_async_native_alltoall(const struct coll_async_call *call,
                               const struct coll_async_side *send,
                               const struct coll_async_side *recv)
{
    int n = size_of(call), me = rank_of(call);
    struct coll_async_exchange *plan;
    /* In place, each block goes out from where its replacement comes in; the
     * exchange packs a round before it unpacks that round. */
    const struct coll_async_side *from = MPI_IN_PLACE == send->buf ? recv : send;

    if (OMPI_COMM_IS_INTER(call->comm)) {
        return coll_async_intercomm_alltoall(call, send, recv);
    }
    if (NULL == recv->counts.values) {
        /* Aggregated: each rank's whole buffers as one block each. */
        struct coll_async_side all_from = *from, all_to = *recv;
        size_t block = bytes_of(from->dtype, from->count);

        all_from.count *= n;
        all_to.count *= n;
        if (aggregated(call, block)) {
            return execute_aggregated(call, -1, block, &all_from, &all_to);
        }
    }
    plan = coll_async_exchange_new(n, me, true, 0);
    if (NULL == plan) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    plan->in_place = MPI_IN_PLACE == send->buf;
    for (int rank = 0; rank < n; ++rank) {
        if (rank != me) {
            coll_async_side_block(from, rank, &plan->send[rank]);
            coll_async_side_block(recv, rank, &plan->recv[rank]);
        } else if (MPI_IN_PLACE != send->buf) {
            coll_async_side_block(send, rank, &plan->self_from);
            coll_async_side_block(recv, rank, &plan->self_to);
        }
    }
    return execute_plan(call, plan);
}
