/*
 * coll/async: the entry points Open MPI calls, one per collective.
 *
 * Each counts the call on the path the module chose for this communicator
 * (coll_async_module.c) and then runs it natively or hands it, unchanged, to the
 * module selected below this one.
 */

#include "ompi_config.h"

#include "coll_async.h"
#include "coll_async_native.h"
#include "coll_async_request.h"
#include "coll_async_single.h"

#define ASYNC(module) ((mca_coll_async_module_t *) (module))

/* Counts the call; true when this component runs it, false when it delegates.
 * eligible: whether this call's arguments allow the native path. */
static inline bool run_native_if(mca_coll_base_module_t *module, enum coll_async_coll coll,
                                 bool eligible)
{
    enum coll_async_path path = ASYNC(module)->path[coll];

    if (!eligible) {
        path = COLL_ASYNC_PATH_DELEGATED;
    }
    mca_coll_async_count(coll, path);
    return COLL_ASYNC_PATH_NATIVE == path;
}

static inline bool run_native(mca_coll_base_module_t *module, enum coll_async_coll coll)
{
    return run_native_if(module, coll, true);
}

static bool reducible(mca_coll_base_module_t *module, struct ompi_datatype_t *dtype,
                      struct ompi_op_t *op)
{
    return coll_async_native_reduction_eligible(ASYNC(module), dtype, op);
}

/* Both sides of an allgather are plain bytes. */
static bool gatherable(mca_coll_base_module_t *module, const void *sbuf, int scount,
                       struct ompi_datatype_t *sdtype, int rcount,
                       struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm)
{
    return coll_async_native_bytes_eligible(ASYNC(module), rdtype,
                                            (size_t) rcount * ompi_comm_size(comm))
           && (MPI_IN_PLACE == sbuf
               || coll_async_native_bytes_eligible(ASYNC(module), sdtype, (size_t) scount));
}

/* Calls the function the module below installed for collective name. */
#define DELEGATE(module, name, ...)                                             \
    (ASYNC(module)->below.coll_##name(__VA_ARGS__, ASYNC(module)->below.coll_##name##_module))

/* A nonblocking collective whose work is already done: a completed request. */
static int completed(int rc, struct ompi_communicator_t *comm, ompi_request_t **request)
{
    return OMPI_SUCCESS == rc ? mca_coll_async_request_completed(comm, request) : rc;
}

/*
 * Single-process forms of the collectives whose buffers need mapping; the
 * others are a plain coll_async_single_copy or nothing at all.
 */

static int single_allgatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                             void *rbuf, const int *rcounts, const int *disps,
                             struct ompi_datatype_t *rdtype)
{
    return coll_async_single_copy(sbuf, scount, sdtype,
                                  coll_async_single_at(rbuf, disps[0], rdtype), rcounts[0],
                                  rdtype);
}

static int single_alltoallv(const void *sbuf, const int *scounts, const int *sdisps,
                            struct ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                            const int *rdisps, struct ompi_datatype_t *rdtype)
{
    /* With MPI_IN_PLACE the send arguments are not meaningful. */
    if (MPI_IN_PLACE == sbuf) {
        return OMPI_SUCCESS;
    }
    return coll_async_single_copy(coll_async_single_at(sbuf, sdisps[0], sdtype), scounts[0],
                                  sdtype, coll_async_single_at(rbuf, rdisps[0], rdtype),
                                  rcounts[0], rdtype);
}

/* alltoallw displacements are in bytes. */
static int single_alltoallw(const void *sbuf, const int *scounts, const int *sdisps,
                            struct ompi_datatype_t *const *sdtypes, void *rbuf,
                            const int *rcounts, const int *rdisps,
                            struct ompi_datatype_t *const *rdtypes)
{
    if (MPI_IN_PLACE == sbuf) {
        return OMPI_SUCCESS;
    }
    return coll_async_single_copy((const char *) sbuf + sdisps[0], scounts[0], sdtypes[0],
                                  (char *) rbuf + rdisps[0], rcounts[0], rdtypes[0]);
}

