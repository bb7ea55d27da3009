/*
 * coll/async: request objects. See coll_async_request.h.
 */

#include "ompi_config.h"

#include "opal/class/opal_free_list.h"

#include "coll_async_request.h"

static opal_free_list_t requests;

/* A collective cannot be cancelled (MPI-3.1, 5.12). */
static int request_cancel(ompi_request_t *request, int complete)
{
    (void) request;
    (void) complete;
    return MPI_ERR_REQUEST;
}

static int request_free(ompi_request_t **request)
{
    if (!REQUEST_COMPLETE(*request)) {
        return MPI_ERR_REQUEST;
    }
    OMPI_REQUEST_FINI(*request);
    opal_free_list_return(&requests, &(*request)->super);
    *request = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

static void request_construct(mca_coll_async_request_t *request)
{
    request->super.req_type = OMPI_REQUEST_COLL;
    request->super.req_free = request_free;
    request->super.req_cancel = request_cancel;
}

OBJ_CLASS_INSTANCE(mca_coll_async_request_t, ompi_request_t, request_construct, NULL);

int mca_coll_async_requests_init(void)
{
    OBJ_CONSTRUCT(&requests, opal_free_list_t);
    return opal_free_list_init(&requests, sizeof(mca_coll_async_request_t),
                               opal_cache_line_size, OBJ_CLASS(mca_coll_async_request_t), 0, 0,
                               0, -1, 16, NULL, 0, NULL, NULL, NULL);
}

void mca_coll_async_requests_fini(void)
{
    OBJ_DESTRUCT(&requests);
}

int mca_coll_async_request_completed(struct ompi_communicator_t *comm, ompi_request_t **request)
{
    ompi_request_t *req = (ompi_request_t *) opal_free_list_get(&requests);

    if (NULL == req) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    OMPI_REQUEST_INIT(req, false);
    req->req_mpi_object.comm = comm;
    req->req_status.MPI_ERROR = MPI_SUCCESS;
    req->req_state = OMPI_REQUEST_ACTIVE;
    ompi_request_complete(req, false);
    *request = req;
    return OMPI_SUCCESS;
}
