/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the collectives on intercommunicators.
 *
 * Each is an exchange (coll_async_exchange.h) between this rank and the ranks
 * of the remote group, carried over the mapper (coll_async_pairs.h): the plan's
 * ranks are the remote group's, this rank is none of them. What crosses is
 * what MPI defines, flat, one block per pair of ranks that has one:
 *   - rooted (bcast, reduce, gather(v), scatter(v)): the root, passing MPI_ROOT,
 *     sends to or receives from every rank of the other group, which name it by
 *     its rank there; the other ranks of its group pass MPI_PROC_NULL and move
 *     nothing (but take the collective's tag, as every rank does);
 *   - allreduce: every rank sends its input to every remote rank and folds the
 *     remote group's, in their rank order, so each group gets the other's;
 *   - allgather(v), alltoall(v,w): block r to or from remote rank r;
 *   - reduce_scatter_block: remote rank r gets block r of this rank's vector,
 *     cut by the remote group's size, and folds what the other group sent it;
 *     reduce_scatter, whose remote counts this rank does not know: every rank
 *     sends its whole vector, and keeps its own slice of the fold;
 *   - barrier: a byte each way with every remote rank, so no rank leaves
 *     before the whole other group has entered.
 * MPI_IN_PLACE: the standard gives it no meaning on an intercommunicator, but
 * Open MPI passes it to allreduce itself (MPI_Comm_split_type, the agreement
 * without ULFM) with the input in the receive buffer, as coll/inter reads it,
 * and so does this file; everywhere else it is MPI_ERR_ARG, as Open MPI's
 * argument checks say when they are on.
 * A collective across the groups is therefore as many transfers as pairs of
 * ranks that exchange data, not a tree: right and fully asynchronous, and
 * simple to trust; a local stage through each group's shared memory would cut
 * the transfers between nodes (docs/architecture.md, Not yet).
 */

#include "ompi_config.h"

#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"

#include "coll_async_native.h"
#include "coll_async_pairs.h"

static int remote_size(const struct coll_async_call *call)
{
    return ompi_comm_remote_size(call->comm);
}

/* A plan among the remote group's ranks, this rank none of them. */
static struct coll_async_exchange *plan_new(const struct coll_async_call *call, bool personal,
                                            size_t scratch_bytes)
{
    return coll_async_exchange_new(remote_size(call), -1, personal, scratch_bytes);
}

static int run(const struct coll_async_call *call, struct coll_async_exchange *plan)
{
    struct coll_async_sched work = {.base = {.begin = coll_async_pairs_begin,
                                             .free_plan = coll_async_pairs_free},
                                    .root = -1};

    if (NULL == plan) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    work.base.plan = coll_async_pairs_new(plan, call->module->peers, call->comm->c_name,
                                          ompi_comm_rank(call->comm));
    if (NULL == work.base.plan) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    return coll_async_native_run(call, &work, true);
}

/* The remote ranks a rooted collective's block goes to (its root), or all. */
static void readers(struct coll_async_exchange *plan, int root)
{
    plan->readers_first = root >= 0 ? root : 0;
    plan->readers_last = root >= 0 ? root : plan->nranks - 1;
}

static ptrdiff_t extent_of(struct ompi_datatype_t *dtype)
{
    ptrdiff_t lb, extent;

    ompi_datatype_get_extent(dtype, &lb, &extent);
    return extent;
}

/* Whether buf, which this rank would send from or receive into, is MPI_IN_PLACE. */
static bool in_place(const void *buf)
{
    return MPI_IN_PLACE == buf;
}

/* root -1: allreduce. */
int coll_async_intercomm_reduce(const struct coll_async_call *call, const void *sbuf,
                                void *rbuf, size_t count, struct ompi_datatype_t *dtype,
                                struct ompi_op_t *op, int root)
{
    int m = remote_size(call);
    bool sends = -1 == root || root >= 0, receives = -1 == root || MPI_ROOT == root;
    size_t scratch = receives ? (size_t) m * coll_async_exchange_scratch_block(dtype, count) : 0;
    struct coll_async_exchange *plan;

    if (-1 == root && in_place(sbuf)) {
        /* The receive buffer is read while it is sent, and written only once every
         * block has crossed (coll_async_exchange_finish folds at the end). */
        sbuf = rbuf;
    } else if (sends && in_place(sbuf)) {
        return MPI_ERR_ARG;
    }
    plan = plan_new(call, false, scratch);

    if (NULL != plan && sends) {
        coll_async_block_set(&plan->send[0], sbuf, count, dtype);
        readers(plan, root);
    }
    if (NULL != plan && receives) {
        coll_async_exchange_set_fold(plan, op, dtype, count, 0, m - 1, rbuf);
    }
    return run(call, plan);
}

int coll_async_intercomm_bcast(const struct coll_async_call *call, void *buf, size_t count,
                               struct ompi_datatype_t *dtype, int root)
{
    struct coll_async_exchange *plan = plan_new(call, false, 0);

    if (NULL != plan && MPI_ROOT == root) {
        coll_async_block_set(&plan->send[0], buf, count, dtype);
    } else if (NULL != plan && root >= 0) {
        coll_async_block_set(&plan->recv[root], buf, count, dtype);
    }
    return run(call, plan);
}

int coll_async_intercomm_barrier(const struct coll_async_call *call)
{
    static const char token = 1;
    int m = remote_size(call);
    struct coll_async_exchange *plan = plan_new(call, false, (size_t) m);

    if (NULL != plan) {
        coll_async_block_set(&plan->send[0], &token, 1, MPI_BYTE);
        for (int rank = 0; rank < m; ++rank) {
            coll_async_block_set(&plan->recv[rank], plan->scratch + rank, 1, MPI_BYTE);
        }
    }
    return run(call, plan);
}

/* root -1: allgather(v). */
int coll_async_intercomm_gather(const struct coll_async_call *call,
                                const struct coll_async_side *send,
                                const struct coll_async_side *recv, int root)
{
    struct coll_async_exchange *plan;

    if ((-1 == root || root >= 0) && in_place(send->buf)) {
        return MPI_ERR_ARG;
    }
    plan = plan_new(call, false, 0);
    if (NULL == plan) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (-1 == root || root >= 0) {
        coll_async_block_set(&plan->send[0], send->buf, send->count, send->dtype);
        readers(plan, root);
    }
    if (-1 == root || MPI_ROOT == root) {
        for (int rank = 0; rank < plan->nranks; ++rank) {
            coll_async_side_block(recv, rank, &plan->recv[rank]);
        }
    }
    return run(call, plan);
}

int coll_async_intercomm_scatter(const struct coll_async_call *call,
                                 const struct coll_async_side *send,
                                 const struct coll_async_side *recv, int root)
{
    struct coll_async_exchange *plan;

    if (root >= 0 && in_place(recv->buf)) {
        return MPI_ERR_ARG;
    }
    plan = plan_new(call, true, 0);
    if (NULL != plan && MPI_ROOT == root) {
        for (int rank = 0; rank < plan->nranks; ++rank) {
            coll_async_side_block(send, rank, &plan->send[rank]);
        }
    } else if (NULL != plan && root >= 0) {
        coll_async_block_set(&plan->recv[root], recv->buf, recv->count, recv->dtype);
    }
    return run(call, plan);
}

int coll_async_intercomm_alltoall(const struct coll_async_call *call,
                                  const struct coll_async_side *send,
                                  const struct coll_async_side *recv)
{
    struct coll_async_exchange *plan;

    if (in_place(send->buf)) {
        return MPI_ERR_ARG;
    }
    plan = plan_new(call, true, 0);
    for (int rank = 0; NULL != plan && rank < plan->nranks; ++rank) {
        coll_async_side_block(send, rank, &plan->send[rank]);
        coll_async_side_block(recv, rank, &plan->recv[rank]);
    }
    return run(call, plan);
}

/* No rcounts: reduce_scatter_block, rcount each. */
int coll_async_intercomm_reduce_scatter(const struct coll_async_call *call, const void *sbuf,
                                        void *rbuf, size_t rcount, struct coll_async_values rcounts,
                                        struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    int n = ompi_comm_size(call->comm), m = remote_size(call), me = ompi_comm_rank(call->comm);
    size_t total = 0, offset = 0, block;
    struct coll_async_exchange *plan;

    if (in_place(sbuf)) {
        return MPI_ERR_ARG;
    }
    if (NULL == rcounts.values) {
        /* Both groups' vectors are n * rcount long: block r of m goes to remote r. */
        size_t theirs = (size_t) n * rcount / (size_t) m;

        plan = plan_new(call, true,
                        (size_t) m * coll_async_exchange_scratch_block(dtype, rcount));
        for (int rank = 0; NULL != plan && rank < m; ++rank) {
            coll_async_block_set(&plan->send[rank],
                                 (const char *) sbuf + (ptrdiff_t) (rank * theirs) * extent_of(dtype),
                                 theirs, dtype);
        }
        if (NULL != plan && rcount > 0) {
            coll_async_exchange_set_fold(plan, op, dtype, rcount, 0, m - 1, rbuf);
        }
        return run(call, plan);
    }
    for (int rank = 0; rank < n; ++rank) {
        size_t count = coll_async_count_at(rcounts, rank);

        offset += rank < me ? count : 0;
        total += count;
    }
    /* The m inputs and the folded vector, then this rank's slice of it. */
    block = coll_async_exchange_scratch_block(dtype, total);
    plan = plan_new(call, false, ((size_t) m + 1) * block);
    if (NULL != plan) {
        ptrdiff_t gap;
        char *folded;

        (void) opal_datatype_span(&dtype->super, total, &gap);
        folded = plan->scratch + (size_t) m * block - gap;
        coll_async_block_set(&plan->send[0], sbuf, total, dtype);
        coll_async_exchange_set_fold(plan, op, dtype, total, 0, m - 1, folded);
        coll_async_block_set(&plan->after_from, folded + (ptrdiff_t) offset * extent_of(dtype),
                             coll_async_count_at(rcounts, me), dtype);
        coll_async_block_set(&plan->after_to, rbuf, coll_async_count_at(rcounts, me), dtype);
    }
    return run(call, plan);
}
