/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the UD multicast transport's receive side: the completion queue,
 * each packet checked (its source, its tag) and dispatched, the receivers' side
 * of a broadcast and their acknowledgements, and packets that come before their
 * broadcast is posted. See coll_async_mcast_internal.h.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <string.h>

#include "coll_async_clock.h"
#include "coll_async_mcast_internal.h"
#include "coll_async_wire.h"

/* Packets */

static bool decode_header(const uint8_t *p, size_t length, struct header *h)
{
    if (length < HEADER || PROTOCOL_VERSION != p[1]) {
        return false;
    }
    h->type = p[0];
    h->flags = p[2];
    h->state = p[3];
    h->sender = coll_async_get_be32(p + 4);
    h->group = coll_async_get_be64(p + 8);
    h->seq = coll_async_get_be64(p + 16);
    return true;
}

/* Receiver side */

/* The missing packets in [slot->base, limit), at most m->max_ranges ranges. */
static int missing_ranges(const struct coll_async_mcast *m, const struct slot *slot, uint32_t limit,
                          struct range *ranges)
{
    int n = 0;

    for (uint32_t i = slot->base; i < limit && n < (int) m->max_ranges; ++i) {
        if (bit_test(m, slot, i)) {
            continue;
        }
        if (n > 0 && ranges[n - 1].first + ranges[n - 1].count == i) {
            ++ranges[n - 1].count;
        } else {
            ranges[n].first = i;
            ranges[n].count = 1;
            ++n;
        }
    }
    return n;
}

/* Tells the root what this receiver holds: cumulatively, and the gaps below limit. */
void mcast_receiver_report(struct coll_async_mcast *m, struct slot *slot, uint8_t state,
                           uint32_t limit, uint8_t flags)
{
    struct report r = {.state = state, .flags = flags, .count = slot->base,
                       .echo = slot->echo};
    uint64_t now = coll_async_now_us();

    if (STATE_RECEIVING == state) {
        r.nranges = missing_ranges(m, slot, limit, r.ranges);
    }
    if (r.nranges > 0) {
        ++m->stats.gap_reports;
        slot->gap_report_us = now;
    }
    slot->acked_base = slot->base;
    mcast_send_report(m, slot->op->root, PKT_ACK, slot->op->seq, &r);
}

uint32_t mcast_report_limit(const struct coll_async_mcast *m, const struct slot *slot)
{
    uint32_t limit = slot->base + m->window;

    return limit < slot->npackets ? limit : slot->npackets;
}

/* Places packet index unless held already; whether it was new. */
static bool receiver_place(struct coll_async_mcast *m, struct slot *slot, uint32_t index,
                           const uint8_t *payload)
{
    struct mcast_op *op = slot->op;

    if (index < slot->base || index >= slot->base + m->window || bit_test(m, slot, index)) {
        return false;
    }
    memcpy(op->buffer + (size_t) index * m->payload, payload, packet_bytes(m, op->length, index));
    bit_set(m, slot, index);
    if (index >= slot->highest) {
        slot->highest = index + 1;
    }
    while (slot->base < slot->npackets && bit_test(m, slot, slot->base)) {
        bit_clear(m, slot, slot->base);
        ++slot->base;
    }
    return true;
}

/* After packets arrived: done, an acknowledgement due, or a gap worth reporting. */
void mcast_receiver_settle(struct coll_async_mcast *m, struct slot *slot, bool answer,
                           bool saw_gap)
{
    uint64_t now = coll_async_now_us();

    if (slot->base == slot->npackets) {
        mcast_receiver_report(m, slot, STATE_DONE, 0, 0);
        mcast_slot_finish(m, slot, 0);
        return;
    }
    if (answer || slot->base - slot->acked_base >= m->ack_every ||
        (saw_gap && now - slot->gap_report_us >= m->gap_interval_us)) {
        mcast_receiver_report(m, slot, STATE_RECEIVING, slot->highest, 0);
    }
}

/* The root's packets prove it alive: the next unsolicited report waits again. */
static void receiver_heard(struct coll_async_mcast *m, struct slot *slot)
{
    uint64_t now = coll_async_now_us();

    slot->heard_us = now;
    slot->report_interval_us = m->resend_us;
    slot->report_at_us = now + m->resend_us;
}

/* The newest stamp seen (modulo 2^32), for the next report's echo. */
static void receiver_echo(struct slot *slot, uint32_t stamp)
{
    if (0 == slot->echo || (int32_t) (stamp - slot->echo) > 0) {
        slot->echo = stamp;
    }
}

