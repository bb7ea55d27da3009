/*
 * coll/async: MCA parameters, registered in one place, and their validation.
 *
 * Values that name something (algorithms, CPU lists) are registered as strings
 * and checked here rather than as MCA enums, so a wrong value gets this
 * component's own message and the component steps aside instead of failing the job.
 */

#include "ompi_config.h"

#include <stdio.h>

#include "coll_async.h"

const char *const mca_coll_async_algorithm_names[COLL_ASYNC_NUM_ALGS] = {
    [COLL_ASYNC_ALG_AUTO] = "auto",
    [COLL_ASYNC_ALG_DELEGATE] = "delegate",
};

/* Default priority: above tuned (30), so that listing async in --mca coll selects it,
 * and below self (75), which owns single-process communicators when it is loaded. */
#define DEFAULT_PRIORITY 40

static int register_var(const char *name, const char *help, mca_base_var_type_t type,
                        mca_base_var_info_lvl_t level, void *storage)
{
    return mca_base_component_var_register(&mca_coll_async_component.super.collm_version,
                                           name, help, type, NULL, 0,
                                           MCA_BASE_VAR_FLAG_SETTABLE, level,
                                           MCA_BASE_VAR_SCOPE_ALL, storage);
}

static int register_algorithm(enum coll_async_family family)
{
    char name[64], help[512], values[128];
    int rc;

    coll_async_join_names(mca_coll_async_algorithm_names, COLL_ASYNC_NUM_ALGS,
                          values, sizeof(values));
    snprintf(name, sizeof(name), "%s_algorithm", coll_async_family_name(family));
    snprintf(help, sizeof(help),
             "Algorithm for the %s collective, blocking and nonblocking. One of: %s. "
             "auto: the component chooses per communicator and message size; "
             "delegate: always hand the call to the coll component selected below this one.",
             coll_async_family_name(family), values);

    mca_coll_async_component.algorithm_value[family] =
        (char *) mca_coll_async_algorithm_names[COLL_ASYNC_ALG_AUTO];
    rc = register_var(name, help, MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_5,
                      &mca_coll_async_component.algorithm_value[family]);
    return rc < 0 ? rc : OMPI_SUCCESS;
}

int mca_coll_async_params_register(void)
{
    mca_coll_async_component_t *c = &mca_coll_async_component;
    int rc;

    c->priority = DEFAULT_PRIORITY;
    rc = register_var("priority",
                      "Priority of the async coll component. Above tuned's (30) it handles "
                      "the collectives of every intracommunicator; components with a lower "
                      "priority remain as the modules it can delegate to. A negative value "
                      "disables it.",
                      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_6, &c->priority);
    if (rc < 0) {
        return rc;
    }

    c->verbose = 0;
    rc = register_var("verbose",
                      "Verbosity of the async coll component: 0 silent; 1 prints, per "
                      "communicator, the path each collective takes (native, or delegated "
                      "to which component); 10 adds why communicators are declined.",
                      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_9, &c->verbose);
    if (rc < 0) {
        return rc;
    }

    c->progress_cpus_value = "auto";
    rc = register_var("progress_cpus",
                      "CPUs for the component's progress thread: \"auto\" (a core near "
                      "the rank's NUMA domain that the rank is not bound to, when one "
                      "exists, else the rank's own cpuset), \"none\" (not pinned), or a "
                      "list of CPU numbers such as \"0,2,4-7\".",
                      MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_5, &c->progress_cpus_value);
    if (rc < 0) {
        return rc;
    }

    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES; ++family) {
        rc = register_algorithm(family);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
    return OMPI_SUCCESS;
}

int mca_coll_async_params_check(void)
{
    mca_coll_async_component_t *c = &mca_coll_async_component;
    char why[256], values[128];
    int rc = OMPI_SUCCESS;

    if (0 != coll_async_parse_cpus(c->progress_cpus_value, &c->progress_cpus,
                                   why, sizeof(why))) {
        mca_coll_async_show_help(mca_coll_async_first_process(), "bad cpu list",
                                 c->progress_cpus_value, why);
        rc = OMPI_ERR_BAD_PARAM;
    }

    coll_async_join_names(mca_coll_async_algorithm_names, COLL_ASYNC_NUM_ALGS,
                          values, sizeof(values));
    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES; ++family) {
        int alg = coll_async_parse_name(c->algorithm_value[family],
                                        mca_coll_async_algorithm_names, COLL_ASYNC_NUM_ALGS);
        if (alg < 0) {
            mca_coll_async_show_help(mca_coll_async_first_process(), "bad algorithm",
                                     coll_async_family_name(family), c->algorithm_value[family],
                                     values);
            rc = OMPI_ERR_BAD_PARAM;
            continue;
        }
        c->algorithm[family] = (enum coll_async_algorithm) alg;
    }
    return rc;
}
