/*
 * coll/async: the collectives this component runs itself.
 *
 * Each turns the MPI arguments into an op (MPI_IN_PLACE resolved, datatypes
 * reduced to bytes or to a reduction) and executes it: inline when request is
 * NULL, else on the progress thread behind a request. On a single-process
 * communicator they are local copies. The *_eligible checks say whether the
 * arguments allow the native path at all; if not, the call is delegated.
 */

#ifndef MCA_COLL_ASYNC_NATIVE_H
#define MCA_COLL_ASYNC_NATIVE_H

#include "coll_async.h"

bool coll_async_native_reduction_eligible(mca_coll_async_module_t *module,
                                          struct ompi_datatype_t *dtype, struct ompi_op_t *op);
bool coll_async_native_bytes_eligible(mca_coll_async_module_t *module,
                                      struct ompi_datatype_t *dtype, size_t count);

/* root < 0: allreduce. */
int coll_async_native_reduce(mca_coll_async_module_t *module, const void *sbuf, void *rbuf,
                             int count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                             int root, struct ompi_communicator_t *comm,
                             ompi_request_t **request);
int coll_async_native_bcast(mca_coll_async_module_t *module, void *buf, int count,
                            struct ompi_datatype_t *dtype, int root,
                            struct ompi_communicator_t *comm, ompi_request_t **request);
int coll_async_native_barrier(mca_coll_async_module_t *module, struct ompi_communicator_t *comm,
                              ompi_request_t **request);
int coll_async_native_allgather(mca_coll_async_module_t *module, const void *sbuf, int scount,
                                struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                                struct ompi_datatype_t *rdtype,
                                struct ompi_communicator_t *comm, ompi_request_t **request);
int coll_async_native_reduce_scatter_block(mca_coll_async_module_t *module, const void *sbuf,
                                           void *rbuf, int rcount, struct ompi_datatype_t *dtype,
                                           struct ompi_op_t *op,
                                           struct ompi_communicator_t *comm,
                                           ompi_request_t **request);

#endif /* MCA_COLL_ASYNC_NATIVE_H */