static int single_scatterv(const void *sbuf, const int *scounts, const int *disps,
                           struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                           struct ompi_datatype_t *rdtype)
{
    /* At the root, MPI_IN_PLACE is given as the receive buffer. */
    if (MPI_IN_PLACE == rbuf) {
        return OMPI_SUCCESS;
    }
    return coll_async_single_copy(coll_async_single_at(sbuf, disps[0], sdtype), scounts[0],
                                  sdtype, rbuf, rcount, rdtype);
}

/* Blocking entry points */

static int async_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                           void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (run_native_if(module, COLL_ASYNC_ALLGATHER,
                      gatherable(module, sbuf, scount, sdtype, rcount, rdtype, comm))) {
        return coll_async_native_allgather(ASYNC(module), sbuf, scount, sdtype, rbuf, rcount,
                                           rdtype, comm, NULL);
    }
    return DELEGATE(module, allgather, sbuf, scount, sdtype, rbuf, rcount, rdtype, comm);
}

static int async_allgatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                            void *rbuf, const int *rcounts, const int *disps,
                            struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                            mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_ALLGATHERV)) {
        return single_allgatherv(sbuf, scount, sdtype, rbuf, rcounts, disps, rdtype);
    }
    return DELEGATE(module, allgatherv, sbuf, scount, sdtype, rbuf, rcounts, disps, rdtype,
                    comm);
}

static int async_allreduce(const void *sbuf, void *rbuf, int count,
                           struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (run_native_if(module, COLL_ASYNC_ALLREDUCE, reducible(module, dtype, op))) {
        return coll_async_native_reduce(ASYNC(module), sbuf, rbuf, count, dtype, op, -1, comm,
                                        NULL);
    }
    return DELEGATE(module, allreduce, sbuf, rbuf, count, dtype, op, comm);
}

static int async_alltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                          void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                          struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_ALLTOALL)) {
        return coll_async_single_copy(sbuf, scount, sdtype, rbuf, rcount, rdtype);
    }
    return DELEGATE(module, alltoall, sbuf, scount, sdtype, rbuf, rcount, rdtype, comm);
}

static int async_alltoallv(const void *sbuf, const int *scounts, const int *sdisps,
                           struct ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                           const int *rdisps, struct ompi_datatype_t *rdtype,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_ALLTOALLV)) {
        return single_alltoallv(sbuf, scounts, sdisps, sdtype, rbuf, rcounts, rdisps, rdtype);
    }
    return DELEGATE(module, alltoallv, sbuf, scounts, sdisps, sdtype, rbuf, rcounts, rdisps,
                    rdtype, comm);
}

static int async_alltoallw(const void *sbuf, const int *scounts, const int *sdisps,
                           struct ompi_datatype_t *const *sdtypes, void *rbuf,
                           const int *rcounts, const int *rdisps,
                           struct ompi_datatype_t *const *rdtypes,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_ALLTOALLW)) {
        return single_alltoallw(sbuf, scounts, sdisps, sdtypes, rbuf, rcounts, rdisps, rdtypes);
    }
    return DELEGATE(module, alltoallw, sbuf, scounts, sdisps, sdtypes, rbuf, rcounts, rdisps,
                    rdtypes, comm);
}

static int async_barrier(struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_BARRIER)) {
        return coll_async_native_barrier(ASYNC(module), comm, NULL);
    }
    return DELEGATE(module, barrier, comm);
}

static int async_bcast(void *buf, int count, struct ompi_datatype_t *dtype, int root,
                       struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (run_native_if(module, COLL_ASYNC_BCAST,
                      coll_async_native_bytes_eligible(ASYNC(module), dtype, (size_t) count))) {
        return coll_async_native_bcast(ASYNC(module), buf, count, dtype, root, comm, NULL);
    }
    return DELEGATE(module, bcast, buf, count, dtype, root, comm);
}

/* exscan leaves the receive buffer of rank 0 undefined: nothing to do alone. */
static int async_exscan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                        struct ompi_op_t *op, struct ompi_communicator_t *comm,
                        mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_EXSCAN)) {
        return OMPI_SUCCESS;
    }
    return DELEGATE(module, exscan, sbuf, rbuf, count, dtype, op, comm);
}

