/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the UD multicast transport's send side: packets built in send
 * slots and posted in batches, and the root's side of a broadcast (its
 * acknowledgements, what to resend, new packets inside the window). See
 * coll_async_mcast_internal.h.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <string.h>

#include "coll_async_clock.h"
#include "coll_async_mcast_internal.h"
#include "coll_async_wire.h"

/* Packets */

static void encode_header(uint8_t *p, const struct header *h)
{
    p[0] = h->type;
    p[1] = PROTOCOL_VERSION;
    p[2] = h->flags;
    p[3] = h->state;
    coll_async_put_be32(p + 4, h->sender);
    coll_async_put_be64(p + 8, h->group);
    coll_async_put_be64(p + 16, h->seq);
    memset(p + TAG_AT, 0, 8); /* sealed once the packet is complete */
}

/* Sending */

static char *send_slot_buffer(struct coll_async_mcast *m, int slot)
{
    return m->memory + (size_t) m->recv_depth * (GRH_BYTES + m->mtu) + (size_t) slot * m->mtu;
}

static struct ibv_ah *member_ah(struct coll_async_mcast *m, uint32_t rank)
{
    struct member *member = &m->members[rank];
    struct ibv_ah_attr attr;

    if (NULL != member->ah || !member->known) {
        return member->ah;
    }
    attr = m->ah_template;
    if (m->ethernet) {
        attr.is_global = 1;
        attr.grh.dgid = member->gid;
        attr.grh.flow_label = 0;
        attr.grh.hop_limit = UNICAST_HOP_LIMIT;
        attr.dlid = 0;
    } else {
        attr.is_global = 0;
        attr.dlid = member->lid;
    }
    member->ah = ibv_create_ah(m->pd, &attr);
    if (NULL == member->ah) {
        mcast_set_fatal(m, -errno, "%s: no address handle to member %u: %s", m->name, rank,
                        strerror(errno));
    }
    return member->ah;
}

/* Posts the sends batched so far, with one doorbell: a system call per packet
 * would cost more than the packet on software RoCE. */
void mcast_flush_sends(struct coll_async_mcast *m)
{
    struct ibv_send_wr *bad = NULL;
    int rc;

    if (0 == m->nsends) {
        return;
    }
    m->send_wrs[m->nsends - 1].next = NULL;
    rc = ibv_post_send(m->id->qp, m->send_wrs, &bad);
    m->nsends = 0;
    if (0 != rc) {
        for (; NULL != bad; bad = bad->next) {
            m->free_sends[m->nfree_sends++] = (int) (bad->wr_id & ~WR_SEND);
        }
        mcast_set_fatal(m, -rc, "%s: ibv_post_send: %s", m->name, strerror(rc));
    }
}

/* Queues the packet built in send slot `slot` for a member, or for the group
 * when rank is NO_MEMBER; the batch goes out when full and at the end of each
 * progress call, in order. */
static int post_packet(struct coll_async_mcast *m, int slot, size_t length, uint32_t rank)
{
    struct ibv_send_wr *wr = &m->send_wrs[m->nsends];
    struct ibv_sge *sge = &m->send_sges[m->nsends];
    struct ibv_ah *ah = NO_MEMBER == rank ? m->group_ah : member_ah(m, rank);

    if (NULL == ah) {
        m->free_sends[m->nfree_sends++] = slot;
        return -EHOSTUNREACH;
    }
    *sge = (struct ibv_sge){.addr = (uintptr_t) send_slot_buffer(m, slot),
                            .length = (uint32_t) length,
                            .lkey = m->mr->lkey};
    *wr = (struct ibv_send_wr){.wr_id = WR_SEND | (uint64_t) slot, .sg_list = sge, .num_sge = 1,
                               .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED};
    wr->wr.ud.ah = ah;
    wr->wr.ud.remote_qpn = NO_MEMBER == rank ? m->group_qpn : m->members[rank].qpn;
    wr->wr.ud.remote_qkey = m->qkey;
    if (m->nsends > 0) {
        m->send_wrs[m->nsends - 1].next = wr;
    }
    if (++m->nsends == SEND_BATCH) {
        mcast_flush_sends(m);
    }
    return 0;
}

