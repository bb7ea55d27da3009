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
 * although opal/mca/threads/mutex.h includes it (opal_config.h names it as the
 * mutex implementation). It gives the pthreads types libopen-pal was built with and
 * the thin wrappers mutex.h and condition.h call. configure puts this directory
 * last on the include path, so a real header, where one is installed, wins.
 */
#ifndef COLL_ASYNC_COMPAT_THREADS_PTHREADS_MUTEX_H
#define COLL_ASYNC_COMPAT_THREADS_PTHREADS_MUTEX_H

#include "opal_config.h"

#include <pthread.h>

#include "opal/constants.h"

typedef pthread_mutex_t opal_thread_internal_mutex_t;
typedef pthread_cond_t opal_thread_internal_cond_t;

#define OPAL_THREAD_INTERNAL_MUTEX_INITIALIZER PTHREAD_MUTEX_INITIALIZER
#define OPAL_THREAD_INTERNAL_RECURSIVE_MUTEX_INITIALIZER PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP
#define OPAL_THREAD_INTERNAL_COND_INITIALIZER PTHREAD_COND_INITIALIZER

static inline int opal_thread_internal_mutex_init(opal_thread_internal_mutex_t *m, bool recursive)
{
    pthread_mutexattr_t attr;
    int rc;

    if (!recursive) {
        return 0 == pthread_mutex_init(m, NULL) ? OPAL_SUCCESS : OPAL_ERR_IN_ERRNO;
    }
    if (0 != pthread_mutexattr_init(&attr)) {
        return OPAL_ERR_IN_ERRNO;
    }
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    rc = pthread_mutex_init(m, &attr);
    pthread_mutexattr_destroy(&attr);
    return 0 == rc ? OPAL_SUCCESS : OPAL_ERR_IN_ERRNO;
}

static inline void opal_thread_internal_mutex_lock(opal_thread_internal_mutex_t *m)
{
    (void) pthread_mutex_lock(m);
}

/* 0 when taken, 1 when busy, as mutex.h expects. */
static inline int opal_thread_internal_mutex_trylock(opal_thread_internal_mutex_t *m)
{
    return 0 == pthread_mutex_trylock(m) ? 0 : 1;
}

static inline void opal_thread_internal_mutex_unlock(opal_thread_internal_mutex_t *m)
{
    (void) pthread_mutex_unlock(m);
}

static inline void opal_thread_internal_mutex_destroy(opal_thread_internal_mutex_t *m)
{
    (void) pthread_mutex_destroy(m);
}

static inline int opal_thread_internal_cond_init(opal_thread_internal_cond_t *c)
{
    return 0 == pthread_cond_init(c, NULL) ? OPAL_SUCCESS : OPAL_ERR_IN_ERRNO;
}

static inline void opal_thread_internal_cond_wait(opal_thread_internal_cond_t *c,
                                                  opal_thread_internal_mutex_t *m)
{
    (void) pthread_cond_wait(c, m);
}

static inline void opal_thread_internal_cond_broadcast(opal_thread_internal_cond_t *c)
{
    (void) pthread_cond_broadcast(c);
}

static inline void opal_thread_internal_cond_signal(opal_thread_internal_cond_t *c)
{
    (void) pthread_cond_signal(c);
}

static inline void opal_thread_internal_cond_destroy(opal_thread_internal_cond_t *c)
{
    (void) pthread_cond_destroy(c);
}

#endif
