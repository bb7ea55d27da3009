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
 * although opal/mca/timer/base/base.h includes it: the Linux timer's entry points,
 * which libopen-pal exports. configure puts this directory last on the include path
 * (a real header wins).
 */
#ifndef COLL_ASYNC_COMPAT_TIMER_LINUX_H
#define COLL_ASYNC_COMPAT_TIMER_LINUX_H

#include "opal_config.h"
#include "opal/sys/timer.h"

OPAL_DECLSPEC extern opal_timer_t (*opal_timer_base_get_cycles)(void);
OPAL_DECLSPEC extern opal_timer_t (*opal_timer_base_get_usec)(void);
OPAL_DECLSPEC extern opal_timer_t opal_timer_base_get_freq(void);

#define OPAL_TIMER_CYCLE_NATIVE OPAL_HAVE_SYS_TIMER_GET_CYCLES
#define OPAL_TIMER_CYCLE_SUPPORTED OPAL_HAVE_SYS_TIMER_GET_CYCLES
#define OPAL_TIMER_USEC_NATIVE OPAL_HAVE_SYS_TIMER_GET_CYCLES
#define OPAL_TIMER_USEC_SUPPORTED OPAL_HAVE_SYS_TIMER_GET_CYCLES

#endif
