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
 * communicator: inside a node over its shared memory, across nodes
 * hierarchically (allreduce, reduce, bcast, barrier, allgather) or as an
 * exchange over the mapper between nodes (everything else, derived datatypes
 * and user-defined operations included).
 *
 * (--delegate NAME[,NAME] overrides this for families whose algorithm was forced to
 * "delegate" by an MCA parameter; that is applied by the caller, not here.)
 */

#include "coll_suite.h"

enum path expected_path(const check *c)
{
    (void) c;
    return PATH_NATIVE;
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
