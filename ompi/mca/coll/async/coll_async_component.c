/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the component. Open MPI loads it, calls its register function
 * (MCA parameters, MPI_T counters), asks at MPI_Init whether it can run
 * (init_query: here a bad parameter value makes it step aside), then asks it
 * for a module per communicator (comm_query, in coll_async_module.c).
 */

#include "ompi_config.h"

#include "coll_async.h"
#include "coll_async_card.h"
#include "coll_async_network.h"
#include "coll_async_request.h"
#include "coll_async_say.h"
#include "transport/coll_async_scratch.h"
#include "transport/coll_async_shm_pool.h"

const char *mca_coll_async_component_version_string =
    "Open MPI async collective MCA component version " OMPI_VERSION;

static int async_register(void);
static int async_open(void);
static int async_close(void);
static int async_init_query(bool enable_progress_threads, bool enable_mpi_threads);

mca_coll_async_component_t mca_coll_async_component = {
    .super = {
        .collm_version = {
            COLL_ASYNC_COLL_BASE_VERSION,
            .mca_component_name = "async",
            MCA_BASE_MAKE_VERSION(component, OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
                                  OMPI_RELEASE_VERSION),
            .mca_open_component = async_open,
            .mca_close_component = async_close,
            .mca_register_component_params = async_register,
        },
        .collm_data = {
            MCA_BASE_METADATA_PARAM_CHECKPOINT
        },
        .collm_init_query = async_init_query,
        .collm_comm_query = mca_coll_async_comm_query,
    },
};

static int async_register(void)
{
    int rc;

    mca_coll_async_say_init();
    rc = mca_coll_async_params_register(&mca_coll_async_component);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    return mca_coll_async_pvars_register(&mca_coll_async_component.super.collm_version);
}

/* What checking the parameters found, at open: the transports opened there
 * already use them. A bad value makes init_query turn the component down. */
static int params_rc = OMPI_SUCCESS;

static int async_open(void)
{
    int rc;

    (void) mca_coll_async_say_open(mca_coll_async_component.verbose);
    params_rc = mca_coll_async_params_check(&mca_coll_async_component);
    rc = mca_coll_async_requests_init();
    if (OMPI_SUCCESS != params_rc) {
        return rc;
    }
    coll_async_shm_pool_limit(mca_coll_async_component.shm_reuse_bytes);
    coll_async_scratch_limit(mca_coll_async_component.scratch_keep_bytes);
    if (OMPI_SUCCESS == rc) {
        rc = mca_coll_async_node_topology_init(&mca_coll_async_component.config); /* the NUMA domain the card carries */
    }
    if (OMPI_SUCCESS == rc) {
        rc = mca_coll_async_card_init();
    }
    if (OMPI_SUCCESS == rc && NULL != mca_coll_async_component.config.tuning) {
        /* What this process read, for its communicators to compare. */
        mca_coll_async_card_mine()->tuning = mca_coll_async_component.config.tuning->digest;
    }
    if (OMPI_SUCCESS == rc) {
        rc = mca_coll_async_network_open(&mca_coll_async_component.config); /* its addresses on the card */
    }
    /* Before Open MPI's modex, which carries the card to the other processes. */
    return OMPI_SUCCESS == rc ? mca_coll_async_card_publish() : rc;
}

static int async_close(void)
{
    coll_async_engine_fini();
    mca_coll_async_network_close();
    mca_coll_async_card_fini();
    mca_coll_async_requests_fini();
    coll_async_shm_pool_drain();
    coll_async_scratch_drain();
    mca_coll_async_node_topology_fini();
    mca_coll_async_params_fini(&mca_coll_async_component);
    mca_coll_async_say_close();
    return OMPI_SUCCESS;
}

static int async_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    return OMPI_SUCCESS == params_rc
               ? mca_coll_async_node_topology_init(&mca_coll_async_component.config)
               : params_rc;
}
