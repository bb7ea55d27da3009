/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Stand-in for an Open MPI 5.0 header that Debian 13's libopenmpi-dev does not ship
 * although opal/mca/threads/tsd.h includes it: thread-specific data as pthread keys.
 * configure puts this directory last on the include path (a real header wins).
 */
#ifndef COLL_ASYNC_COMPAT_THREADS_PTHREADS_TSD_H
#define COLL_ASYNC_COMPAT_THREADS_PTHREADS_TSD_H

#include <pthread.h>

typedef pthread_key_t opal_tsd_key_t;

static inline int opal_tsd_key_delete(opal_tsd_key_t key)
{
    return 0 == pthread_key_delete(key) ? OPAL_SUCCESS : OPAL_ERR_IN_ERRNO;
}

static inline int opal_tsd_set(opal_tsd_key_t key, void *value)
{
    return 0 == pthread_setspecific(key, value) ? OPAL_SUCCESS : OPAL_ERR_IN_ERRNO;
}

static inline int opal_tsd_get(opal_tsd_key_t key, void **value)
{
    *value = pthread_getspecific(key);
    return OPAL_SUCCESS;
}

#endif
