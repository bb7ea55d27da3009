/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the UD multicast transport behind the transport table: posting
 * broadcasts, activating them in sequence order, progress, completion, the
 * address blobs, and the typed queries. See coll_async_mcast.h; the packets and
 * the other files are in coll_async_mcast_internal.h.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "coll_async_clock.h"
#include "coll_async_mcast_internal.h"
#include "coll_async_wire.h"

/* Completion of broadcasts */

static void remember_failed(struct coll_async_mcast *m, uint64_t seq, uint32_t culprit)
{
    int i = m->nfailed++ % FAILED_REMEMBERED;

    m->failed[i].seq = seq;
    m->failed[i].culprit = culprit;
}

/* Whether broadcast seq failed here; *culprit is the member that stopped answering. */
bool mcast_was_failed(const struct coll_async_mcast *m, uint64_t seq, uint32_t *culprit)
{
    int n = m->nfailed < FAILED_REMEMBERED ? m->nfailed : FAILED_REMEMBERED;

    for (int i = 0; i < n; ++i) {
        if (m->failed[i].seq == seq) {
            *culprit = m->failed[i].culprit;
            return true;
        }
    }
    return false;
}

void mcast_slot_finish(struct coll_async_mcast *m, struct slot *slot, int result)
{
    struct coll_async_transfer *transfer = slot->transfer;

    transfer->result = result;
    if (0 != result) {
        remember_failed(m, slot->op->seq, slot->culprit);
    }
    slot->transfer = NULL;
    slot->op = NULL;
    coll_async_transfer_push(&m->done, transfer);
}

void mcast_slot_fail(struct coll_async_mcast *m, struct slot *slot, int err, const char *format,
                     ...)
{
    struct mcast_op *op = slot->op;
    int n = snprintf(slot->message, sizeof(slot->message), "%s: broadcast %llu from root %u: ",
                     m->name, (unsigned long long) op->seq, op->root);
    va_list ap;

    va_start(ap, format);
    if (n > 0 && (size_t) n < sizeof(slot->message)) {
        vsnprintf(slot->message + n, sizeof(slot->message) - (size_t) n, format, ap);
    }
    va_end(ap);
    slot->transfer->error = slot->message;
    mcast_slot_finish(m, slot, err);
}

/* message is the transport's fatal message, kept until destroy. */
static void fail_now(struct coll_async_transfer *transfer, int err, const char *message)
{
    transfer->error = message;
    transfer->result = err;
}

/* The transport cannot go on (device error, failed join). Recorded here, acted
 * on by fail_all at the end of progress, so that no caller deep in the protocol
 * loses its broadcast under its feet. */
void mcast_set_fatal(struct coll_async_mcast *m, int err, const char *format, ...)
{
    va_list ap;

    if (0 != m->fatal) {
        return;
    }
    m->fatal = err < 0 ? err : -EIO;
    va_start(ap, format);
    vsnprintf(m->fatal_message, sizeof(m->fatal_message), format, ap);
    va_end(ap);
}

/* Every broadcast, in flight or waiting, fails with the fatal message (later
 * posts fail at once). How many. */
int mcast_fail_all(struct coll_async_mcast *m)
{
    struct coll_async_transfer *transfer;
    int count = 0;

    for (int i = 0; i < COLL_ASYNC_MCAST_MAX_ACTIVE; ++i) {
        struct slot *slot = &m->slots[i];

        if (NULL != slot->op) {
            fail_now(slot->transfer, m->fatal, m->fatal_message);
            mcast_slot_finish(m, slot, m->fatal);
            ++count;
        }
    }
    while (NULL != (transfer = coll_async_transfer_pop(&m->waiting))) {
        fail_now(transfer, m->fatal, m->fatal_message);
        coll_async_transfer_push(&m->done, transfer);
        ++count;
    }
    return count;
}

struct slot *mcast_slot_of(struct coll_async_mcast *m, uint64_t seq)
{
    for (int i = 0; i < COLL_ASYNC_MCAST_MAX_ACTIVE; ++i) {
        if (NULL != m->slots[i].op && m->slots[i].op->seq == seq) {
            return &m->slots[i];
        }
    }
    return NULL;
}

