/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: what differs between the Open MPI series the component builds against
 * (4.1.x and 5.0.x), chosen by the headers' own OMPI_MAJOR_VERSION. Everything else
 * in the component is written once, against the names defined here.
 *
 * - headers that moved: the thread-usage macros (opal/threads -> opal/mca/threads),
 *   the runtime (ORTE's ompi/mca/rte -> ompi/runtime/ompi_rte.h over PRRTE), the
 *   modex (opal/mca/pmix's framework -> PMIx itself, through pmix-internal.h);
 * - the coll framework's version (2.0.0 -> 2.4.0; the module and component
 *   structures keep their unversioned names in both);
 * - the modex: the same OPAL_MODEX_* macros, but scope, key and type names are
 *   PMIx's own in 5.0 (which waits for ever for a key another node's process
 *   never published: every process publishes its card, coll_async_card.h);
 * - a communicator's context id: an integer in 4.1, an extended (128-bit) id in 5.0;
 * - the job's node count: ORTE's process info in 4.1, a PMIx job key in 5.0;
 * - files the launcher removes at a process's end: opal_pmix's module in 4.1, a
 *   function of OPAL's PMIx layer in 5.0;
 * - what the MPI bindings keep in a nonblocking collective's request;
 * - reading an info object: into the caller's buffers in 4.1, as reference-counted
 *   strings (opal_cstring_t) in 5.0.
 * Persistent collectives, progress and the module interface need nothing here: 4.1
 * already has the coll_<name>_init entry points 5.0 has, with the same signatures,
 * and 5.0.x's coll base still copies each selected module's functions into
 * comm->c_coll (later series have modules install their own in enable).
 */

#ifndef MCA_COLL_ASYNC_COMPAT_H
#define MCA_COLL_ASYNC_COMPAT_H

#include "ompi_config.h"

#include <stdint.h>

#include "ompi/communicator/communicator.h"
#include "ompi/mca/coll/base/coll_base_util.h"

#if OMPI_MAJOR_VERSION >= 5
#    include "ompi/runtime/ompi_rte.h"
#    include "opal/mca/pmix/pmix-internal.h"
#    include "opal/mca/threads/thread_usage.h"
#else
#    include "ompi/mca/rte/rte.h"
#    include "opal/mca/pmix/pmix.h"
#    include "opal/threads/thread_usage.h"
#endif

/* Whether Open MPI was built with ULFM (5.0 may be; 4.1 has no such macro). */
#if defined(OPAL_ENABLE_FT_MPI) && OPAL_ENABLE_FT_MPI
#    define COLL_ASYNC_FT 1
#else
#    define COLL_ASYNC_FT 0
#endif

/* The component structure's version, and how a component exports it. */
#if OMPI_MAJOR_VERSION >= 5
#    define COLL_ASYNC_COLL_BASE_VERSION MCA_COLL_BASE_VERSION_2_4_0
#    define COLL_ASYNC_EXPORT OMPI_DECLSPEC
#else
#    define COLL_ASYNC_COLL_BASE_VERSION MCA_COLL_BASE_VERSION_2_0_0
#    define COLL_ASYNC_EXPORT OMPI_MODULE_DECLSPEC
#endif

/*
 * The modex. rc is set to a status that is 0 (OPAL_SUCCESS, PMIX_SUCCESS) on
 * success. Blobs are published for every process of the job and come back in
 * memory the caller frees.
 *   COLL_ASYNC_MODEX_SEND_BLOB(rc, key, data, size)         under a string key
 *   COLL_ASYNC_MODEX_RECV_BLOB(rc, key, name, &data, &size)  (name: opal_process_name_t *)
 *   COLL_ASYNC_MODEX_RECV_CPUSET(rc, name, &string)          the launcher's binding of
 *                                                           a process, if any
 */
#if OMPI_MAJOR_VERSION >= 5
#    define COLL_ASYNC_MODEX_GLOBAL PMIX_GLOBAL
#    define COLL_ASYNC_MODEX_KEY_CPUSET PMIX_CPUSET
#    define COLL_ASYNC_MODEX_TYPE_STRING PMIX_STRING
#else
#    define COLL_ASYNC_MODEX_GLOBAL OPAL_PMIX_GLOBAL
#    define COLL_ASYNC_MODEX_KEY_CPUSET OPAL_PMIX_CPUSET
#    define COLL_ASYNC_MODEX_TYPE_STRING OPAL_STRING
#endif

#define COLL_ASYNC_MODEX_SEND_BLOB(rc, key, data, size) \
    OPAL_MODEX_SEND_STRING(rc, COLL_ASYNC_MODEX_GLOBAL, key, data, size)
#define COLL_ASYNC_MODEX_RECV_BLOB(rc, key, name, data, size) \
    OPAL_MODEX_RECV_STRING(rc, key, name, data, size)
