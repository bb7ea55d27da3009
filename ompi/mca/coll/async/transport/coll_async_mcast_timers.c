/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the UD multicast transport's timers: a receiver's reports when
 * the root is silent, the root's resends when no acknowledgement moves, a
 * member failed after failure_timeout_ms, all behind one timerfd. See
 * coll_async_mcast_internal.h.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "coll_async_clock.h"
#include "coll_async_mcast_internal.h"

/* Per broadcast */

static void receiver_timer(struct coll_async_mcast *m, struct slot *slot, uint64_t now)
{
    if (now < slot->report_at_us) {
        return;
    }
    ++m->stats.timeouts;
    if (now - slot->heard_us >= m->failure_us) {
        mcast_slot_fail(m, slot, -ETIMEDOUT,
                        "the root stopped answering: nothing from it for %llu ms, %u of %u packets "
                        "held",
                        (unsigned long long) ((now - slot->heard_us) / 1000), slot->base,
                        slot->npackets);
        return;
    }
    mcast_receiver_report(m, slot, STATE_RECEIVING, mcast_report_limit(m, slot), FLAG_ANSWER);
    slot->report_interval_us *= 2;
    if (slot->report_interval_us > m->failure_us / 4) {
        slot->report_interval_us = m->failure_us / 4;
    }
    slot->report_at_us = now + slot->report_interval_us;
}

/* No acknowledgement moved for a while: fail a member silent too long, else
 * resend the slowest receiver's first missing packet asking every receiver to
 * answer; wait longer each time (receivers that have not posted may take long). */
static void root_timer(struct coll_async_mcast *m, struct slot *slot, uint64_t now)
{
    uint32_t poke = slot->npackets;

    if (now < slot->poke_at_us) {
        return;
    }
    ++m->stats.timeouts;
    for (uint32_t r = 0; r < m->config.nranks; ++r) {
        if (r == m->config.self || STATE_DONE == slot->state[r]) {
            continue;
        }
        if (now - slot->member_heard_us[r] >= m->failure_us) {
            mcast_root_fail_member(m, slot, r, now);
            return;
        }
        if (slot->acked[r] < poke) {
            poke = slot->acked[r];
        }
    }
    if (slot->next_new > 0) {
        if (poke >= slot->next_new) {
            poke = slot->next_new - 1;
        }
        if (0 == mcast_send_data(m, slot, poke, FLAG_ANSWER | FLAG_RESENT)) {
            bit_clear(m, slot, poke);
            ++m->stats.data_resent;
        }
    }
    slot->poke_interval_us *= 2;
    if (slot->poke_interval_us > m->failure_us / 4) {
        slot->poke_interval_us = m->failure_us / 4;
    }
    slot->poke_at_us = now + slot->poke_interval_us;
}

/* The timerfd: armed for the earliest deadline, read when it fires */

void mcast_arm_timer(struct coll_async_mcast *m)
{
    struct itimerspec spec = {{0, 0}, {0, 0}};
    uint64_t deadline = 0;

    for (int i = 0; i < COLL_ASYNC_MCAST_MAX_ACTIVE; ++i) {
        const struct slot *slot = &m->slots[i];
        uint64_t at;

        if (NULL == slot->op) {
            continue;
        }
        at = slot->root ? slot->poke_at_us : slot->report_at_us;
        if (0 == deadline || at < deadline) {
            deadline = at;
        }
    }
    /* A timer due sooner than needed only wakes the caller early: re-arming it
     * on every packet would cost a system call each. */
    if (deadline == m->timer_armed_us || (0 != deadline && 0 != m->timer_armed_us &&
                                          m->timer_armed_us <= deadline)) {
        return;
    }
    spec.it_value.tv_sec = (time_t) (deadline / 1000000);
    spec.it_value.tv_nsec = (long) (deadline % 1000000) * 1000;
    if (0 == timerfd_settime(m->timerfd, TFD_TIMER_ABSTIME, &spec, NULL)) {
        m->timer_armed_us = deadline;
    }
}

int mcast_run_timers(struct coll_async_mcast *m)
{
    uint64_t expirations, now = coll_async_now_us();
    int fired = 0;

    if (sizeof(expirations) == read(m->timerfd, &expirations, sizeof(expirations))) {
        m->timer_armed_us = 0;
        fired = 1;
    }
    for (int i = 0; i < COLL_ASYNC_MCAST_MAX_ACTIVE; ++i) {
        struct slot *slot = &m->slots[i];

        if (NULL == slot->op) {
            continue;
        }
        if (slot->root) {
            root_timer(m, slot, now);
        } else {
            receiver_timer(m, slot, now);
        }
    }
    return fired;
}
