/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: MPI_T performance variables that prove which path ran.
 *
 * coll_async_<collective>_native and coll_async_<collective>_delegated count, per
 * process over all communicators, the calls this component executed itself and
 * the calls it handed to the module below. Any MPI_T tool can read them; the test
 * suite does, so a silent fallback fails a test. coll_async_numa_staged counts
 * the calls that ran in NUMA stages (coll_async_numa.h).
 */

#include "ompi_config.h"

#include <stdio.h>

#include "opal/mca/base/mca_base_pvar.h"

#include "coll_async.h"
#include "coll_async_network.h"
#include "coll_async_schedule.h"
#include "transport/coll_async_shm_pool.h"

volatile int64_t mca_coll_async_calls[COLL_ASYNC_NUM_COLLS][COLL_ASYNC_NUM_PATHS];
volatile int64_t mca_coll_async_reduce_local_calls;
volatile int64_t mca_coll_async_numa_calls;
volatile int64_t mca_coll_async_agree_calls;
volatile int64_t mca_coll_async_between_calls[COLL_ASYNC_NUM_ALGS];

static int register_counter(const mca_base_component_t *component, const char *name,
                            const char *description, volatile int64_t *counter);
static int register_reader(const mca_base_component_t *component, const char *name,
                           const char *description, mca_base_get_value_fn_t read, void *ctx);
static int register_algorithms(const mca_base_component_t *component);

static int read_counter(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    (void) obj;
    *(unsigned long long *) value = (unsigned long long) *(volatile int64_t *) pvar->ctx;
    return OPAL_SUCCESS;
}

static int read_mailbox_cma_sends(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    (void) pvar;
    (void) obj;
    *(unsigned long long *) value = mca_coll_async_network_mailbox_cma_sends();
    return OPAL_SUCCESS;
}

int mca_coll_async_pvars_register(const mca_base_component_t *component)
{
    int rc;

    static const char *const descriptions[COLL_ASYNC_NUM_PATHS] = {
        [COLL_ASYNC_PATH_DELEGATED] = "handed to the coll module selected below coll/async",
        [COLL_ASYNC_PATH_NATIVE] = "executed by coll/async itself",
    };

    for (int coll = 0; coll < COLL_ASYNC_NUM_COLLS; ++coll) {
        for (int path = 0; path < COLL_ASYNC_NUM_PATHS; ++path) {
            char name[64], description[160];

            snprintf(name, sizeof(name), "%s_%s", mca_coll_async_coll_names[coll],
                     mca_coll_async_path_names[path]);
            snprintf(description, sizeof(description),
                     "Number of MPI_%s calls in this process %s%s",
                     mca_coll_async_coll_names[coll], descriptions[path],
                     COLL_ASYNC_PERSISTENT == coll_async_form_of(coll)
                             && COLL_ASYNC_PATH_NATIVE == path
                         ? " (each MPI_Start)"
                         : "");
            rc = register_counter(component, name, description, &mca_coll_async_calls[coll][path]);
            if (rc < 0) {
                return rc;
            }
        }
    }
    rc = register_counter(component, "reduce_local_native",
                          "Number of MPI_Reduce_local calls in this process",
                          &mca_coll_async_reduce_local_calls);
    if (rc < 0) {
        return rc;
    }
    rc = register_counter(component, "numa_staged",
                          "Number of collective calls in this process that coll/async ran in "
                          "NUMA stages (inside each domain, between the domains' leaders)",
                          &mca_coll_async_numa_calls);
    if (rc < 0) {
        return rc;
    }
    rc = register_counter(component, "agree_native",
                          "Number of MPIX_Comm_agree and MPIX_Comm_iagree calls in this process "
                          "that coll/async ran itself, in an order apart from the "
                          "communicator's collectives (Open MPI 5 and later)",
                          &mca_coll_async_agree_calls);
    if (rc < 0) {
        return rc;
    }
    rc = register_counter(component, "shm_reused",
                          "Number of shared-memory segments this process took again, parked "
                          "when a communicator of the same ranks was freed, instead of making "
                          "or attaching a file (coll_async_shm_reuse_bytes)",
                          &coll_async_shm_reused);
    if (rc < 0) {
        return rc;
    }
    rc = register_reader(component, "mailbox_cma_sends",
                         "Number of this process's transfers to ranks of its node, in "
                         "communicators across nodes, that the receiver pulled with CMA "
                         "(coll_async_shm_cma, or more ranks than CPUs on the node)",
                         read_mailbox_cma_sends, NULL);
    if (rc < 0) {
        return rc;
    }
    return register_algorithms(component);
}

/* coll_async_between_<algorithm> and coll_async_shm_<schedule>: which algorithm
 * ran, for the tests and for whoever checks that a hint or parameter took. */
static int register_algorithms(const mca_base_component_t *component)
{
    char name[64], description[200];
    int rc;

    for (int alg = 0; alg < COLL_ASYNC_NUM_ALGS; ++alg) {
        if (!coll_async_decision_between_nodes(alg)) {
            continue;
        }
        snprintf(name, sizeof(name), "between_%s", coll_async_alg_names[alg]);
        snprintf(description, sizeof(description),
                 "Number of stages between nodes this process took part in as a leader that "
                 "ran the leaders' algorithm %s", coll_async_alg_names[alg]);
        rc = register_counter(component, name, description, &mca_coll_async_between_calls[alg]);
        if (rc < 0) {
            return rc;
        }
    }
    for (int schedule = 0; schedule < COLL_ASYNC_NUM_SHM_SCHEDULES; ++schedule) {
        if (COLL_ASYNC_SHM_FLAGS == schedule) {
            continue; /* the barrier's only one */
        }
        snprintf(name, sizeof(name), "shm_%s", coll_async_shm_schedule_names[schedule]);
        snprintf(description, sizeof(description),
                 "Number of shared-memory schedules inside a node this process began as %s "
                 "(allreduce, reduce, bcast, allgather, their node stages included)",
                 coll_async_shm_schedule_names[schedule]);
        rc = register_counter(component, name, description,
                              &coll_async_shm_schedule_calls[schedule]);
        if (rc < 0) {
            return rc;
        }
    }
    return OMPI_SUCCESS;
}

static int register_reader(const mca_base_component_t *component, const char *name,
                           const char *description, mca_base_get_value_fn_t read, void *ctx)
{
    int rc = mca_base_component_pvar_register(
        component, name, description, OPAL_INFO_LVL_4,
        MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG, NULL,
        MCA_BASE_VAR_BIND_NO_OBJECT,
        MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS, read, NULL, NULL, ctx);

    return rc < 0 ? rc : OMPI_SUCCESS;
}

static int register_counter(const mca_base_component_t *component, const char *name,
                            const char *description, volatile int64_t *counter)
{
    return register_reader(component, name, description, read_counter, (void *) counter);
}