static int async_gather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                        void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                        struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_GATHER)) {
        return coll_async_single_copy(sbuf, scount, sdtype, rbuf, rcount, rdtype);
    }
    return DELEGATE(module, gather, sbuf, scount, sdtype, rbuf, rcount, rdtype, root, comm);
}

static int async_gatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                         void *rbuf, const int *rcounts, const int *disps,
                         struct ompi_datatype_t *rdtype, int root,
                         struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_GATHERV)) {
        return single_allgatherv(sbuf, scount, sdtype, rbuf, rcounts, disps, rdtype);
    }
    return DELEGATE(module, gatherv, sbuf, scount, sdtype, rbuf, rcounts, disps, rdtype, root,
                    comm);
}

static int async_reduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                        struct ompi_op_t *op, int root, struct ompi_communicator_t *comm,
                        mca_coll_base_module_t *module)
{
    if (run_native_if(module, COLL_ASYNC_REDUCE, reducible(module, dtype, op))) {
        return coll_async_native_reduce(ASYNC(module), sbuf, rbuf, count, dtype, op, root, comm,
                                        NULL);
    }
    return DELEGATE(module, reduce, sbuf, rbuf, count, dtype, op, root, comm);
}

static int async_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                                      struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                      struct ompi_communicator_t *comm,
                                      mca_coll_base_module_t *module)
{
    if (run_native_if(module, COLL_ASYNC_REDUCE_SCATTER_BLOCK, reducible(module, dtype, op))) {
        return coll_async_native_reduce_scatter_block(ASYNC(module), sbuf, rbuf, rcount, dtype,
                                                      op, comm, NULL);
    }
    return DELEGATE(module, reduce_scatter_block, sbuf, rbuf, rcount, dtype, op, comm);
}

static int async_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                                struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_REDUCE_SCATTER)) {
        return coll_async_single_copy(sbuf, rcounts[0], dtype, rbuf, rcounts[0], dtype);
    }
    return DELEGATE(module, reduce_scatter, sbuf, rbuf, rcounts, dtype, op, comm);
}

static int async_scan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                      struct ompi_op_t *op, struct ompi_communicator_t *comm,
                      mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_SCAN)) {
        return coll_async_single_copy(sbuf, count, dtype, rbuf, count, dtype);
    }
    return DELEGATE(module, scan, sbuf, rbuf, count, dtype, op, comm);
}

static int async_scatter(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                         void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                         struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_SCATTER)) {
        return coll_async_single_copy(sbuf, scount, sdtype, rbuf, rcount, rdtype);
    }
    return DELEGATE(module, scatter, sbuf, scount, sdtype, rbuf, rcount, rdtype, root, comm);
}

static int async_scatterv(const void *sbuf, const int *scounts, const int *disps,
                          struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                          struct ompi_datatype_t *rdtype, int root,
                          struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_SCATTERV)) {
        return single_scatterv(sbuf, scounts, disps, sdtype, rbuf, rcount, rdtype);
    }
    return DELEGATE(module, scatterv, sbuf, scounts, disps, sdtype, rbuf, rcount, rdtype, root,
                    comm);
}

/* Nonblocking entry points: the single-process work is done at once. */

static int async_iallgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                            void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                            struct ompi_communicator_t *comm, ompi_request_t **request,
                            mca_coll_base_module_t *module)
{
    if (run_native_if(module, COLL_ASYNC_IALLGATHER,
                      gatherable(module, sbuf, scount, sdtype, rcount, rdtype, comm))) {
        return coll_async_native_allgather(ASYNC(module), sbuf, scount, sdtype, rbuf, rcount,
                                           rdtype, comm, request);
    }
    return DELEGATE(module, iallgather, sbuf, scount, sdtype, rbuf, rcount, rdtype, comm,
                    request);
}

