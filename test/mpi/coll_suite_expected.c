/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_suite: which path coll/async is expected to take.
 *
 * THIS is the function to edit when the component's paths change: the suite
 * checks, around every call, that the counter of this path moved by the number of
 * calls and the counter of the other path did not move.
 *
 * The component runs every collective itself, in every form (blocking,
 * nonblocking, persistent), for every datatype and operation, on every
 * communicator whose ranks share a node (one process included). On a
 * communicator that spans nodes it runs allreduce, reduce, bcast, barrier and
 * allgather hierarchically, except reductions on pairs with padding
 * (MPI_DOUBLE_INT, ...), and delegates the rest to the component below it.
 *
 * (--delegate NAME[,NAME] overrides this for families whose algorithm was forced to
 * "delegate" by an MCA parameter; that is applied by the caller, not here.)
 */

#include "coll_suite.h"

static int hierarchical(enum coll_id coll)
{
    switch (coll_blocking_form(coll)) {
    case COLL_allreduce:
    case COLL_reduce:
    case COLL_bcast:
    case COLL_barrier:
    case COLL_allgather:
        return 1;
    default:
        return 0;
    }
}

static int padded(const type_info *type)
{
    int size;

    MPI_Type_size(type->dt, &size);
    return (size_t) size != type->extent;
}

/* Whether one element's data is one run of bytes (MPI_DOUBLE_INT's is, padding
 * after it; MPI_SHORT_INT's is not, padding inside). */
static int dense_element(const type_info *type)
{
    MPI_Aint lb, extent;
    int size;

    MPI_Type_get_true_extent(type->dt, &lb, &extent);
    MPI_Type_size(type->dt, &size);
    return extent == size;
}

/* Padded pairs have no kernel and are not contiguous beyond one element; no
 * data at all is always native. */
static int takes_type(const check *c)
{
    return NULL == c->type || !padded(c->type) || 0 == c->count
           || (OP_NONE == c->op && COLL_bcast == coll_blocking_form(c->coll) && c->count <= 1
               && dense_element(c->type));
}

enum path expected_path(const check *c)
{
    if (c->cx->one_node) {
        return PATH_NATIVE;
    }
    return hierarchical(c->coll) && takes_type(c) ? PATH_NATIVE : PATH_DELEGATED;
}

/*
 * Whether Open MPI hands this call to the coll framework at all. Open MPI 4.1's
 * MPI bindings (ompi/mpi/c/<name>.c, and ompi/mpiext/pcollreq/c/<name>_init.c for
 * the persistent forms) return before calling any coll component in these cases,
 * so no counter of coll/async can move for them:
 *   - a zero count: allgather, allgatherv (all counts 0), allreduce, alltoall,
 *     bcast, exscan, gather, reduce, reduce_scatter_block, reduce_scatter (all
 *     counts 0), scan, scatter, and iallreduce, ibcast, ireduce,
 *     ireduce_scatter_block, ireduce_scatter, and allreduce_init, reduce_init,
 *     reduce_scatter_init (which get a request that does nothing when started);
 *     the other nonblocking and persistent forms and the v/w variants not listed
 *     always reach coll;
 *   - barrier, bcast and ibcast on a single-process communicator (barrier_init and
 *     bcast_init reach coll there).
 * This is Open MPI's behaviour, not the component's: edit it for another Open MPI.
 */
static int any_count(const check *c)
{
    for (int r = 0; r < c->cx->size; ++r) {
        if (0 != c->rcounts[r]) {
            return 1;
        }
    }
    return 0;
}

int ompi_calls_coll(const check *c)
{
    switch (c->coll) {
    case COLL_barrier:
        return c->cx->size > 1;
    case COLL_bcast:
    case COLL_ibcast:
        return c->cx->size > 1 && c->count > 0;
    case COLL_allgather:
    case COLL_allreduce:
    case COLL_iallreduce:
    case COLL_allreduce_init:
    case COLL_alltoall:
    case COLL_exscan:
    case COLL_gather:
    case COLL_reduce:
    case COLL_ireduce:
    case COLL_reduce_init:
    case COLL_reduce_scatter_block:
    case COLL_ireduce_scatter_block:
    case COLL_scan:
    case COLL_scatter:
        return c->count > 0;
    case COLL_allgatherv:
    case COLL_reduce_scatter:
    case COLL_ireduce_scatter:
    case COLL_reduce_scatter_init:
        return any_count(c);
    default:
        return 1;
    }
}