/* A free send slot, or -1. Data leaves REPORT_SLOTS to acks and answers, which
 * are small and keep the protocol moving. */
static int take_send_slot(struct coll_async_mcast *m, bool data)
{
    if (m->nfree_sends <= (data ? REPORT_SLOTS : 0)) {
        return -1;
    }
    return m->free_sends[--m->nfree_sends];
}

int mcast_send_data(struct coll_async_mcast *m, struct slot *slot, uint32_t index, uint8_t flags)
{
    struct mcast_op *op = slot->op;
    struct header h = {.type = PKT_DATA, .flags = flags, .sender = m->config.self,
                       .group = m->config.group_id, .seq = op->seq};
    size_t bytes = packet_bytes(m, op->length, index);
    int s = take_send_slot(m, true);
    uint8_t *p;

    if (s < 0) {
        return -EAGAIN;
    }
    if (0 == ++m->stamp) {
        m->stamp = 1; /* 0 is "no echo" */
    }
    p = (uint8_t *) send_slot_buffer(m, s);
    encode_header(p, &h);
    coll_async_put_be32(p + HEADER, index);
    coll_async_put_be32(p + HEADER + 4, m->stamp);
    coll_async_put_be64(p + HEADER + 8, op->length);
    coll_async_mcast_seal(&m->config.key, p, DATA_HEADER, TAG_AT);
    memcpy(p + DATA_HEADER, op->buffer + (size_t) index * m->payload, bytes);
    slot->sent_stamp[index % m->window] = m->stamp;
    return post_packet(m, s, DATA_HEADER + bytes, NO_MEMBER);
}

/* An ACK or ROOT packet to rank. Dropped when no send slot is free: the
 * protocol asks again. */
void mcast_send_report(struct coll_async_mcast *m, uint32_t rank, uint8_t type, uint64_t seq,
                       const struct report *r)
{
    struct header h = {.type = type, .flags = r->flags, .state = r->state,
                       .sender = m->config.self, .group = m->config.group_id, .seq = seq};
    int s = take_send_slot(m, false);
    uint8_t *p;

    if (s < 0) {
        return;
    }
    p = (uint8_t *) send_slot_buffer(m, s);
    encode_header(p, &h);
    coll_async_put_be32(p + HEADER, r->count);
    p[HEADER + 4] = (uint8_t) r->nranges;
    p[HEADER + 5] = p[HEADER + 6] = p[HEADER + 7] = 0;
    coll_async_put_be32(p + HEADER + 8, r->echo);
    for (int i = 0; i < r->nranges; ++i) {
        coll_async_put_be32(p + REPORT_HEADER + 8 * i, r->ranges[i].first);
        coll_async_put_be32(p + REPORT_HEADER + 8 * i + 4, r->ranges[i].count);
    }
    coll_async_mcast_seal(&m->config.key, p, REPORT_HEADER + 8 * (size_t) r->nranges, TAG_AT);
    if (0 == post_packet(m, s, REPORT_HEADER + 8 * (size_t) r->nranges, rank) &&
        PKT_ACK == type) {
        ++m->stats.acks_sent;
    }
}

/* A report that only states something. */
void mcast_send_state(struct coll_async_mcast *m, uint32_t rank, uint8_t type, uint64_t seq,
                      uint8_t state, uint32_t count)
{
    struct report r = {.state = state, .count = count};

    mcast_send_report(m, rank, type, seq, &r);
}

/* Root side */

void mcast_root_fail_member(struct coll_async_mcast *m, struct slot *slot, uint32_t rank,
                            uint64_t now)
{
    static const char *const said[] = {
        [STATE_UNKNOWN] = "never answered",
        [STATE_RECEIVING] = "was receiving",
        [STATE_NOT_POSTED] = "had not posted it",
        [STATE_DONE] = "was done",
        [STATE_FAILED] = "failed",
        [STATE_SENDING] = "?",
    };
    slot->culprit = rank;
    mcast_slot_fail(m, slot, -ETIMEDOUT,
                    "member %u stopped answering: nothing from it for %llu ms; it %s, %u of %u "
                    "packets acknowledged",
                    rank, (unsigned long long) ((now - slot->member_heard_us[rank]) / 1000),
                    said[slot->state[rank]], slot->acked[rank], slot->npackets);
}

