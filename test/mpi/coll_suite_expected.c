/*
 * coll_suite: which path coll/async is expected to take.
 *
 * THIS is the function to edit when the component gains native paths: the suite
 * checks, around every call, that the counter of this path moved by the number of
 * calls and the counter of the other path did not move.
 *
 * Version 1 of the component runs a collective itself only on a single-process
 * communicator (a local copy) and hands everything else to the module below it.
 *
 * (--delegate NAME[,NAME] overrides this for families whose algorithm was forced to
 * "delegate" by an MCA parameter; that is applied by the caller, not here.)
 */

#include "coll_suite.h"

/* The families coll/async runs in shared memory when every rank is on one node
 * (the suite runs on one node). */
static int has_shm_schedule(enum coll_id collective)
{
    switch (coll_blocking_form(collective)) {
    case COLL_allgather:
    case COLL_allreduce:
    case COLL_barrier:
    case COLL_bcast:
    case COLL_reduce:
    case COLL_reduce_scatter_block:
        return 1;
    default:
        return 0;
    }
}

/* Whether count elements of type lie without gaps, as coll/async requires
 * (MPI_DOUBLE_INT, MPI_SHORT_INT and MPI_LONG_DOUBLE_INT have padding; one
 * element whose padding only trails is gapless all the same). */
static int gapless(const type_info *type, size_t count)
{
    MPI_Aint true_lb, true_extent;
    int size;

    if (NULL == type) {
        return 1;
    }
    MPI_Type_size(type->dt, &size);
    MPI_Type_get_true_extent(type->dt, &true_lb, &true_extent);
    return (size_t) size == type->extent || (1 == count && size == true_extent);
}

enum path expected_path(enum coll_id collective, int comm_size, const type_info *type,
                        size_t count)
{
    if (1 == comm_size) {
        return PATH_NATIVE;
    }
    /* Reductions and allgather (n blocks) need gapless arrays; bcast its count. */
    if (COLL_bcast != coll_blocking_form(collective)) {
        count = 2;
    }
    return has_shm_schedule(collective) && gapless(type, count) ? PATH_NATIVE : PATH_DELEGATED;
}

/*
 * Whether Open MPI hands this call to the coll framework at all. Open MPI 4.1's
 * MPI bindings (ompi/mpi/c/<name>.c) return before calling any coll component in
 * these cases, so no counter of coll/async can move for them:
 *   - a zero count: allgather, allgatherv (all counts 0), allreduce, alltoall,
 *     bcast, exscan, gather, reduce, reduce_scatter_block, reduce_scatter (all
 *     counts 0), scan, scatter, and iallreduce, ibcast, ireduce,
 *     ireduce_scatter_block, ireduce_scatter; the other nonblocking forms and the
 *     v/w variants not listed always reach coll;
 *   - barrier, bcast and ibcast on a single-process communicator.
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
    case COLL_alltoall:
    case COLL_exscan:
    case COLL_gather:
    case COLL_reduce:
    case COLL_ireduce:
    case COLL_reduce_scatter_block:
    case COLL_ireduce_scatter_block:
    case COLL_scan:
    case COLL_scatter:
        return c->count > 0;
    case COLL_allgatherv:
    case COLL_reduce_scatter:
    case COLL_ireduce_scatter:
        return any_count(c);
    default:
        return 1;
    }
}
