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
 * (4.1.x, 5.0.x and 6.0.x), chosen by the headers' own OMPI_MAJOR_VERSION. Everything
 * else in the component is written once, against the names defined here.
 *
 * - headers that moved: the thread-usage macros (opal/threads -> opal/mca/threads),
 *   the runtime (ORTE's ompi/mca/rte -> ompi/runtime/ompi_rte.h over PRRTE), the
 *   modex (opal/mca/pmix's framework -> PMIx itself, through pmix-internal.h);
 * - the coll framework's version (2.0.0 -> 2.4.0 -> 3.0.0; the module and component
 *   structures keep their unversioned names in all);
 * - 6.0's framework (3.0.0): counts are size_t, the v-collectives' counts and
 *   displacements are ompi_count_array_t and ompi_disp_array_t (int or, from MPI-4's
 *   _c calls, 64-bit values), and a module installs its own functions on the
 *   communicator in its enable and takes them back in its disable, where 4.1 and
 *   5.0's coll base copied them (coll_async_module_install, _uninstall);
 * - the modex: the same OPAL_MODEX_* macros, but scope, key and type names are
 *   PMIx's own in 5.0 (which waits for ever for a key another node's process
 *   never published: every process publishes its card, coll_async_card.h);
 * - a communicator's context id: an integer in 4.1, an extended (128-bit) id in 5.0;
 * - the job's node count: ORTE's process info in 4.1, a PMIx job key in 5.0;
 * - files the launcher removes at a process's end: opal_pmix's module in 4.1, a
 *   function of OPAL's PMIx layer in 5.0;
 * - what the MPI bindings keep in a nonblocking collective's request;
 * - reading an info object: into the caller's buffers in 4.1, as reference-counted
 *   strings (opal_cstring_t) in 5.0;
 * - help messages: from the component's help file in 4.1 and 5.0; 6.0 shows only
 *   those compiled into Open MPI.
 * Persistent collectives and progress need nothing here: 4.1 already has the
 * coll_<name>_init entry points 5.0 and 6.0 have, with the same arguments but for
 * 6.0's count types.
 */

#ifndef MCA_COLL_ASYNC_COMPAT_H
#define MCA_COLL_ASYNC_COMPAT_H

#include "ompi_config.h"

#include <limits.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "ompi/communicator/communicator.h"
#include "ompi/mca/coll/base/coll_base_util.h"

#include "coll_async_collectives.h"

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
#if OMPI_MAJOR_VERSION >= 6
#    define COLL_ASYNC_COLL_BASE_VERSION MCA_COLL_BASE_VERSION_3_0_0
#    define COLL_ASYNC_EXPORT OMPI_DECLSPEC
#elif OMPI_MAJOR_VERSION >= 5
#    define COLL_ASYNC_COLL_BASE_VERSION MCA_COLL_BASE_VERSION_2_4_0
#    define COLL_ASYNC_EXPORT OMPI_DECLSPEC
#else
#    define COLL_ASYNC_COLL_BASE_VERSION MCA_COLL_BASE_VERSION_2_0_0
#    define COLL_ASYNC_EXPORT OMPI_MODULE_DECLSPEC
#endif

/*
 * Counts as the coll framework hands them to a module's functions:
 *   coll_async_count_t         a count (int; 6.0: size_t, up to MPI_Count's range
 *                              from MPI-4's _c calls)
 *   coll_async_counts_t        an array of counts (const int *; 6.0: ompi_count_array_t)
 *   coll_async_displs_t        an array of displacements in elements (const int *;
 *                              6.0: ompi_disp_array_t)
 *   coll_async_byte_displs_t   a neighbourhood alltoallw's, in bytes (const MPI_Aint *;
 *                              6.0: ompi_disp_array_t)
 *   COLL_ASYNC_HAVE_AGREE      the framework has agreements (5.0 and later), with
 *                              a count of the same type
 * The native paths take counts as size_t and arrays as struct coll_async_values,
 * int or 64-bit alike (coll_async_counts_of, _displs_of, _byte_displs_of): nothing
 * is narrowed on the way in.
 */
struct coll_async_values {
    const void *values; /* NULL: none (one count for every block) */
    bool wide;          /* size_t counts or ptrdiff_t displacements; else int */
};

static inline size_t coll_async_count_at(struct coll_async_values counts, int i)
{
    return counts.wide ? ((const size_t *) counts.values)[i]
                       : (size_t) ((const int *) counts.values)[i];
}

static inline ptrdiff_t coll_async_displ_at(struct coll_async_values displs, int i)
{
    return displs.wide ? ((const ptrdiff_t *) displs.values)[i]
                       : (ptrdiff_t) ((const int *) displs.values)[i];
}

_Static_assert(sizeof(MPI_Aint) == sizeof(ptrdiff_t), "MPI_Aint is not ptrdiff_t's size");

#if OMPI_MAJOR_VERSION >= 6
typedef size_t coll_async_count_t;
typedef ompi_count_array_t coll_async_counts_t;
typedef ompi_disp_array_t coll_async_displs_t;
typedef ompi_disp_array_t coll_async_byte_displs_t;

static inline struct coll_async_values coll_async_counts_of(coll_async_counts_t counts)
{
    return (struct coll_async_values){.values = ompi_count_array_ptr(counts),
                                      .wide = ompi_count_array_is_64bit(counts)};
}

