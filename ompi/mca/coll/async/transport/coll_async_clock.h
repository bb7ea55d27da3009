/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the one clock of deadlines, timers and rate limits: monotonic,
 * so that a change of the wall clock moves none of them.
 */

#ifndef MCA_COLL_ASYNC_CLOCK_H
#define MCA_COLL_ASYNC_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t coll_async_now_ns(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t) now.tv_sec * 1000000000u + (uint64_t) now.tv_nsec;
}

static inline uint64_t coll_async_now_us(void)
{
    return coll_async_now_ns() / 1000u;
}

static inline uint64_t coll_async_now_ms(void)
{
    return coll_async_now_ns() / 1000000u;
}

#endif /* MCA_COLL_ASYNC_CLOCK_H */
