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

#include <dlfcn.h>
#include <stdarg.h>
#include <libgen.h>
#include <string.h>

#include "opal/util/output.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "coll_async.h"
#include "coll_async_card.h"
#include "coll_async_network.h"
#include "coll_async_request.h"

const char *mca_coll_async_component_version_string =
    "Open MPI async collective MCA component version " OMPI_VERSION;

static int async_register(void);
static int async_open(void);
static int async_close(void);
static int async_init_query(bool enable_progress_threads, bool enable_mpi_threads);

const char *const mca_coll_async_coll_names[COLL_ASYNC_NUM_COLLS] = {
#define COLL_NAME(U, l) [COLL_ASYNC_##U] = #l, [COLL_ASYNC_I##U] = "i" #l, \
                        [COLL_ASYNC_##U##_INIT] = #l "_init",
    COLL_ASYNC_FAMILIES(COLL_NAME)
#undef COLL_NAME
};

const char *const mca_coll_async_path_names[COLL_ASYNC_NUM_PATHS] = {
    [COLL_ASYNC_PATH_DELEGATED] = "delegated",
    [COLL_ASYNC_PATH_NATIVE] = "native",
};

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
    .output = -1,
};

/*
 * The help text is installed next to the component, which may not be Open MPI's
 * data directory (a component in ~/.openmpi/components, say), so the component
 * adds its own directory to the places Open MPI looks for help files.
 */
static void add_help_dir(void)
{
    Dl_info info;
    char *path;

    if (0 == dladdr(&mca_coll_async_component, &info) || NULL == info.dli_fname) {
        return;
    }
    path = strdup(info.dli_fname);
    if (NULL != path) {
        opal_show_help_add_dir(dirname(path));
        free(path);
    }
}

/*
 * Open MPI 4.1 loses help messages that several processes send to mpirun at the
 * same moment (its PMIx log relay fails to unpack them), so one process speaks
 * for the others; the rest repeat the message only when asked to be verbose.
 */
void mca_coll_async_show_help(bool speaker, const char *topic, ...)
{
    va_list args;

    if (!speaker && mca_coll_async_component.verbose < 1) {
        return;
    }
    va_start(args, topic);
    opal_show_vhelp("help-coll-async.txt", topic, true, args);
    va_end(args);
}

bool mca_coll_async_first_process(void)
{
    return 0 == OPAL_PROC_MY_NAME.vpid;
}

static int async_register(void)
{
    int rc;

    add_help_dir();
    rc = mca_coll_async_params_register();
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    return mca_coll_async_pvars_register();
}

/* What checking the parameters found, at open: the transports opened there
 * already use them. A bad value makes init_query turn the component down. */
static int params_rc = OMPI_SUCCESS;

static int async_open(void)
{
    int rc;

    mca_coll_async_component.output = opal_output_open(NULL);
    opal_output_set_verbosity(mca_coll_async_component.output,
                              mca_coll_async_component.verbose);
    params_rc = mca_coll_async_params_check();
    rc = mca_coll_async_requests_init();
    if (OMPI_SUCCESS != params_rc) {
        return rc;
    }
    if (OMPI_SUCCESS == rc) {
        rc = mca_coll_async_node_topology_init(); /* the NUMA domain the card carries */
    }
    if (OMPI_SUCCESS == rc) {
        rc = mca_coll_async_card_init();
    }
    if (OMPI_SUCCESS == rc) {
        rc = mca_coll_async_network_open(); /* its addresses go on the card */
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
    mca_coll_async_node_topology_fini();
    if (mca_coll_async_component.output >= 0) {
        opal_output_close(mca_coll_async_component.output);
        mca_coll_async_component.output = -1;
    }
    return OMPI_SUCCESS;
}

static int async_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    return OMPI_SUCCESS == params_rc ? mca_coll_async_node_topology_init() : params_rc;
}