/* The slowest receiver's acknowledgement moved: packets below it are no longer
 * resent. */
static void root_advance(struct coll_async_mcast *m, struct slot *slot)
{
    uint32_t min = slot->npackets;

    for (uint32_t r = 0; r < m->config.nranks; ++r) {
        if (r != m->config.self && slot->acked[r] < min) {
            min = slot->acked[r];
        }
    }
    for (uint32_t i = slot->min_acked; i < min && slot->nbits_set > 0; ++i) {
        bit_clear(m, slot, i);
    }
    slot->min_acked = min;
}

/* Whether the report was written after the receiver got a packet sent after
 * packet p's last sending (stamps compared modulo 2^32). */
static bool report_after_sending(const struct coll_async_mcast *m, const struct slot *slot,
                                 const struct report *report, uint32_t p)
{
    return 0 != report->echo &&
           (int32_t) (report->echo - slot->sent_stamp[p % m->window]) > 0;
}

void mcast_root_take_ack(struct coll_async_mcast *m, struct slot *slot, uint32_t r,
                         const struct report *report)
{
    uint32_t count = report->count;
    uint64_t now = coll_async_now_us();
    bool moved = false;
    int marked = 0;

    slot->member_heard_us[r] = now;
    switch (report->state) {
    case STATE_FAILED:
        mcast_slot_fail(m, slot, -EREMOTEIO, "member %u gave it up (it posted another length?)", r);
        return;
    case STATE_NOT_POSTED:
        if (STATE_UNKNOWN == slot->state[r]) {
            slot->state[r] = STATE_NOT_POSTED;
        }
        break;
    case STATE_DONE:
        if (STATE_DONE != slot->state[r]) {
            slot->state[r] = STATE_DONE;
            slot->acked[r] = slot->npackets;
            ++slot->done_count;
            moved = true;
        }
        break;
    case STATE_RECEIVING:
        if (STATE_DONE == slot->state[r]) {
            break; /* a late report */
        }
        moved = STATE_RECEIVING != slot->state[r];
        slot->state[r] = STATE_RECEIVING;
        if (count > slot->acked[r] && count <= slot->next_new) {
            slot->acked[r] = count;
            moved = true;
        }
        for (int i = 0; i < report->nranges; ++i) {
            uint32_t first = report->ranges[i].first, end = first + report->ranges[i].count;

            if (end < first || end > slot->next_new) {
                end = slot->next_new;
            }
            for (uint32_t p = first < slot->min_acked ? slot->min_acked : first; p < end; ++p) {
                if (report_after_sending(m, slot, report, p)) {
                    bit_set(m, slot, p);
                    ++marked;
                }
            }
        }
        break;
    default:
        return;
    }
    if (moved) {
        root_advance(m, slot);
        slot->poke_interval_us = m->resend_us;
        slot->poke_at_us = now + m->resend_us;
    }
    if (slot->done_count == m->config.nranks - 1) {
        mcast_slot_finish(m, slot, 0);
        return;
    }
    if ((report->flags & FLAG_ANSWER) && 0 == marked) {
        mcast_send_state(m, r, PKT_ROOT, slot->op->seq, STATE_SENDING, 0);
    }
}

/* Resends first (oldest first), then new packets inside the window. */
int mcast_root_send(struct coll_async_mcast *m, struct slot *slot, int budget)
{
    int sent = 0;

    for (uint32_t i = slot->min_acked; slot->nbits_set > 0 && i < slot->next_new && sent < budget;
         ++i) {
        if (!bit_test(m, slot, i)) {
            continue;
        }
        if (0 != mcast_send_data(m, slot, i, FLAG_RESENT)) {
            return sent;
        }
        bit_clear(m, slot, i);
        ++m->stats.data_resent;
        ++sent;
    }
    while (NULL != slot->op && slot->next_new < slot->npackets &&
           slot->next_new < slot->min_acked + m->window && sent < budget) {
        if (0 != mcast_send_data(m, slot, slot->next_new, 0)) {
            break;
        }
        ++slot->next_new;
        ++m->stats.data_sent;
        ++sent;
    }
    return sent;
}
