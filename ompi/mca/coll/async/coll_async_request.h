/*
 * coll/async: the MPI requests of this component's nonblocking collectives.
 *
 * Requests come from a free list and are completed through Open MPI's request
 * completion API only, so MPI_Test/Wait and friends treat them as any other.
 */

#ifndef MCA_COLL_ASYNC_REQUEST_H
#define MCA_COLL_ASYNC_REQUEST_H

#include "ompi_config.h"

#include "ompi/request/request.h"

typedef struct mca_coll_async_request_t {
    ompi_request_t super;
} mca_coll_async_request_t;

OBJ_CLASS_DECLARATION(mca_coll_async_request_t);

int mca_coll_async_requests_init(void);
void mca_coll_async_requests_fini(void);

/* Hands out through *request a request that is already complete (the work of the
 * operation was done before the call returned), for comm. */
int mca_coll_async_request_completed(struct ompi_communicator_t *comm, ompi_request_t **request);

#endif /* MCA_COLL_ASYNC_REQUEST_H */