#define COLL_ASYNC_MODEX_RECV_CPUSET(rc, name, string)                                  \
    OPAL_MODEX_RECV_VALUE_OPTIONAL(rc, COLL_ASYNC_MODEX_KEY_CPUSET, name, string,        \
                                   COLL_ASYNC_MODEX_TYPE_STRING)

/*
 * A communicator's context id as a 32-bit number that is the same on every rank of
 * it (names of shared-memory segments, tags between nodes, verbose lines). 5.0
 * gives communicators made from an existing one (dup, split, create) an extended id
 * of base 0 whose sub-id is the index every rank agreed on, as 4.1's id was; those
 * made from a group (MPI-4 sessions) get a base from PMIx, folded in here.
 */
static inline uint32_t coll_async_comm_cid(const struct ompi_communicator_t *comm)
{
#if OMPI_MAJOR_VERSION >= 5
    ompi_comm_extended_cid_t id = ompi_comm_get_extended_cid(comm);
    uint64_t folded = id.cid_sub.u64 ^ id.cid_base * UINT64_C(0x9e3779b97f4a7c15);

    return 0 == id.cid_base ? (uint32_t) id.cid_sub.u64
                            : (uint32_t) (folded ^ folded >> 32) | UINT32_C(0x80000000);
#else
    return comm->c_contextid;
#endif
}

/*
 * A nonblocking or persistent collective's request is coll/base's nbc request: the
 * MPI bindings store there the datatypes and operations they retain for the call
 * (and, in 5.0, arrays converted from Fortran). A request taken from the free list
 * starts with none.
 */
static inline void coll_async_nbc_request_clear(ompi_coll_base_nbc_request_t *request)
{
#if OMPI_MAJOR_VERSION >= 5
    request->data.refcounted.objs.objs[0] = request->data.refcounted.objs.objs[1] = NULL;
    request->data.release_arrays[0] = NULL;
#else
    request->data.objs.objs[0] = request->data.objs.objs[1] = NULL;
#endif
}

/* Asks the launcher's daemon to remove the file at path when this process ends,
 * however it ends; a file already gone is nothing to it. */
static inline void coll_async_remove_at_exit(char *path)
{
#if OMPI_MAJOR_VERSION >= 5
    (void) opal_pmix_register_cleanup(path, false, false, false);
#else
    if (NULL != opal_pmix.register_cleanup) {
        (void) opal_pmix.register_cleanup(path, false, false, false);
    }
#endif
}

/* The number of nodes the job runs on, or 0 when unknown. */
static inline int coll_async_job_nodes(void)
{
#if OMPI_MAJOR_VERSION >= 5
    opal_process_name_t job = {.jobid = OMPI_PROC_MY_NAME->jobid, .vpid = OPAL_VPID_WILDCARD};
    uint32_t nodes = 0, *where = &nodes;
    int rc;

    OPAL_MODEX_RECV_VALUE_OPTIONAL(rc, PMIX_NUM_NODES, &job, &where, PMIX_UINT32);
    return PMIX_SUCCESS == rc ? (int) nodes : 0;
#else
    return (int) ompi_process_info.num_nodes;
#endif
}

/* The n-th key of info, and the value of key, as C strings in the caller's
 * buffer (truncated to len - 1 characters): false where there is none. */
#if OMPI_MAJOR_VERSION >= 5
static inline bool coll_async_info_key(opal_info_t *info, int n, char *out, size_t len)
{
    opal_cstring_t *key = NULL;

    if (OPAL_SUCCESS != opal_info_get_nthkey(info, n, &key) || NULL == key) {
        return false;
    }
    snprintf(out, len, "%s", key->string);
    OBJ_RELEASE(key);
    return true;
}

static inline bool coll_async_info_value(opal_info_t *info, const char *key, char *out, size_t len)
{
    opal_cstring_t *value = NULL;
    int flag = 0;

    if (OPAL_SUCCESS != opal_info_get(info, key, &value, &flag) || !flag || NULL == value) {
        return false;
    }
    snprintf(out, len, "%s", value->string);
    OBJ_RELEASE(value);
    return true;
}
#else
static inline bool coll_async_info_key(opal_info_t *info, int n, char *out, size_t len)
{
    char key[OPAL_MAX_INFO_KEY + 1];

    if (OPAL_SUCCESS != opal_info_get_nthkey(info, n, key)) {
        return false;
    }
    snprintf(out, len, "%s", key);
    return true;
}

static inline bool coll_async_info_value(opal_info_t *info, const char *key, char *out, size_t len)
{
    int flag = 0;

    /* 4.1 copies at most valuelen characters and a NUL after them. */
    if (0 == len || OPAL_SUCCESS != opal_info_get(info, key, (int) len - 1, out, &flag)) {
        return false;
    }
    return flag;
}
#endif

#endif /* MCA_COLL_ASYNC_COMPAT_H */
