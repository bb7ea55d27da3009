/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: how a thread waits for another process without starving it.
 *
 * Spin first (a peer on another core answers within a cache-line round trip), then
 * yield (with more ranks than cores the peer needs this core), then sleep in
 * growing steps (a peer that computes for long should not cost a core).
 */

#ifndef MCA_COLL_ASYNC_BACKOFF_H
#define MCA_COLL_ASYNC_BACKOFF_H

#include <sched.h>
#include <stdint.h>
#include <time.h>

#define COLL_ASYNC_BACKOFF_SPINS 2000
#define COLL_ASYNC_BACKOFF_YIELDS 20000
#define COLL_ASYNC_BACKOFF_MAX_SLEEP_NS 200000

struct coll_async_backoff {
    uint32_t rounds;
    uint32_t sleep_ns;
};

#define COLL_ASYNC_BACKOFF_INIT {0, 0}

static inline void coll_async_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

enum coll_async_backoff_step {
    COLL_ASYNC_BACKOFF_SPIN,
    COLL_ASYNC_BACKOFF_YIELD,
    COLL_ASYNC_BACKOFF_SLEEP /* for backoff->sleep_ns */
};

/* Advances backoff by one round and says what the waiter does in it. */
static inline enum coll_async_backoff_step
coll_async_backoff_next(struct coll_async_backoff *backoff)
{
    if (backoff->rounds < COLL_ASYNC_BACKOFF_SPINS) {
        ++backoff->rounds;
        return COLL_ASYNC_BACKOFF_SPIN;
    }
    if (backoff->rounds < COLL_ASYNC_BACKOFF_SPINS + COLL_ASYNC_BACKOFF_YIELDS) {
        ++backoff->rounds;
        return COLL_ASYNC_BACKOFF_YIELD;
    }
    backoff->sleep_ns = backoff->sleep_ns ? backoff->sleep_ns * 2 : 1000;
    if (backoff->sleep_ns > COLL_ASYNC_BACKOFF_MAX_SLEEP_NS) {
        backoff->sleep_ns = COLL_ASYNC_BACKOFF_MAX_SLEEP_NS;
    }
    return COLL_ASYNC_BACKOFF_SLEEP;
}

static inline void coll_async_backoff_wait(struct coll_async_backoff *backoff)
{
    struct timespec pause = {.tv_sec = 0};

    switch (coll_async_backoff_next(backoff)) {
    case COLL_ASYNC_BACKOFF_SPIN:
        coll_async_cpu_relax();
        break;
    case COLL_ASYNC_BACKOFF_YIELD:
        sched_yield();
        break;
    case COLL_ASYNC_BACKOFF_SLEEP:
        pause.tv_nsec = backoff->sleep_ns;
        nanosleep(&pause, NULL);
        break;
    }
}

#endif /* MCA_COLL_ASYNC_BACKOFF_H */