static void receiver_take(struct coll_async_mcast *m, struct slot *slot, const struct header *h,
                          uint32_t index, uint32_t stamp, uint64_t total, const uint8_t *payload,
                          size_t bytes)
{
    struct mcast_op *op = slot->op;

    if (h->sender != op->root) {
        return; /* someone else's idea of this broadcast: not ours to trust */
    }
    receiver_heard(m, slot);
    receiver_echo(slot, stamp);
    if (total != op->length) {
        mcast_send_state(m, op->root, PKT_ACK, op->seq, STATE_FAILED, 0);
        mcast_slot_fail(m, slot, -EMSGSIZE, "the root sends %llu bytes, this member posted %zu",
                        (unsigned long long) total, op->length);
        return;
    }
    if (index >= slot->npackets || bytes != packet_bytes(m, op->length, index)) {
        return; /* malformed */
    }
    if (!(h->flags & FLAG_RESENT) && index + 1 < slot->highest) {
        ++m->stats.reordered;
    }
    if (receiver_place(m, slot, index, payload)) {
        ++m->stats.data_received;
    } else {
        ++m->stats.duplicates;
    }
    mcast_receiver_settle(m, slot, 0 != (h->flags & FLAG_ANSWER), index > slot->base);
}

static void receiver_root_says(struct coll_async_mcast *m, struct slot *slot,
                               const struct header *h, uint32_t count)
{
    if (h->sender != slot->op->root) {
        return;
    }
    slot->heard_us = coll_async_now_us();
    if (STATE_FAILED != h->state) {
        return;
    }
    slot->culprit = count < m->config.nranks ? count : NO_MEMBER;
    if (count < m->config.nranks) {
        mcast_slot_fail(m, slot, -EREMOTEIO, "the root gave it up: member %u stopped answering",
                        count);
    } else {
        mcast_slot_fail(m, slot, -EREMOTEIO, "the root gave it up");
    }
}

/* Early packets */

static void stage(struct coll_async_mcast *m, const struct header *h, uint32_t index,
                  uint32_t stamp, uint64_t total, const uint8_t *payload, size_t bytes)
{
    struct staged *entry;

    if (index >= m->window || bytes > m->payload) {
        return; /* beyond what the root sends before we acknowledge: it comes again */
    }
    entry = &m->staged[index];
    if (entry->used && entry->seq >= m->activated_seq) {
        return; /* taken by another early broadcast, or a duplicate */
    }
    entry->used = true;
    entry->seq = h->seq;
    entry->total = total;
    entry->root = h->sender;
    entry->length = (uint32_t) bytes;
    entry->stamp = stamp;
    memcpy(m->staging + (size_t) index * m->payload, payload, bytes);
    ++m->stats.staged;
}

/* Moves the staged packets of slot's broadcast into its buffer, dropping those
 * of broadcasts already past; how many it took. Their stamps count as received,
 * so the first report can prove losses. */
uint32_t mcast_adopt_staged(struct coll_async_mcast *m, struct slot *slot)
{
    struct mcast_op *op = slot->op;
    uint32_t taken = 0;

    for (uint32_t i = 0; i < m->window; ++i) {
        struct staged *entry = &m->staged[i];

        if (!entry->used || entry->seq > op->seq) {
            continue;
        }
        entry->used = false;
        if (entry->seq == op->seq && entry->root == op->root && entry->total == op->length &&
            i < slot->npackets && entry->length == packet_bytes(m, op->length, i) &&
            receiver_place(m, slot, i, (const uint8_t *) m->staging + (size_t) i * m->payload)) {
            ++m->stats.data_received;
            ++taken;
            receiver_echo(slot, entry->stamp);
        }
    }
    return taken;
}

/* Receiving */

/* A data packet for a broadcast that is not active here. */
static void take_inactive_data(struct coll_async_mcast *m, const struct header *h, uint32_t index,
                               uint32_t stamp, uint64_t total, const uint8_t *payload,
                               size_t bytes)
{
    if (h->seq >= m->activated_seq) {
        stage(m, h, index, stamp, total, payload, bytes);
        if (h->flags & FLAG_ANSWER) {
            mcast_send_state(m, h->sender, PKT_ACK, h->seq, STATE_NOT_POSTED, 0);
            if (h->seq >= m->answered_not_posted) {
                m->answered_not_posted = h->seq + 1;
            }
        }
        return;
    }
    /* A broadcast finished here: the root lost our last word. */
    if (h->flags & FLAG_ANSWER) {
        uint32_t culprit;
        bool failed = mcast_was_failed(m, h->seq, &culprit);

        mcast_send_state(m, h->sender, PKT_ACK, h->seq, failed ? STATE_FAILED : STATE_DONE,
                         failed ? 0 : packets_of(m, total));
    }
}

