/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the entry points Open MPI calls, three per collective (blocking,
 * nonblocking, persistent) and reduce_local.
 *
 * Each runs the call natively where the module chose to for this communicator
 * (coll_async_module.c), else hands it, unchanged, to the module selected below
 * this one, and counts it on the path it took. A native persistent collective is
 * counted at each MPI_Start instead (coll_async_request.c), when the engine runs it.
 *
 * The arguments come in the framework's types (coll_async_compat.h: size_t counts
 * and count/displacement arrays, int or 64-bit, on 6.0); the native paths take
 * them as size_t counts and struct coll_async_values, whatever their range (MPI-4's
 * _c calls included): nothing is narrowed.
 */

#include "ompi_config.h"

#include "ompi/op/op.h"

#include "coll_async.h"
#include "coll_async_handoff.h"
#include "coll_async_native.h"
#include "coll_async_reduction.h"

#define ASYNC(module) ((mca_coll_async_module_t *) (module))

/* Counts a call on the path it took, unless it is persistent and native (counted
 * at each start). */
static inline void count_call(enum coll_async_coll coll, enum coll_async_path path)
{
    if (COLL_ASYNC_PERSISTENT != coll_async_form_of(coll) || COLL_ASYNC_PATH_NATIVE != path) {
        mca_coll_async_count(coll, path);
    }
}

/* Where nothing below provides a collective the module hands on (an
 * intercommunicator to another job, with no coll/inter): an error that names it,
 * not a call through a null pointer. */
static int not_provided(const char *name, struct ompi_communicator_t *comm)
{
    mca_coll_async_show_help(true, "not provided", name, comm->c_name);
    return OMPI_ERR_NOT_SUPPORTED;
}