static int async_iallgatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                             void *rbuf, const int *rcounts, const int *disps,
                             struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                             ompi_request_t **request, mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_IALLGATHERV)) {
        return completed(single_allgatherv(sbuf, scount, sdtype, rbuf, rcounts, disps, rdtype),
                         comm, request);
    }
    return DELEGATE(module, iallgatherv, sbuf, scount, sdtype, rbuf, rcounts, disps, rdtype,
                    comm, request);
}

static int async_iallreduce(const void *sbuf, void *rbuf, int count,
                            struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                            struct ompi_communicator_t *comm, ompi_request_t **request,
                            mca_coll_base_module_t *module)
{
    if (run_native_if(module, COLL_ASYNC_IALLREDUCE, reducible(module, dtype, op))) {
        return coll_async_native_reduce(ASYNC(module), sbuf, rbuf, count, dtype, op, -1, comm,
                                        request);
    }
    return DELEGATE(module, iallreduce, sbuf, rbuf, count, dtype, op, comm, request);
}

static int async_ialltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                           void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                           struct ompi_communicator_t *comm, ompi_request_t **request,
                           mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_IALLTOALL)) {
        return completed(coll_async_single_copy(sbuf, scount, sdtype, rbuf, rcount, rdtype),
                         comm, request);
    }
    return DELEGATE(module, ialltoall, sbuf, scount, sdtype, rbuf, rcount, rdtype, comm,
                    request);
}

static int async_ialltoallv(const void *sbuf, const int *scounts, const int *sdisps,
                            struct ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                            const int *rdisps, struct ompi_datatype_t *rdtype,
                            struct ompi_communicator_t *comm, ompi_request_t **request,
                            mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_IALLTOALLV)) {
        return completed(single_alltoallv(sbuf, scounts, sdisps, sdtype, rbuf, rcounts, rdisps,
                                          rdtype),
                         comm, request);
    }
    return DELEGATE(module, ialltoallv, sbuf, scounts, sdisps, sdtype, rbuf, rcounts, rdisps,
                    rdtype, comm, request);
}

static int async_ialltoallw(const void *sbuf, const int *scounts, const int *sdisps,
                            struct ompi_datatype_t *const *sdtypes, void *rbuf,
                            const int *rcounts, const int *rdisps,
                            struct ompi_datatype_t *const *rdtypes,
                            struct ompi_communicator_t *comm, ompi_request_t **request,
                            mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_IALLTOALLW)) {
        return completed(single_alltoallw(sbuf, scounts, sdisps, sdtypes, rbuf, rcounts, rdisps,
                                          rdtypes),
                         comm, request);
    }
    return DELEGATE(module, ialltoallw, sbuf, scounts, sdisps, sdtypes, rbuf, rcounts, rdisps,
                    rdtypes, comm, request);
}

static int async_ibarrier(struct ompi_communicator_t *comm, ompi_request_t **request,
                          mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_IBARRIER)) {
        return coll_async_native_barrier(ASYNC(module), comm, request);
    }
    return DELEGATE(module, ibarrier, comm, request);
}

static int async_ibcast(void *buf, int count, struct ompi_datatype_t *dtype, int root,
                        struct ompi_communicator_t *comm, ompi_request_t **request,
                        mca_coll_base_module_t *module)
{
    if (run_native_if(module, COLL_ASYNC_IBCAST,
                      coll_async_native_bytes_eligible(ASYNC(module), dtype, (size_t) count))) {
        return coll_async_native_bcast(ASYNC(module), buf, count, dtype, root, comm, request);
    }
    return DELEGATE(module, ibcast, buf, count, dtype, root, comm, request);
}

static int async_iexscan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                         struct ompi_op_t *op, struct ompi_communicator_t *comm,
                         ompi_request_t **request, mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_IEXSCAN)) {
        return completed(OMPI_SUCCESS, comm, request);
    }
    return DELEGATE(module, iexscan, sbuf, rbuf, count, dtype, op, comm, request);
}