static inline struct coll_async_values coll_async_displs_of(coll_async_displs_t displs)
{
    return (struct coll_async_values){.values = ompi_disp_array_ptr(displs),
                                      .wide = ompi_disp_array_is_64bit(displs)};
}
#    define coll_async_byte_displs_of coll_async_displs_of
#else
typedef int coll_async_count_t;
typedef const int *coll_async_counts_t;
typedef const int *coll_async_displs_t;
typedef const MPI_Aint *coll_async_byte_displs_t;

#    define coll_async_counts_of(counts) ((struct coll_async_values){.values = (counts)})
#    define coll_async_displs_of(displs) ((struct coll_async_values){.values = (displs)})
#    define coll_async_byte_displs_of(displs) \
        ((struct coll_async_values){.values = (displs), .wide = true})
#endif
#define COLL_ASYNC_HAVE_AGREE (OMPI_MAJOR_VERSION >= 5)

/*
 * The module's functions on comm, each with the module as the one to call it with:
 * from 6.0, a module puts them there itself in its enable (after taking what the
 * components below it put there: module->below) and takes them back in its
 * disable; before, Open MPI's coll base does both and these do nothing.
 */
#if OMPI_MAJOR_VERSION >= 6
#    define COLL_ASYNC_INSTALL_ONE(name)                                        \
        if (NULL != module->coll_##name) {                                      \
            comm->c_coll->coll_##name = module->coll_##name;                    \
            comm->c_coll->coll_##name##_module = module;                        \
        }
#    define COLL_ASYNC_INSTALL_FAMILY(U, l)                                     \
        COLL_ASYNC_INSTALL_ONE(l)                                               \
        COLL_ASYNC_INSTALL_ONE(i##l)                                            \
        COLL_ASYNC_INSTALL_ONE(l##_init)
#    define COLL_ASYNC_RESTORE_ONE(name)                                        \
        if (module == comm->c_coll->coll_##name##_module) {                     \
            comm->c_coll->coll_##name = below->coll_##name;                     \
            comm->c_coll->coll_##name##_module = below->coll_##name##_module;   \
        }
#    define COLL_ASYNC_RESTORE_FAMILY(U, l)                                     \
        COLL_ASYNC_RESTORE_ONE(l)                                               \
        COLL_ASYNC_RESTORE_ONE(i##l)                                            \
        COLL_ASYNC_RESTORE_ONE(l##_init)

static inline void coll_async_module_install(mca_coll_base_module_t *module,
                                             struct ompi_communicator_t *comm)
{
    COLL_ASYNC_FAMILIES(COLL_ASYNC_INSTALL_FAMILY)
    COLL_ASYNC_INSTALL_ONE(reduce_local)
    COLL_ASYNC_INSTALL_ONE(agree)
    COLL_ASYNC_INSTALL_ONE(iagree)
}

static inline void coll_async_module_uninstall(mca_coll_base_module_t *module,
                                               struct ompi_communicator_t *comm,
                                               const mca_coll_base_comm_coll_t *below)
{
    COLL_ASYNC_FAMILIES(COLL_ASYNC_RESTORE_FAMILY)
    COLL_ASYNC_RESTORE_ONE(reduce_local)
    COLL_ASYNC_RESTORE_ONE(agree)
    COLL_ASYNC_RESTORE_ONE(iagree)
}
#    undef COLL_ASYNC_INSTALL_FAMILY
#    undef COLL_ASYNC_RESTORE_FAMILY
#    define coll_async_module_set_disable(module, disable) \
        ((module)->coll_module_disable = (disable))
#else
#    define coll_async_module_install(module, comm) ((void) (module), (void) (comm))
#    define coll_async_module_uninstall(module, comm, below) \
        ((void) (module), (void) (comm), (void) (below))
#    define coll_async_module_set_disable(module, disable) ((void) (module), (void) (disable))
#endif

/* Help messages: 4.1 and 5.0 read a component's help file from the directories
 * opal_show_help_add_dir names; 6.0 shows only the texts compiled into Open MPI,
 * so there the component renders its own (coll_async_say.c). */
#define COLL_ASYNC_HELP_FROM_FILES (OMPI_MAJOR_VERSION < 6)

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
 * (and, from 5.0, arrays converted from Fortran: pointers there, atomic integers
 * apart from the retained objects in 6.0). A request taken from the free list
 * starts with none.
 */
static inline void coll_async_nbc_request_clear(ompi_coll_base_nbc_request_t *request)
{
#if OMPI_MAJOR_VERSION >= 6
    request->data.refcounted.objs.objs[0] = request->data.refcounted.objs.objs[1] = NULL;
    request->data.release_arrays[0] = 0;
#elif OMPI_MAJOR_VERSION >= 5
    request->data.refcounted.objs.objs[0] = request->data.refcounted.objs.objs[1] = NULL;
    request->data.release_arrays[0] = NULL;
#else
    request->data.objs.objs[0] = request->data.objs.objs[1] = NULL;
#endif
}

/* Asks the launcher's daemon to remove the file at path when this process ends,
 * however it ends; a file already gone is nothing to it. */
static inline void coll_async_remove_at_exit(const char *path)
{
    /* Open MPI's prototypes lack the const; neither writes the path. */
#if OMPI_MAJOR_VERSION >= 5
    (void) opal_pmix_register_cleanup((char *) path, false, false, false);
#else
    if (NULL != opal_pmix.register_cleanup) {
        (void) opal_pmix.register_cleanup((char *) path, false, false, false);
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