/* Calls the function the module below installed for collective name. */
#define DELEGATE(module, name, ...)                                                     \
    (NULL != ASYNC(module)->below.coll_##name                                           \
         ? ASYNC(module)->below.coll_##name(__VA_ARGS__,                                \
                                            ASYNC(module)->below.coll_##name##_module)  \
         : not_provided(#name, comm))

/* Returns native_call's result where the module runs coll natively, else
 * delegate_call's. */
#define ROUTE(coll, native_call, delegate_call)                                 \
    do {                                                                        \
        COLL_ASYNC_TAKEN_OVER(module);                                          \
        if (COLL_ASYNC_PATH_NATIVE == ASYNC(module)->path[coll]) {              \
            count_call(coll, COLL_ASYNC_PATH_NATIVE);                           \
            return (native_call);                                               \
        }                                                                       \
        count_call(coll, COLL_ASYNC_PATH_DELEGATED);                            \
        return (delegate_call);                                                 \
    } while (0)

/*
 * The native form of each family, from its MPI arguments.
 */

/* A side of blocks of one count and type. */
static struct coll_async_side one_count(const void *buf, coll_async_count_t count,
                                        struct ompi_datatype_t *dtype)
{
    return (struct coll_async_side){.buf = buf, .count = (size_t) count, .dtype = dtype};
}

/* A side of blocks of one type, each with its own count and displacement. */
static struct coll_async_side per_block(const void *buf, coll_async_counts_t counts,
                                        coll_async_displs_t displs, struct ompi_datatype_t *dtype)
{
    return (struct coll_async_side){.buf = buf, .counts = coll_async_counts_of(counts),
                                    .displs = coll_async_displs_of(displs), .dtype = dtype};
}

static int native_allgather(const struct coll_async_call *call, const void *sbuf,
                            coll_async_count_t scount, struct ompi_datatype_t *sdtype, void *rbuf,
                            coll_async_count_t rcount, struct ompi_datatype_t *rdtype)
{
    struct coll_async_side send = one_count(sbuf, scount, sdtype);
    struct coll_async_side recv = one_count(rbuf, rcount, rdtype);

    return coll_async_native_gather(call, &send, &recv, -1);
}

static int native_allgatherv(const struct coll_async_call *call, const void *sbuf,
                             coll_async_count_t scount, struct ompi_datatype_t *sdtype, void *rbuf,
                             coll_async_counts_t rcounts, coll_async_displs_t displs,
                             struct ompi_datatype_t *rdtype)
{
    struct coll_async_side send = one_count(sbuf, scount, sdtype);
    struct coll_async_side recv = per_block(rbuf, rcounts, displs, rdtype);

    return coll_async_native_gather(call, &send, &recv, -1);
}

static int native_allreduce(const struct coll_async_call *call, const void *sbuf, void *rbuf,
                            coll_async_count_t count, struct ompi_datatype_t *dtype,
                            struct ompi_op_t *op)
{
    return coll_async_native_reduce(call, sbuf, rbuf, (size_t) count, dtype, op, -1);
}

static int native_alltoall(const struct coll_async_call *call, const void *sbuf,
                           coll_async_count_t scount, struct ompi_datatype_t *sdtype, void *rbuf,
                           coll_async_count_t rcount, struct ompi_datatype_t *rdtype)
{
    struct coll_async_side send = one_count(sbuf, scount, sdtype);
    struct coll_async_side recv = one_count(rbuf, rcount, rdtype);

    return coll_async_native_alltoall(call, &send, &recv);
}

static int native_alltoallv(const struct coll_async_call *call, const void *sbuf,
                            coll_async_counts_t scounts, coll_async_displs_t sdispls,
                            struct ompi_datatype_t *sdtype, void *rbuf, coll_async_counts_t rcounts,
                            coll_async_displs_t rdispls, struct ompi_datatype_t *rdtype)
{
    struct coll_async_side send = per_block(sbuf, scounts, sdispls, sdtype);
    struct coll_async_side recv = per_block(rbuf, rcounts, rdispls, rdtype);

    return coll_async_native_alltoall(call, &send, &recv);
}

static int native_alltoallw(const struct coll_async_call *call, const void *sbuf,
                            coll_async_counts_t scounts, coll_async_displs_t sdispls,
                            struct ompi_datatype_t *const *sdtypes, void *rbuf,
                            coll_async_counts_t rcounts, coll_async_displs_t rdispls,
                            struct ompi_datatype_t *const *rdtypes)
{
    struct coll_async_side send = {.buf = sbuf, .counts = coll_async_counts_of(scounts),
                                   .displs = coll_async_displs_of(sdispls), .dtypes = sdtypes};
    struct coll_async_side recv = {.buf = rbuf, .counts = coll_async_counts_of(rcounts),
                                   .displs = coll_async_displs_of(rdispls), .dtypes = rdtypes};

    return coll_async_native_alltoall(call, &send, &recv);
}

static int native_bcast(const struct coll_async_call *call, void *buf, coll_async_count_t count,
                        struct ompi_datatype_t *dtype, int root)
{
    return coll_async_native_bcast(call, buf, (size_t) count, dtype, root);
}

static int native_exscan(const struct coll_async_call *call, const void *sbuf, void *rbuf,
                         coll_async_count_t count, struct ompi_datatype_t *dtype,
                         struct ompi_op_t *op)
{
    return coll_async_native_scan(call, sbuf, rbuf, (size_t) count, dtype, op,
                                  true);
}

static int native_gather(const struct coll_async_call *call, const void *sbuf,
                         coll_async_count_t scount, struct ompi_datatype_t *sdtype, void *rbuf,
                         coll_async_count_t rcount, struct ompi_datatype_t *rdtype, int root)
{
    struct coll_async_side send = one_count(sbuf, scount, sdtype);
    struct coll_async_side recv = one_count(rbuf, rcount, rdtype);

    return coll_async_native_gather(call, &send, &recv, root);
}

static int native_gatherv(const struct coll_async_call *call, const void *sbuf,
                          coll_async_count_t scount, struct ompi_datatype_t *sdtype, void *rbuf,
                          coll_async_counts_t rcounts, coll_async_displs_t displs,
                          struct ompi_datatype_t *rdtype, int root)
{
    struct coll_async_side send = one_count(sbuf, scount, sdtype);
    struct coll_async_side recv = per_block(rbuf, rcounts, displs, rdtype);

    return coll_async_native_gather(call, &send, &recv, root);
}

static int native_reduce(const struct coll_async_call *call, const void *sbuf, void *rbuf,
                         coll_async_count_t count, struct ompi_datatype_t *dtype,
                         struct ompi_op_t *op, int root)
{
    return coll_async_native_reduce(call, sbuf, rbuf, (size_t) count, dtype, op,
                                    root);
}

static int native_reduce_scatter_block(const struct coll_async_call *call, const void *sbuf,
                                       void *rbuf, coll_async_count_t rcount,
                                       struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    return coll_async_native_reduce_scatter(call, sbuf, rbuf, (size_t) rcount,
                                            (struct coll_async_values){0},
                                            dtype, op);
}

static int native_reduce_scatter(const struct coll_async_call *call, const void *sbuf, void *rbuf,
                                 coll_async_counts_t rcounts, struct ompi_datatype_t *dtype,
                                 struct ompi_op_t *op)
{
    return coll_async_native_reduce_scatter(call, sbuf, rbuf, 0, coll_async_counts_of(rcounts),
                                            dtype, op);
}

static int native_scan(const struct coll_async_call *call, const void *sbuf, void *rbuf,
                       coll_async_count_t count, struct ompi_datatype_t *dtype,
                       struct ompi_op_t *op)
{
    return coll_async_native_scan(call, sbuf, rbuf, (size_t) count, dtype, op,
                                  false);
}

static int native_scatter(const struct coll_async_call *call, const void *sbuf,
                          coll_async_count_t scount, struct ompi_datatype_t *sdtype, void *rbuf,
                          coll_async_count_t rcount, struct ompi_datatype_t *rdtype, int root)
{
    struct coll_async_side send = one_count(sbuf, scount, sdtype);
    struct coll_async_side recv = one_count(rbuf, rcount, rdtype);

    return coll_async_native_scatter(call, &send, &recv, root);
}

static int native_scatterv(const struct coll_async_call *call, const void *sbuf,
                           coll_async_counts_t scounts, coll_async_displs_t displs,
                           struct ompi_datatype_t *sdtype, void *rbuf, coll_async_count_t rcount,
                           struct ompi_datatype_t *rdtype, int root)
{
    struct coll_async_side send = per_block(sbuf, scounts, displs, sdtype);
    struct coll_async_side recv = one_count(rbuf, rcount, rdtype);

    return coll_async_native_scatter(call, &send, &recv, root);
}

static int native_neighbor_allgather(const struct coll_async_call *call, const void *sbuf,
                                     coll_async_count_t scount, struct ompi_datatype_t *sdtype,
                                     void *rbuf, coll_async_count_t rcount,
                                     struct ompi_datatype_t *rdtype)
{
    struct coll_async_side send = one_count(sbuf, scount, sdtype);
    struct coll_async_side recv = one_count(rbuf, rcount, rdtype);

    return coll_async_native_neighbor(call, &send, true, &recv);
}

static int native_neighbor_allgatherv(const struct coll_async_call *call, const void *sbuf,
                                      coll_async_count_t scount, struct ompi_datatype_t *sdtype,
                                      void *rbuf, coll_async_counts_t rcounts,
                                      coll_async_displs_t displs, struct ompi_datatype_t *rdtype)
{
    struct coll_async_side send = one_count(sbuf, scount, sdtype);
    struct coll_async_side recv = per_block(rbuf, rcounts, displs, rdtype);

    return coll_async_native_neighbor(call, &send, true, &recv);
}

static int native_neighbor_alltoall(const struct coll_async_call *call, const void *sbuf,
                                    coll_async_count_t scount, struct ompi_datatype_t *sdtype,
                                    void *rbuf, coll_async_count_t rcount,
                                    struct ompi_datatype_t *rdtype)
{
    struct coll_async_side send = one_count(sbuf, scount, sdtype);
    struct coll_async_side recv = one_count(rbuf, rcount, rdtype);

    return coll_async_native_neighbor(call, &send, false, &recv);
}

static int native_neighbor_alltoallv(const struct coll_async_call *call, const void *sbuf,
                                     coll_async_counts_t scounts, coll_async_displs_t sdispls,
                                     struct ompi_datatype_t *sdtype, void *rbuf,
                                     coll_async_counts_t rcounts, coll_async_displs_t rdispls,
                                     struct ompi_datatype_t *rdtype)
{
    struct coll_async_side send = per_block(sbuf, scounts, sdispls, sdtype);
    struct coll_async_side recv = per_block(rbuf, rcounts, rdispls, rdtype);

    return coll_async_native_neighbor(call, &send, false, &recv);
}

static int native_neighbor_alltoallw(const struct coll_async_call *call, const void *sbuf,
                                     coll_async_counts_t scounts, coll_async_byte_displs_t sdispls,
                                     struct ompi_datatype_t *const *sdtypes, void *rbuf,
                                     coll_async_counts_t rcounts, coll_async_byte_displs_t rdispls,
                                     struct ompi_datatype_t *const *rdtypes)
{
    struct coll_async_side send = {.buf = sbuf, .counts = coll_async_counts_of(scounts),
                                   .displs = coll_async_byte_displs_of(sdispls),
                                   .dtypes = sdtypes};
    struct coll_async_side recv = {.buf = rbuf, .counts = coll_async_counts_of(rcounts),
                                   .displs = coll_async_byte_displs_of(rdispls),
                                   .dtypes = rdtypes};

    return coll_async_native_neighbor(call, &send, false, &recv);
}

/*
 * The three entry points of a family with arguments PARAMS (named ARGS), each
 * running native_<family> or the function below.
 */
#define UNPAREN(...) __VA_ARGS__
#define CALL(which, req)                                                             \
    (&(const struct coll_async_call){.module = ASYNC(module), .comm = comm,          \
                                     .coll = (which), .request = (req)})

#define ENTRY_POINTS(U, l, PARAMS, ARGS)                                             \
    static int async_##l(UNPAREN PARAMS, struct ompi_communicator_t *comm,           \
                         mca_coll_base_module_t *module)                             \
    {                                                                                \
        ROUTE(COLL_ASYNC_##U,                                                  \
              native_##l(CALL(COLL_ASYNC_##U, NULL), UNPAREN ARGS),                  \
              DELEGATE(module, l, UNPAREN ARGS, comm));                              \
    }                                                                                \
    static int async_i##l(UNPAREN PARAMS, struct ompi_communicator_t *comm,          \
                          ompi_request_t **request, mca_coll_base_module_t *module)  \
    {                                                                                \
        ROUTE(COLL_ASYNC_I##U,                                                 \
              native_##l(CALL(COLL_ASYNC_I##U, request), UNPAREN ARGS),              \
              DELEGATE(module, i##l, UNPAREN ARGS, comm, request));                  \
    }                                                                                \
    static int async_##l##_init(UNPAREN PARAMS, struct ompi_communicator_t *comm,    \
                                struct ompi_info_t *info, ompi_request_t **request,  \
                                mca_coll_base_module_t *module)                      \
    {                                                                                \
        ROUTE(COLL_ASYNC_##U##_INIT,                                           \
              native_##l(CALL(COLL_ASYNC_##U##_INIT, request), UNPAREN ARGS),        \
              DELEGATE(module, l##_init, UNPAREN ARGS, comm, info, request));        \
    }

ENTRY_POINTS(ALLGATHER, allgather,
             (const void *sbuf, coll_async_count_t scount, struct ompi_datatype_t *sdtype,
              void *rbuf, coll_async_count_t rcount, struct ompi_datatype_t *rdtype),
             (sbuf, scount, sdtype, rbuf, rcount, rdtype))
ENTRY_POINTS(ALLGATHERV, allgatherv,
             (const void *sbuf, coll_async_count_t scount, struct ompi_datatype_t *sdtype,
              void *rbuf, coll_async_counts_t rcounts, coll_async_displs_t displs,
              struct ompi_datatype_t *rdtype),
             (sbuf, scount, sdtype, rbuf, rcounts, displs, rdtype))
ENTRY_POINTS(ALLREDUCE, allreduce,
             (const void *sbuf, void *rbuf, coll_async_count_t count, struct ompi_datatype_t *dtype,
              struct ompi_op_t *op),
             (sbuf, rbuf, count, dtype, op))
ENTRY_POINTS(ALLTOALL, alltoall,
             (const void *sbuf, coll_async_count_t scount, struct ompi_datatype_t *sdtype,
              void *rbuf, coll_async_count_t rcount, struct ompi_datatype_t *rdtype),
             (sbuf, scount, sdtype, rbuf, rcount, rdtype))
ENTRY_POINTS(ALLTOALLV, alltoallv,
             (const void *sbuf, coll_async_counts_t scounts, coll_async_displs_t sdispls,
              struct ompi_datatype_t *sdtype, void *rbuf, coll_async_counts_t rcounts,
              coll_async_displs_t rdispls, struct ompi_datatype_t *rdtype),
             (sbuf, scounts, sdispls, sdtype, rbuf, rcounts, rdispls, rdtype))
ENTRY_POINTS(ALLTOALLW, alltoallw,
             (const void *sbuf, coll_async_counts_t scounts, coll_async_displs_t sdispls,
              struct ompi_datatype_t *const *sdtypes, void *rbuf, coll_async_counts_t rcounts,
              coll_async_displs_t rdispls, struct ompi_datatype_t *const *rdtypes),
             (sbuf, scounts, sdispls, sdtypes, rbuf, rcounts, rdispls, rdtypes))
ENTRY_POINTS(BCAST, bcast, (void *buf, coll_async_count_t count, struct ompi_datatype_t *dtype,
                            int root),
             (buf, count, dtype, root))
ENTRY_POINTS(EXSCAN, exscan,
             (const void *sbuf, void *rbuf, coll_async_count_t count, struct ompi_datatype_t *dtype,
              struct ompi_op_t *op),
             (sbuf, rbuf, count, dtype, op))
ENTRY_POINTS(GATHER, gather,
             (const void *sbuf, coll_async_count_t scount, struct ompi_datatype_t *sdtype,
              void *rbuf, coll_async_count_t rcount, struct ompi_datatype_t *rdtype, int root),
             (sbuf, scount, sdtype, rbuf, rcount, rdtype, root))
ENTRY_POINTS(GATHERV, gatherv,
             (const void *sbuf, coll_async_count_t scount, struct ompi_datatype_t *sdtype,
              void *rbuf, coll_async_counts_t rcounts, coll_async_displs_t displs,
              struct ompi_datatype_t *rdtype, int root),
             (sbuf, scount, sdtype, rbuf, rcounts, displs, rdtype, root))
ENTRY_POINTS(REDUCE, reduce,
             (const void *sbuf, void *rbuf, coll_async_count_t count, struct ompi_datatype_t *dtype,
              struct ompi_op_t *op, int root),
             (sbuf, rbuf, count, dtype, op, root))
ENTRY_POINTS(REDUCE_SCATTER_BLOCK, reduce_scatter_block,
             (const void *sbuf, void *rbuf, coll_async_count_t rcount,
              struct ompi_datatype_t *dtype, struct ompi_op_t *op),
             (sbuf, rbuf, rcount, dtype, op))
ENTRY_POINTS(REDUCE_SCATTER, reduce_scatter,
             (const void *sbuf, void *rbuf, coll_async_counts_t rcounts,
              struct ompi_datatype_t *dtype, struct ompi_op_t *op),
             (sbuf, rbuf, rcounts, dtype, op))
ENTRY_POINTS(SCAN, scan,
             (const void *sbuf, void *rbuf, coll_async_count_t count, struct ompi_datatype_t *dtype,
              struct ompi_op_t *op),
             (sbuf, rbuf, count, dtype, op))
ENTRY_POINTS(SCATTER, scatter,
             (const void *sbuf, coll_async_count_t scount, struct ompi_datatype_t *sdtype,
              void *rbuf, coll_async_count_t rcount, struct ompi_datatype_t *rdtype, int root),
             (sbuf, scount, sdtype, rbuf, rcount, rdtype, root))
ENTRY_POINTS(SCATTERV, scatterv,
             (const void *sbuf, coll_async_counts_t scounts, coll_async_displs_t displs,
              struct ompi_datatype_t *sdtype, void *rbuf, coll_async_count_t rcount,
              struct ompi_datatype_t *rdtype, int root),
             (sbuf, scounts, displs, sdtype, rbuf, rcount, rdtype, root))

ENTRY_POINTS(NEIGHBOR_ALLGATHER, neighbor_allgather,
             (const void *sbuf, coll_async_count_t scount, struct ompi_datatype_t *sdtype,
              void *rbuf, coll_async_count_t rcount, struct ompi_datatype_t *rdtype),
             (sbuf, scount, sdtype, rbuf, rcount, rdtype))
ENTRY_POINTS(NEIGHBOR_ALLGATHERV, neighbor_allgatherv,
             (const void *sbuf, coll_async_count_t scount, struct ompi_datatype_t *sdtype,
              void *rbuf, coll_async_counts_t rcounts, coll_async_displs_t displs,
              struct ompi_datatype_t *rdtype),
             (sbuf, scount, sdtype, rbuf, rcounts, displs, rdtype))
ENTRY_POINTS(NEIGHBOR_ALLTOALL, neighbor_alltoall,
             (const void *sbuf, coll_async_count_t scount, struct ompi_datatype_t *sdtype,
              void *rbuf, coll_async_count_t rcount, struct ompi_datatype_t *rdtype),
             (sbuf, scount, sdtype, rbuf, rcount, rdtype))
ENTRY_POINTS(NEIGHBOR_ALLTOALLV, neighbor_alltoallv,
             (const void *sbuf, coll_async_counts_t scounts, coll_async_displs_t sdispls,
              struct ompi_datatype_t *sdtype, void *rbuf, coll_async_counts_t rcounts,
              coll_async_displs_t rdispls, struct ompi_datatype_t *rdtype),
             (sbuf, scounts, sdispls, sdtype, rbuf, rcounts, rdispls, rdtype))
ENTRY_POINTS(NEIGHBOR_ALLTOALLW, neighbor_alltoallw,
             (const void *sbuf, coll_async_counts_t scounts, coll_async_byte_displs_t sdispls,
              struct ompi_datatype_t *const *sdtypes, void *rbuf, coll_async_counts_t rcounts,
              coll_async_byte_displs_t rdispls, struct ompi_datatype_t *const *rdtypes),
             (sbuf, scounts, sdispls, sdtypes, rbuf, rcounts, rdispls, rdtypes))

/* Barrier has no arguments besides the communicator. */

static int async_barrier(struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    ROUTE(COLL_ASYNC_BARRIER, coll_async_native_barrier(CALL(COLL_ASYNC_BARRIER, NULL)),
          DELEGATE(module, barrier, comm));
}

static int async_ibarrier(struct ompi_communicator_t *comm, ompi_request_t **request,
                          mca_coll_base_module_t *module)
{
    ROUTE(COLL_ASYNC_IBARRIER, coll_async_native_barrier(CALL(COLL_ASYNC_IBARRIER, request)),
          DELEGATE(module, ibarrier, comm, request));
}

static int async_barrier_init(struct ompi_communicator_t *comm, struct ompi_info_t *info,
                              ompi_request_t **request, mca_coll_base_module_t *module)
{
    ROUTE(COLL_ASYNC_BARRIER_INIT,
          coll_async_native_barrier(CALL(COLL_ASYNC_BARRIER_INIT, request)),
          DELEGATE(module, barrier_init, comm, info, request));
}

/* MPI_Reduce_local: no communication; the component's kernel where it has one. */
static int async_reduce_local(const void *inbuf, void *inoutbuf, coll_async_count_t count,
                              struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                              mca_coll_base_module_t *module)
{
    (void) module;
    OPAL_THREAD_ADD_FETCH64(&mca_coll_async_reduce_local_calls, 1);
    if (coll_async_reduction_supported(dtype, op)) {
        struct coll_async_reduction reduction;

        coll_async_reduction_resolve(&reduction, dtype, op);
        coll_async_reduce(&reduction, inoutbuf, inbuf, (size_t) count);
    } else {
        ompi_op_reduce(op, (void *) inbuf, inoutbuf, (size_t) count, dtype);
    }
    return OMPI_SUCCESS;
}

#if COLL_ASYNC_HAVE_AGREE
/* MPIX_Comm_agree and MPIX_Comm_iagree (ULFM, Open MPI 5): coll_async_agree.c.
 * coll/ftagree's own, where selected too, is kept (coll_async_module.c). */
static int async_agree(void *contrib, coll_async_count_t count, struct ompi_datatype_t *dtype,
                       struct ompi_op_t *op, struct ompi_group_t **failed, bool update_failed,
                       struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    (void) failed, (void) update_failed;
    return mca_coll_async_agree(contrib, count, dtype, op, comm, NULL, ASYNC(module));
}

static int async_iagree(void *contrib, coll_async_count_t count, struct ompi_datatype_t *dtype,
                        struct ompi_op_t *op, struct ompi_group_t **failed, bool update_failed,
                        struct ompi_communicator_t *comm, ompi_request_t **request,
                        mca_coll_base_module_t *module)
{
    (void) failed, (void) update_failed;
    return mca_coll_async_agree(contrib, count, dtype, op, comm, request, ASYNC(module));
}
#endif

void mca_coll_async_dispatch_install(mca_coll_base_module_t *module)
{
#define INSTALL(U, l)                          \
    module->coll_##l = async_##l;              \
    module->coll_i##l = async_i##l;            \
    module->coll_##l##_init = async_##l##_init;
    COLL_ASYNC_FAMILIES(INSTALL)
#undef INSTALL
    module->coll_reduce_local = async_reduce_local;
#if COLL_ASYNC_HAVE_AGREE
    module->coll_agree = async_agree;
    module->coll_iagree = async_iagree;
#endif
}
