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
 * although opal/mca/threads/threads.h includes it: the thread yield of the pthreads
 * implementation, which goes through a function pointer libopen-pal exports.
 * configure puts this directory last on the include path (a real header wins).
 */
#ifndef COLL_ASYNC_COMPAT_THREADS_PTHREADS_THREADS_H
#define COLL_ASYNC_COMPAT_THREADS_PTHREADS_THREADS_H

#include <pthread.h>

#include "opal/mca/threads/threads.h"

#define OPAL_THREAD_YIELD_WHEN_IDLE_DEFAULT false

OPAL_DECLSPEC extern void (*opal_threads_pthreads_yield_fn)(void);

static inline void opal_thread_yield(void)
{
    opal_threads_pthreads_yield_fn();
}

#endif
