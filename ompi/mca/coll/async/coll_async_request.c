/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: request objects. See coll_async_request.h.
 */

#include "ompi_config.h"

#include <sched.h>

#include "opal/class/opal_free_list.h"
#include "opal/runtime/opal_progress.h"

#include "coll_async.h"
#include "coll_async_handoff.h"
#include "coll_async_request.h"

#define RELEASE_COMPLETED 1
#define RELEASE_FREED 2

static opal_free_list_t requests;

/* Ops the progress thread finished, for an application thread to complete. */
static mca_coll_async_request_t *volatile finished;

/* A collective cannot be cancelled (MPI-3.1, 5.12). */
static int request_cancel(ompi_request_t *request, int complete)
{
    (void) request;
    (void) complete;
    return MPI_ERR_REQUEST;
}

static void give_back(mca_coll_async_request_t *request)
{
    coll_async_op_free_plan(request->base.super.req_persistent ? &request->persistent.base
                                                               : &request->op.base);
    OMPI_REQUEST_FINI(&request->base.super);
    COLL_ASYNC_HANDED_OVER(request); /* to the next taker of Open MPI's free list */
    COLL_ASYNC_IN_OMPI(opal_free_list_return(&requests, &request->base.super.super));
}

/* The request goes back to the list when both the completion and the user's free
 * (MPI_Wait's, or MPI_Request_free on an active request) are over, in either order. */
static void drop(mca_coll_async_request_t *request, int32_t what)
{
    if (__atomic_fetch_or(&request->release, what, __ATOMIC_ACQ_REL) & ~what) {
        give_back(request);
    }
}

/* A persistent request may be freed when inactive (MPI-3.1 3.9); freeing an active
 * one is refused, as coll/libnbc does. */