/* Activation: broadcasts start in sequence order, as slots free up */

static void slot_start(struct coll_async_mcast *m, struct slot *slot,
                       struct coll_async_transfer *transfer)
{
    struct mcast_op *op = mcast_op_of(transfer);
    uint64_t now = coll_async_now_us();

    slot->transfer = transfer;
    slot->op = op;
    slot->root = op->root == m->config.self;
    slot->npackets = packets_of(m, op->length);
    memset(slot->bits, 0, sizeof(uint64_t) * ((m->window + 63) / 64));
    slot->nbits_set = 0;
    slot->base = slot->highest = slot->acked_base = 0;
    slot->heard_us = now;
    slot->gap_report_us = 0;
    slot->report_interval_us = m->resend_us;
    slot->report_at_us = now + m->resend_us;
    slot->next_new = slot->min_acked = slot->done_count = 0;
    slot->poke_interval_us = m->resend_us;
    slot->poke_at_us = now + m->resend_us;
    slot->culprit = NO_MEMBER;
    slot->echo = 0;
    if (slot->root) {
        for (uint32_t r = 0; r < m->config.nranks; ++r) {
            slot->acked[r] = 0;
            slot->state[r] = STATE_UNKNOWN;
            slot->member_heard_us[r] = now;
        }
        if (1 == m->config.nranks) {
            mcast_slot_finish(m, slot, 0);
        }
        return;
    }
    /* The root waits for us when it has sent a window already or heard that we
     * had not posted: tell it where we are at once. */
    if (mcast_adopt_staged(m, slot) > 0 || op->seq < m->answered_not_posted) {
        mcast_receiver_settle(m, slot, true, false);
    }
}

static int activate(struct coll_async_mcast *m)
{
    int count = 0;

    while (NULL != m->waiting.head) {
        struct coll_async_transfer *transfer = m->waiting.head;
        struct mcast_op *op = mcast_op_of(transfer);
        struct slot *slot = NULL;

        if (0 != op->length) {
            for (int i = 0; i < COLL_ASYNC_MCAST_MAX_ACTIVE && NULL == slot; ++i) {
                if (NULL == m->slots[i].op) {
                    slot = &m->slots[i];
                }
            }
            if (NULL == slot) {
                break;
            }
        }
        coll_async_transfer_pop(&m->waiting);
        m->activated_seq = op->seq + 1;
        ++count;
        if (NULL == slot) {
            coll_async_transfer_push(&m->done, transfer); /* nothing to send or receive */
        } else {
            slot_start(m, slot, transfer);
        }
    }
    return count;
}

/* The table's functions */

static int progress(struct coll_async_transport *transport)
{
    struct coll_async_mcast *m = mcast_of(transport);
    int work = mcast_cm_events(m);

    if (1 == m->attached && 0 == m->fatal) {
        int budget = SENDS_PER_PROGRESS;

        work += mcast_poll_completions(m);
        work += mcast_run_timers(m);
        work += activate(m);
        for (int i = 0; i < COLL_ASYNC_MCAST_MAX_ACTIVE && budget > 0; ++i) {
            if (NULL != m->slots[i].op && m->slots[i].root) {
                int sent = mcast_root_send(m, &m->slots[i], budget);

                budget -= sent;
                work += sent;
            }
        }
        mcast_flush_sends(m);
        work += mcast_arm_cq(m);
        mcast_arm_timer(m);
    }
    if (0 != m->fatal) {
        work += mcast_fail_all(m);
    }
    return work + coll_async_transfer_complete_all(&m->done);
}

static int fd(const struct coll_async_transport *transport)
{
    return mcast_of_const(transport)->epfd;
}

/* Posting */

