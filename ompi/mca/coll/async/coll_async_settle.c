/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the second half of a communicator's set-up, at its first
 * collective.
 *
 * Open MPI enables the module of a new communicator from its progress engine,
 * one communicator at a time per process, so that a wait there for another
 * rank's half of the set-up would hold up the communicators that rank creates
 * meanwhile (threads creating communicators at once). So the module's enable
 * only prepares its channels (coll_async_segment.c), and the segments are made
 * and attached here, before the communicator's first op begins, by whichever
 * thread steps it: the caller of a blocking collective, or the progress thread
 * for a nonblocking one; each rank then waits for the others to have attached,
 * as an op waits for its peers. Nothing blocks: an op whose channels are not
 * settled yet reports COLL_ASYNC_AGAIN, as one whose peers have not arrived
 * does. The NUMA split's outcome, voted with each rank's attach of its
 * node's channel, is read here too. A failure here is every rank's alike: the op
 * fails with a message, and so does every collective after it on this
 * communicator.
 */

#include "ompi_config.h"

#include <stddef.h>
#include <string.h>

#include "coll_async.h"
#include "coll_async_numa.h"

/* A channel settled: 0, COLL_ASYNC_AGAIN, or the error, recorded in failure. */
static int settle_channel(struct coll_async_channel *channel, struct ompi_communicator_t *comm,
                          struct coll_async_failure *failure)
{
    int rc = mca_coll_async_segment_settle(channel, comm, failure);

    return COLL_ASYNC_SHM_AGAIN == rc ? COLL_ASYNC_AGAIN : rc;
}

/* The NUMA split over the node's channel voted: flat for all unless every rank
 * opened its channels; then the channels of this rank's stages. */
static int settle_numa(struct coll_async_numa *numa, const struct coll_async_channel *voted,
                       struct ompi_communicator_t *comm, struct coll_async_failure *failure)
{
    int rc = OMPI_SUCCESS;

    if (NULL == numa) {
        return OMPI_SUCCESS;
    }
    numa->flat = !coll_async_shm_all_voted(&voted->shm);
    if (numa->flat) {
        return OMPI_SUCCESS;
    }
    if (numa->has_domain) {
        rc = settle_channel(&numa->domain_channel, comm, failure);
    }
    if (OMPI_SUCCESS == rc && numa->leads) {
        rc = settle_channel(&numa->leaders_channel, comm, failure);
    }
    return rc;
}

/* The stream's settle hook (coll_async_engine.h). */
static int settle(struct coll_async_stream *stream, struct coll_async_op *op)
{
    mca_coll_async_module_t *module =
        (mca_coll_async_module_t *) ((char *) stream - offsetof(mca_coll_async_module_t, stream));
    struct ompi_communicator_t *comm = module->settle_comm;
    struct coll_async_failure *failure = &module->settle_failure;
    struct coll_async_channel *node = module->has_channel ? &module->channel
                                                          : &module->hier->local;
    struct coll_async_numa *numa = module->has_channel ? module->numa : module->hier->numa;
    int rc = settle_channel(node, comm, failure);

    if (OMPI_SUCCESS == rc) {
        rc = settle_numa(numa, node, comm, failure);
    }
    if (OMPI_SUCCESS == rc) {
        /* Read by an application thread too (mca_coll_async_module_report_settled). */
        __atomic_store_n(&stream->settle, NULL, __ATOMIC_RELEASE);
    } else if (COLL_ASYNC_AGAIN != rc) {
        op->failure = failure;
    }
    return rc;
}

void mca_coll_async_settle_install(mca_coll_async_module_t *module,
                                   struct ompi_communicator_t *comm)
{
    if (module->has_channel || (NULL != module->hier && module->hier->has_local)) {
        module->settle_comm = comm;
        module->stream.settle = settle;
    }
}