static void on_data(struct coll_async_mcast *m, const struct header *h, const uint8_t *p,
                    size_t length)
{
    struct slot *slot;
    uint32_t index, stamp;
    uint64_t total;

    if (length < DATA_HEADER) {
        return;
    }
    if (m->config.drop_fraction > 0) {
        m->rng ^= m->rng << 13;
        m->rng ^= m->rng >> 7;
        m->rng ^= m->rng << 17;
        if ((double) (m->rng >> 11) * 0x1.0p-53 < m->config.drop_fraction) {
            ++m->stats.dropped;
            return;
        }
    }
    index = coll_async_get_be32(p + HEADER);
    stamp = coll_async_get_be32(p + HEADER + 4);
    total = coll_async_get_be64(p + HEADER + 8);
    slot = mcast_slot_of(m, h->seq);
    if (NULL == slot) {
        take_inactive_data(m, h, index, stamp, total, p + DATA_HEADER, length - DATA_HEADER);
    } else if (!slot->root) {
        receiver_take(m, slot, h, index, stamp, total, p + DATA_HEADER, length - DATA_HEADER);
    }
}

static void on_report(struct coll_async_mcast *m, const struct header *h, const uint8_t *p,
                      size_t length)
{
    struct report r = {.state = h->state, .flags = h->flags};
    struct slot *slot;
    uint32_t culprit;

    if (length < REPORT_HEADER) {
        return;
    }
    r.count = coll_async_get_be32(p + HEADER);
    r.nranges = p[HEADER + 4];
    r.echo = coll_async_get_be32(p + HEADER + 8);
    if (r.nranges > MAX_RANGES || length < REPORT_HEADER + 8 * (size_t) r.nranges) {
        return;
    }
    for (int i = 0; i < r.nranges; ++i) {
        r.ranges[i].first = coll_async_get_be32(p + REPORT_HEADER + 8 * i);
        r.ranges[i].count = coll_async_get_be32(p + REPORT_HEADER + 8 * i + 4);
    }
    slot = mcast_slot_of(m, h->seq);
    if (PKT_ROOT == h->type) {
        if (NULL != slot && !slot->root) {
            receiver_root_says(m, slot, h, r.count);
        }
        return;
    }
    ++m->stats.acks_received;
    if (NULL != slot) {
        if (slot->root) {
            mcast_root_take_ack(m, slot, h->sender, &r);
        }
    } else if (!(h->flags & FLAG_ANSWER)) {
        return;
    } else if (h->seq >= m->activated_seq) {
        mcast_send_state(m, h->sender, PKT_ROOT, h->seq, STATE_NOT_POSTED, 0);
    } else if (mcast_was_failed(m, h->seq, &culprit)) {
        mcast_send_state(m, h->sender, PKT_ROOT, h->seq, STATE_FAILED, culprit);
    }
}

/* Whether the packet in wc came from member rank, as its blob says: its QP, and
 * its address (the network header's source on RoCE, the source LID on IB). */
static bool from_member(const struct coll_async_mcast *m, uint32_t rank, const struct ibv_wc *wc,
                        const uint8_t *grh)
{
    const struct member *member = &m->members[rank];

    if (!member->known || wc->src_qp != member->qpn) {
        return false;
    }
    if (m->ethernet) {
        return coll_async_mcast_source_is(grh, member->gid.raw);
    }
    return wc->slid == member->lid;
}

/* The bytes the tag covers: the headers, ranges included; 0 when they are not
 * all there. */
static size_t covered(const struct header *h, const uint8_t *p, size_t length)
{
    size_t bytes = 0;

    if (PKT_DATA == h->type) {
        bytes = DATA_HEADER;
    } else if ((PKT_ACK == h->type || PKT_ROOT == h->type) && length >= REPORT_HEADER) {
        bytes = REPORT_HEADER + 8 * (size_t) p[HEADER + 4];
    }
    return bytes <= length ? bytes : 0;
}