static int bcast(struct coll_async_transport *transport, uint32_t root, void *buffer,
                 size_t length, struct coll_async_transfer *transfer)
{
    struct coll_async_mcast *m = mcast_of(transport);
    struct mcast_op *op = mcast_op_of(transfer);

    transfer->error = NULL;
    if (root >= m->config.nranks || (NULL == buffer && 0 != length) ||
        length / m->payload >= UINT32_MAX) {
        return -EINVAL;
    }
    if (0 != m->fatal) {
        fail_now(transfer, m->fatal, m->fatal_message);
        return m->fatal;
    }
    if (m->members_known < m->config.nranks - 1) {
        snprintf(m->post_error, sizeof(m->post_error),
                 "%s: %u of %u members' addresses are known", m->name, m->members_known,
                 m->config.nranks - 1);
        transfer->error = m->post_error;
        return -EINVAL;
    }
    transfer->status = COLL_ASYNC_TRANSFER_PENDING;
    transfer->result = 0;
    transfer->bytes = length;
    op->buffer = buffer;
    op->length = length;
    op->root = root;
    op->seq = m->next_seq++;
    coll_async_transfer_push(&m->waiting, transfer);
    return 0;
}

/* Address blobs: magic (2), version (1), 0 (1), QPN (4), LID (2), 0 (2), GID (16) */

static int address(const struct coll_async_transport *transport, void *blob, size_t size)
{
    const struct coll_async_mcast *m = mcast_of_const(transport);
    uint8_t *p = blob;

    if (size < COLL_ASYNC_MCAST_ADDRESS_MAX) {
        return -ENOSPC;
    }
    memset(p, 0, COLL_ASYNC_MCAST_ADDRESS_MAX);
    p[0] = ADDRESS_MAGIC0;
    p[1] = ADDRESS_MAGIC1;
    p[2] = ADDRESS_VERSION;
    coll_async_put_be32(p + 4, m->id->qp->qp_num);
    p[8] = (uint8_t) (m->lid >> 8);
    p[9] = (uint8_t) m->lid;
    memcpy(p + 12, m->gid.raw, 16);
    return COLL_ASYNC_MCAST_ADDRESS_MAX;
}

/* A member's blob; its key is not needed: the group key tags every packet. */
static int add_member(struct coll_async_transport *transport, uint32_t rank,
                      const struct coll_async_key *key, const void *blob, size_t length)
{
    struct coll_async_mcast *m = mcast_of(transport);
    const uint8_t *p = blob;
    struct member *member;

    (void) key;
    if (rank >= m->config.nranks || rank == m->config.self ||
        length < COLL_ASYNC_MCAST_ADDRESS_MAX || ADDRESS_MAGIC0 != p[0] ||
        ADDRESS_MAGIC1 != p[1] || ADDRESS_VERSION != p[2]) {
        return -EINVAL;
    }
    member = &m->members[rank];
    if (member->known) {
        return -EEXIST;
    }
    member->qpn = coll_async_get_be32(p + 4);
    member->lid = (uint16_t) (p[8] << 8 | p[9]);
    memcpy(member->gid.raw, p + 12, 16);
    member->known = true;
    ++m->members_known;
    return 0;
}

/* One-to-many: no point-to-point transfers, no registrations to release. */
const struct coll_async_transport_ops mcast_ops = {
    .name = "mcast",
    .destroy = mcast_destroy,
    .progress = progress,
    .fd = fd,
    .address = address,
    .add_peer = add_member,
    .bcast = bcast,
};

/* Queries */

struct coll_async_transport *coll_async_mcast_transport(struct coll_async_mcast *m)
{
    return &m->base;
}

int coll_async_mcast_attached(const struct coll_async_mcast *m, const char **why)
{
    if (NULL != why) {
        *why = m->attached < 0 ? m->attach_error : NULL;
    }
    return m->attached;
}

size_t coll_async_mcast_mtu(const struct coll_async_mcast *m)
{
    return m->mtu;
}

size_t coll_async_mcast_payload(const struct coll_async_mcast *m)
{
    return m->payload;
}

const char *coll_async_mcast_describe(const struct coll_async_mcast *m)
{
    return m->name;
}

void coll_async_mcast_stats(const struct coll_async_mcast *m, struct coll_async_mcast_stats *stats)
{
    *stats = m->stats;
}

bool coll_async_mcast_built(void)
{
    return true;
}
