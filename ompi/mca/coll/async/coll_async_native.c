/*
 * coll/async: from MPI arguments to ops. See coll_async_native.h.
 */

#include "ompi_config.h"

#include <string.h>

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/op/op.h"
#include "opal/runtime/opal_progress.h"

#include "coll_async_native.h"
#include "coll_async_request.h"
#include "coll_async_schedule.h"
#include "coll_async_single.h"

static void progress(void)
{
    opal_progress();
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

bool coll_async_native_reduction_eligible(mca_coll_async_module_t *module,
                                          struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    return !module->has_channel || coll_async_reduction_supported(dtype, op);
}

bool coll_async_native_bytes_eligible(mca_coll_async_module_t *module,
                                      struct ompi_datatype_t *dtype, size_t count)
{
    return !module->has_channel
           || ompi_datatype_is_contiguous_memory_layout(dtype, (int32_t) count);
}

/* Runs op inline, or posts it when the caller asked for a request. */
static int execute(mca_coll_async_module_t *module, struct coll_async_op *op,
                   void (*prepare)(struct coll_async_op *op), struct ompi_communicator_t *comm,
                   ompi_request_t **request)
{
    op->channel = &module->channel;
    op->stream = &module->stream;
    if (NULL != request) {
        return mca_coll_async_request_post(op, prepare, comm, request);
    }
    prepare(op);
    return coll_async_engine_run(op, progress);
}

/* The arguments every reduction schedule takes (MPI_IN_PLACE: the receive buffer
 * holds the input). */
static void set_reduction(struct coll_async_op *work, const void *sbuf, void *rbuf,
                          int count, struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    coll_async_reduction_resolve(&work->reduction, dtype, op);
    work->sbuf = MPI_IN_PLACE == sbuf ? rbuf : sbuf;
    work->rbuf = rbuf;
    work->count = (size_t) count;
    work->bytes = work->count * work->reduction.size;
}

/* A collective with nothing to do, or done already, in the caller's form. */
static int finished(int rc, struct ompi_communicator_t *comm, ompi_request_t **request)
{
    if (OMPI_SUCCESS != rc || NULL == request) {
        return rc;
    }
    return mca_coll_async_request_completed(comm, request);
}

int coll_async_native_reduce(mca_coll_async_module_t *module, const void *sbuf, void *rbuf,
                             int count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                             int root, struct ompi_communicator_t *comm,
                             ompi_request_t **request)
{
    struct coll_async_op work = {.root = root};
    bool receives = root < 0 || root == ompi_comm_rank(comm);

    if (!module->has_channel || 0 == count) {
        int rc = receives ? coll_async_single_copy(sbuf, count, dtype, rbuf, count, dtype)
                          : OMPI_SUCCESS;
        return finished(rc, comm, request);
    }
    set_reduction(&work, sbuf, rbuf, count, dtype, op);
    return execute(module, &work, coll_async_reduction_prepare, comm, request);
}

int coll_async_native_bcast(mca_coll_async_module_t *module, void *buf, int count,
                            struct ompi_datatype_t *dtype, int root,
                            struct ompi_communicator_t *comm, ompi_request_t **request)
{
    struct coll_async_op work = {.root = root};

    work.bytes = bytes_of(dtype, (size_t) count);
    if (!module->has_channel || 0 == work.bytes) {
        return finished(OMPI_SUCCESS, comm, request);
    }
    work.rbuf = data_start(buf, dtype);
    return execute(module, &work, coll_async_bcast_prepare, comm, request);
}

int coll_async_native_barrier(mca_coll_async_module_t *module, struct ompi_communicator_t *comm,
                              ompi_request_t **request)
{
    struct coll_async_op work = {.root = -1};

    if (!module->has_channel) {
        return finished(OMPI_SUCCESS, comm, request);
    }
    return execute(module, &work, coll_async_barrier_prepare, comm, request);
}

int coll_async_native_allgather(mca_coll_async_module_t *module, const void *sbuf, int scount,
                                struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                                struct ompi_datatype_t *rdtype,
                                struct ompi_communicator_t *comm, ompi_request_t **request)
{
    struct coll_async_op work = {.root = -1};
    int rank = ompi_comm_rank(comm);

    if (!module->has_channel) {
        return finished(coll_async_single_copy(sbuf, scount, sdtype, rbuf, rcount, rdtype), comm,
                        request);
    }
    work.bytes = bytes_of(rdtype, (size_t) rcount);
    if (0 == work.bytes) {
        return finished(OMPI_SUCCESS, comm, request);
    }
    work.rbuf = data_start(rbuf, rdtype);
    work.sbuf = MPI_IN_PLACE == sbuf ? (char *) work.rbuf + (size_t) rank * work.bytes
                                     : data_start(sbuf, sdtype);
    return execute(module, &work, coll_async_allgather_prepare, comm, request);
}

int coll_async_native_reduce_scatter_block(mca_coll_async_module_t *module, const void *sbuf,
                                           void *rbuf, int rcount, struct ompi_datatype_t *dtype,
                                           struct ompi_op_t *op,
                                           struct ompi_communicator_t *comm,
                                           ompi_request_t **request)
{
    struct coll_async_op work = {.root = -1};

    if (!module->has_channel || 0 == rcount) {
        return finished(coll_async_single_copy(sbuf, rcount, dtype, rbuf, rcount, dtype), comm,
                        request);
    }
    set_reduction(&work, sbuf, rbuf, rcount, dtype, op);
    return execute(module, &work, coll_async_reduce_scatter_block_prepare, comm, request);
}