static int request_free(ompi_request_t **request)
{
    mca_coll_async_request_t *req = (mca_coll_async_request_t *) *request;

    COLL_ASYNC_TAKEN_OVER(req); /* from the completing thread, through MPI_Wait */
    if (req->base.super.req_persistent) {
        if (!REQUEST_COMPLETE(&req->base.super)) {
            return MPI_ERR_REQUEST;
        }
        give_back(req);
        *request = MPI_REQUEST_NULL;
        return OMPI_SUCCESS;
    }
    drop(req, RELEASE_FREED);
    *request = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

static void complete(mca_coll_async_request_t *request)
{
    /* Once complete, a persistent request may be started again at once. */
    bool persistent = request->base.super.req_persistent;

    COLL_ASYNC_HANDED_OVER(request); /* to the thread MPI_Wait or MPI_Test returns in */
    COLL_ASYNC_IN_OMPI(ompi_request_complete(&request->base.super, true));
    if (!persistent) {
        drop(request, RELEASE_COMPLETED);
    }
}

/* Application threads, from opal_progress(). */
static int complete_finished(void)
{
    mca_coll_async_request_t *request;
    int count = 0;

    /* A thread spinning in MPI_Wait runs the ops itself. When another thread runs
     * them, that one may be waiting for this core: yield it. (Open MPI yields on
     * its own when idle if the node is oversubscribed.) */
    if (COLL_ASYNC_HELP_TAKEN == coll_async_engine_help()) {
        sched_yield();
    }
    mca_coll_async_say_pending(); /* what the progress thread had to say */
    if (NULL == __atomic_load_n(&finished, __ATOMIC_RELAXED)) {
        return 0;
    }
    request = __atomic_exchange_n(&finished, NULL, __ATOMIC_ACQUIRE);
    while (NULL != request) {
        mca_coll_async_request_t *next = request->next_finished;
        mca_coll_async_say_failure(request->op.base.failure);
        complete(request);
        request = next;
        ++count;
    }
    return count;
}

/* The progress thread, when the op is over. */
static void op_finished(struct coll_async_op *op, int status)
{
    mca_coll_async_request_t *request =
        (mca_coll_async_request_t *) ((char *) op - offsetof(mca_coll_async_request_t, op.base));
    mca_coll_async_request_t *head;

    request->base.super.req_status.MPI_ERROR = mca_coll_async_mpi_error(status);
    /* A failure to report waits for an application thread, which says it. */
    if (opal_using_threads() && NULL == op->failure) {
        complete(request);
        return;
    }
    head = __atomic_load_n(&finished, __ATOMIC_RELAXED);
    do {
        request->next_finished = head;
    } while (!__atomic_compare_exchange_n(&finished, &head, request, true, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
}

static void request_construct(mca_coll_async_request_t *request)
{
    request->base.super.req_type = OMPI_REQUEST_COLL;
    request->base.super.req_free = request_free;
    request->base.super.req_cancel = request_cancel;
}

OBJ_CLASS_INSTANCE(mca_coll_async_request_t, ompi_coll_base_nbc_request_t, request_construct,
                   NULL);

int mca_coll_async_requests_init(void)
{
    int rc;

    OBJ_CONSTRUCT(&requests, opal_free_list_t);
    rc = opal_free_list_init(&requests, sizeof(mca_coll_async_request_t), opal_cache_line_size,
                             OBJ_CLASS(mca_coll_async_request_t), 0, 0, 0, -1, 16, NULL, 0,
                             NULL, NULL, NULL);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    return opal_progress_register(complete_finished);
}

void mca_coll_async_requests_fini(void)
{
    opal_progress_unregister(complete_finished);
    complete_finished();
    OBJ_DESTRUCT(&requests);
}

static mca_coll_async_request_t *new_request(struct ompi_communicator_t *comm, bool persistent)
{
    mca_coll_async_request_t *request;

    COLL_ASYNC_IN_OMPI(request = (mca_coll_async_request_t *) opal_free_list_get(&requests));
    if (NULL == request) {
        return NULL;
    }
    COLL_ASYNC_TAKEN_OVER(request);
    OMPI_REQUEST_INIT(&request->base.super, persistent);
    request->base.super.req_mpi_object.comm = comm;
    request->base.super.req_status.MPI_ERROR = MPI_SUCCESS;
    request->base.super.req_state = persistent ? OMPI_REQUEST_INACTIVE : OMPI_REQUEST_ACTIVE;
    request->base.super.req_start = NULL;
    request->base.cb.req_complete_cb = NULL; /* what the bindings stored last time */
    request->base.req_complete_cb_data = NULL;
    coll_async_nbc_request_clear(&request->base);
    request->release = 0;
    return request;
}

int mca_coll_async_request_post(const struct coll_async_sched *op,
                                struct ompi_communicator_t *comm, ompi_request_t **request)
{
    mca_coll_async_request_t *req = new_request(comm, false);

    if (NULL == req) {
        coll_async_op_free_plan(&op->base);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    req->op = *op;
    req->op.base.finished = op_finished;
    if (0 != coll_async_engine_post(&req->op.base)) {
        give_back(req);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    *request = &req->base.super;
    return OMPI_SUCCESS;
}

/* MPI_Start and MPI_Startall on persistent requests of this component. */
static int request_start(size_t count, ompi_request_t **started)
{
    for (size_t i = 0; i < count; ++i) {
        mca_coll_async_request_t *req = (mca_coll_async_request_t *) started[i];

        COLL_ASYNC_TAKEN_OVER(req); /* from the thread that completed its last start */
        req->op = req->persistent;
        req->base.super.req_status.MPI_ERROR = MPI_SUCCESS;
        req->base.super.req_complete = REQUEST_PENDING;
        req->base.super.req_state = OMPI_REQUEST_ACTIVE;
        mca_coll_async_count(req->coll, COLL_ASYNC_PATH_NATIVE);
        if (0 != coll_async_engine_post(&req->op.base)) {
            req->base.super.req_complete = REQUEST_COMPLETED;
            req->base.super.req_state = OMPI_REQUEST_INACTIVE;
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    return OMPI_SUCCESS;
}

int mca_coll_async_request_persistent(const struct coll_async_sched *op,
                                      enum coll_async_coll coll,
                                      struct ompi_communicator_t *comm,
                                      ompi_request_t **request)
{
    mca_coll_async_request_t *req = new_request(comm, true);

    if (NULL == req) {
        coll_async_op_free_plan(&op->base);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    req->persistent = *op;
    req->persistent.base.finished = op_finished;
    req->coll = coll;
    req->base.super.req_start = request_start;
    *request = &req->base.super;
    return OMPI_SUCCESS;
}
