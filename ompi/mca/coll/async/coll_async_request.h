/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the MPI requests of this component's nonblocking collectives.
 *
 * A request carries the op the engine executes, inside the schedule's op that
 * holds its arguments and position (struct coll_async_sched), so a nonblocking
 * call allocates nothing more. Requests come from a free list and are completed
 * through Open MPI's request completion API only, so MPI_Test/Wait and friends
 * treat them as any other.
 *
 * Who completes: with MPI_THREAD_MULTIPLE the progress thread completes the
 * request itself. Below it, Open MPI's request bookkeeping is not atomic, so the
 * progress thread only finishes the op and the next opal_progress() of an
 * application thread (MPI_Test, MPI_Wait, any MPI call that progresses)
 * completes the request. The data has moved either way.
 */

#ifndef MCA_COLL_ASYNC_REQUEST_H
#define MCA_COLL_ASYNC_REQUEST_H

#include "ompi_config.h"

#include "ompi/mca/coll/base/coll_base_util.h"
#include "ompi/request/request.h"

#include "coll_async_collectives.h"
#include "coll_async_schedule.h"

typedef struct mca_coll_async_request_t {
    /* Open MPI's layout for nonblocking collective requests, not a bare
     * ompi_request_t: after a coll_i* function returns, the MPI_I* bindings keep
     * a user-defined op or derived datatype alive by writing it and a completion
     * callback into the fields that follow ompi_request_t. */
    ompi_coll_base_nbc_request_t base;
    struct coll_async_sched op;
    struct mca_coll_async_request_t *next_finished;
    volatile int32_t release; /* bits: completion done, freed by the user */
    /* Persistent requests: the op as built at init, copied into op at each start. */
    struct coll_async_sched persistent;
    enum coll_async_coll coll;
} mca_coll_async_request_t;

OBJ_CLASS_DECLARATION(mca_coll_async_request_t);

int mca_coll_async_requests_init(void);
void mca_coll_async_requests_fini(void);

/* Copies op (and ownership of its plan) into a new request and posts it to the
 * engine. */
int mca_coll_async_request_post(const struct coll_async_sched *op,
                                struct ompi_communicator_t *comm, ompi_request_t **request);

/* Keeps op (and its plan) in a new inactive persistent request; each MPI_Start
 * counts one coll and posts a copy of op. */
int mca_coll_async_request_persistent(const struct coll_async_sched *op,
                                      enum coll_async_coll coll,
                                      struct ompi_communicator_t *comm,
                                      ompi_request_t **request);

#endif /* MCA_COLL_ASYNC_REQUEST_H */