static int async_igather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                         void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                         struct ompi_communicator_t *comm, ompi_request_t **request,
                         mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_IGATHER)) {
        return completed(coll_async_single_copy(sbuf, scount, sdtype, rbuf, rcount, rdtype),
                         comm, request);
    }
    return DELEGATE(module, igather, sbuf, scount, sdtype, rbuf, rcount, rdtype, root, comm,
                    request);
}

static int async_igatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                          void *rbuf, const int *rcounts, const int *disps,
                          struct ompi_datatype_t *rdtype, int root,
                          struct ompi_communicator_t *comm, ompi_request_t **request,
                          mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_IGATHERV)) {
        return completed(single_allgatherv(sbuf, scount, sdtype, rbuf, rcounts, disps, rdtype),
                         comm, request);
    }
    return DELEGATE(module, igatherv, sbuf, scount, sdtype, rbuf, rcounts, disps, rdtype, root,
                    comm, request);
}

static int async_ireduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                         struct ompi_op_t *op, int root, struct ompi_communicator_t *comm,
                         ompi_request_t **request, mca_coll_base_module_t *module)
{
    if (run_native_if(module, COLL_ASYNC_IREDUCE, reducible(module, dtype, op))) {
        return coll_async_native_reduce(ASYNC(module), sbuf, rbuf, count, dtype, op, root, comm,
                                        request);
    }
    return DELEGATE(module, ireduce, sbuf, rbuf, count, dtype, op, root, comm, request);
}

static int async_ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                                       struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                       struct ompi_communicator_t *comm,
                                       ompi_request_t **request, mca_coll_base_module_t *module)
{
    if (run_native_if(module, COLL_ASYNC_IREDUCE_SCATTER_BLOCK, reducible(module, dtype, op))) {
        return coll_async_native_reduce_scatter_block(ASYNC(module), sbuf, rbuf, rcount, dtype,
                                                      op, comm, request);
    }
    return DELEGATE(module, ireduce_scatter_block, sbuf, rbuf, rcount, dtype, op, comm, request);
}

static int async_ireduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                                 struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                 struct ompi_communicator_t *comm, ompi_request_t **request,
                                 mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_IREDUCE_SCATTER)) {
        return completed(coll_async_single_copy(sbuf, rcounts[0], dtype, rbuf, rcounts[0],
                                                dtype),
                         comm, request);
    }
    return DELEGATE(module, ireduce_scatter, sbuf, rbuf, rcounts, dtype, op, comm, request);
}

static int async_iscan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                       struct ompi_op_t *op, struct ompi_communicator_t *comm,
                       ompi_request_t **request, mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_ISCAN)) {
        return completed(coll_async_single_copy(sbuf, count, dtype, rbuf, count, dtype), comm,
                         request);
    }
    return DELEGATE(module, iscan, sbuf, rbuf, count, dtype, op, comm, request);
}

static int async_iscatter(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                          void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                          struct ompi_communicator_t *comm, ompi_request_t **request,
                          mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_ISCATTER)) {
        return completed(coll_async_single_copy(sbuf, scount, sdtype, rbuf, rcount, rdtype),
                         comm, request);
    }
    return DELEGATE(module, iscatter, sbuf, scount, sdtype, rbuf, rcount, rdtype, root, comm,
                    request);
}

static int async_iscatterv(const void *sbuf, const int *scounts, const int *disps,
                           struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                           struct ompi_datatype_t *rdtype, int root,
                           struct ompi_communicator_t *comm, ompi_request_t **request,
                           mca_coll_base_module_t *module)
{
    if (run_native(module, COLL_ASYNC_ISCATTERV)) {
        return completed(single_scatterv(sbuf, scounts, disps, sdtype, rbuf, rcount, rdtype),
                         comm, request);
    }
    return DELEGATE(module, iscatterv, sbuf, scounts, disps, sdtype, rbuf, rcount, rdtype, root,
                    comm, request);
}

void mca_coll_async_dispatch_install(mca_coll_base_module_t *module)
{
#define INSTALL(U, l)                       \
    module->coll_##l = async_##l;           \
    module->coll_i##l = async_i##l;
    COLL_ASYNC_FAMILIES(INSTALL)
#undef INSTALL
}