static void on_packet(struct coll_async_mcast *m, const struct ibv_wc *wc, const uint8_t *grh,
                      uint8_t *p, size_t length)
{
    struct header h;
    size_t bytes;

    if (!decode_header(p, length, &h) || h.group != m->config.group_id ||
        h.sender == m->config.self) {
        return; /* another group on the same address, or our own packet looped back */
    }
    if (h.sender >= m->config.nranks || !from_member(m, h.sender, wc, grh)) {
        ++m->stats.wrong_source;
        return;
    }
    bytes = covered(&h, p, length);
    if (0 == bytes || !coll_async_mcast_tag_ok(&m->config.key, p, bytes, TAG_AT)) {
        ++m->stats.bad_tag;
        return;
    }
    switch (h.type) {
    case PKT_DATA:
        on_data(m, &h, p, length);
        break;
    case PKT_ACK:
    case PKT_ROOT:
        on_report(m, &h, p, length);
        break;
    default:
        break;
    }
}

/* Completion queue */

void mcast_repost_receive(struct coll_async_mcast *m, int index)
{
    int n = m->nreposts++;

    m->recv_sges[n].addr = (uintptr_t) (m->memory + (size_t) index * (GRH_BYTES + m->mtu));
    m->recv_sges[n].length = (uint32_t) (GRH_BYTES + m->mtu);
    m->recv_sges[n].lkey = m->mr->lkey;
    m->recv_wrs[n].wr_id = (uint64_t) index;
    m->recv_wrs[n].sg_list = &m->recv_sges[n];
    m->recv_wrs[n].num_sge = 1;
    m->recv_wrs[n].next = NULL;
    if (n > 0) {
        m->recv_wrs[n - 1].next = &m->recv_wrs[n];
    }
}

void mcast_flush_reposts(struct coll_async_mcast *m)
{
    struct ibv_recv_wr *bad;
    int rc;

    if (0 == m->nreposts) {
        return;
    }
    m->nreposts = 0;
    rc = ibv_post_recv(m->id->qp, m->recv_wrs, &bad);
    if (0 != rc) {
        mcast_set_fatal(m, -rc, "%s: ibv_post_recv: %s", m->name, strerror(rc));
    }
}

static void on_completion(struct coll_async_mcast *m, const struct ibv_wc *wc)
{
    if (wc->wr_id & WR_SEND) {
        m->free_sends[m->nfree_sends++] = (int) (wc->wr_id & ~WR_SEND);
        if (IBV_WC_SUCCESS != wc->status) {
            mcast_set_fatal(m, -EIO, "%s: a send failed: %s", m->name,
                            ibv_wc_status_str(wc->status));
        }
        return;
    }
    if (IBV_WC_SUCCESS != wc->status) {
        mcast_set_fatal(m, -EIO, "%s: a receive failed: %s", m->name,
                        ibv_wc_status_str(wc->status));
        return;
    }
    if (wc->byte_len > GRH_BYTES && 0 == m->fatal) {
        uint8_t *grh = (uint8_t *) m->memory + wc->wr_id * (GRH_BYTES + m->mtu);

        on_packet(m, wc, grh, grh + GRH_BYTES, wc->byte_len - GRH_BYTES);
    }
    mcast_repost_receive(m, (int) wc->wr_id);
}

int mcast_poll_completions(struct coll_async_mcast *m)
{
    struct ibv_wc wcs[COMPLETIONS_PER_PROGRESS];
    struct ibv_cq *cq;
    void *context;
    int n;

    while (0 == ibv_get_cq_event(m->comp_channel, &cq, &context)) {
        ibv_ack_cq_events(cq, 1);
        m->cq_armed = false;
    }
    n = ibv_poll_cq(m->cq, COMPLETIONS_PER_PROGRESS, wcs);
    if (n < 0) {
        mcast_set_fatal(m, -EIO, "%s: ibv_poll_cq failed", m->name);
        return 0;
    }
    for (int i = 0; i < n; ++i) {
        on_completion(m, &wcs[i]);
    }
    mcast_flush_reposts(m);
    return n;
}

/* Asks for a completion event before the caller may sleep on the fd; completions
 * that came before the request are seen by the next progress call. */
int mcast_arm_cq(struct coll_async_mcast *m)
{
    if (m->cq_armed || 0 != m->fatal) {
        return 0;
    }
    if (0 != ibv_req_notify_cq(m->cq, 0)) {
        mcast_set_fatal(m, -EIO, "%s: ibv_req_notify_cq failed", m->name);
        return 0;
    }
    m->cq_armed = true;
    return 1; /* polling once more is the caller's next call */
}
