/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the UD multicast transport: the group, the packets, the
 * reliability protocol, progress. See coll_async_mcast.h.
 *
 * Every packet starts with a 32-byte header in network byte order:
 *   type (1), version (1), flags (1), state (1)
 *   sender (4)  the rank that sent it
 *   group (8)   the group id (several ids may share one multicast address)
 *   seq (8)     the broadcast's sequence
 *   tag (8)     SipHash under the group key of everything but a DATA's payload
 * DATA (root -> group) goes on with index (4), a stamp (4: the root's count of
 * data packets sent, never 0), the broadcast's length (8), then the payload.
 * ACK (receiver -> root) and ROOT (root -> receiver) go on with a count (4: ACK,
 * the packets held from index 0 on; ROOT FAILED, the member that stopped
 * answering), the number of ranges (1), 3 zero bytes, an echo (4: ACK, the stamp
 * of the root's latest data packet to arrive), then that many ranges of missing
 * packets as (first, count) pairs of 4 bytes. state says what the sender knows
 * of the broadcast (enum bcast_state).
 *
 * A packet is taken only from a member, as its source shows, and with the right
 * tag (coll_async_mcast_auth.h); the others are counted and dropped before the
 * protocol sees them: the source check first, so that garbage costs no MAC.
 *
 * The echo decides resends: packets from one QP arrive in the order sent, so a
 * report naming packet p missing proves the last sending of p lost only when its
 * echo is newer than that sending. Older reports crossed the resend on the way
 * (a receiver that asked late, or a second receiver missing the same packet),
 * and resending for them would only make duplicates.
 */

#define _GNU_SOURCE

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "coll_async_clock.h"
#include "coll_async_mcast.h"
#include "coll_async_mcast_auth.h"
#include "coll_async_op_queue.h"
#include "coll_async_wire.h"

#define PROTOCOL_VERSION 2
#define GRH_BYTES COLL_ASYNC_MCAST_GRH_BYTES /* UD receives start with the GRH's room */
#define HEADER 32
#define TAG_AT 24
#define DATA_HEADER 48
#define REPORT_HEADER 44
#define MAX_RANGES 32
#define MIN_MTU 256
#define DEFAULT_WINDOW 128
#define MAX_WINDOW 4096
#define DEFAULT_RESEND_MS 10
#define DEFAULT_FAILURE_MS 5000
#define COMPLETIONS_PER_PROGRESS 64
#define SENDS_PER_PROGRESS 64
#define SEND_BATCH 32 /* sends posted with one ibv_post_send (one doorbell) */
#define REPORT_SLOTS 32 /* send slots data packets leave to acks and answers */
#define FAILED_REMEMBERED 16
#define UNICAST_HOP_LIMIT 64
#define ADDRESS_MAGIC0 0xca
#define ADDRESS_MAGIC1 0x4d
#define ADDRESS_VERSION 1
#define WR_SEND (1ULL << 63) /* wr_id: a send slot, else a receive buffer */
#define NO_MEMBER UINT32_MAX

enum packet_type { PKT_DATA = 1, PKT_ACK, PKT_ROOT };

enum packet_flag {
    FLAG_ANSWER = 1, /* the sender waits for an answer */
    FLAG_RESENT = 2  /* DATA: not the packet's first sending */
};

/* What a member says about one broadcast. */
enum bcast_state {
    STATE_UNKNOWN = 0,   /* root's view of a receiver not heard from yet */
    STATE_RECEIVING,     /* ACK: posted, count and gaps say what it holds */
    STATE_NOT_POSTED,    /* ACK or ROOT: alive, the broadcast is not posted here yet */
    STATE_DONE,          /* ACK: holds everything */
    STATE_FAILED,        /* ACK or ROOT: gave the broadcast up */
    STATE_SENDING        /* ROOT: posted, nothing to resend to you now */
};

struct header {
    uint8_t type, flags, state;
    uint32_t sender;
    uint64_t group, seq;
};

struct range {
    uint32_t first, count;
};

/* The body of an ACK or ROOT packet. */
struct report {
    uint8_t state, flags;
    uint32_t count;
    uint32_t echo;
    int nranges;
    struct range ranges[MAX_RANGES];
};

/* A member's address, from its blob. */
struct member {
    bool known;
    uint32_t qpn;
    uint16_t lid;
    union ibv_gid gid;
    struct ibv_ah *ah; /* unicast to it, made on first use */
};

/* One broadcast in flight, in the role this member has in it. */
struct slot {
    struct coll_async_mcast_op *op; /* NULL: free */
    bool root;
    uint32_t npackets;
    uint64_t *bits; /* window bits indexed by packet % window: receiver, held; root, to resend */
    int nbits_set;

    /* Receiver */
    uint32_t base;            /* first packet not held */
    uint32_t highest;         /* one past the highest packet held */
    uint32_t acked_base;      /* base as last acknowledged */
    uint64_t heard_us;        /* the root's last word */
    uint32_t echo;            /* the stamp of the root's latest data packet */
    uint64_t gap_report_us;
    uint64_t report_at_us, report_interval_us;

    /* Root */
    uint32_t next_new;        /* first packet never sent */
    uint32_t min_acked;       /* the slowest receiver's cumulative acknowledgement */
    uint32_t done_count;
    uint32_t *acked;          /* [nranks] */
    uint8_t *state;           /* [nranks] */
    uint64_t *member_heard_us; /* [nranks] */
    uint32_t *sent_stamp;     /* [window] the stamp of each packet's last sending */
    uint64_t poke_at_us, poke_interval_us;
    uint32_t culprit;         /* the member whose silence failed it, or NO_MEMBER */
};

/* A packet of a broadcast not posted yet; entry i holds packet i (i < window). */
struct staged {
    bool used;
    uint64_t seq, total;
    uint32_t root, length, stamp;
};

COLL_ASYNC_OP_QUEUE(struct coll_async_mcast_op)

struct coll_async_mcast {
    struct coll_async_mcast_config config;
    char name[96]; /* "mcast 239.192.x.y on rxe0:1" */

    struct rdma_event_channel *cm_channel;
    struct rdma_cm_id *id;
    struct ibv_pd *pd;
    struct ibv_comp_channel *comp_channel;
    struct ibv_cq *cq;
    struct ibv_mr *mr;
    char *memory; /* receive buffers, then send slots */
    bool ethernet;
    struct sockaddr_in local, group;
    union ibv_gid gid;
    uint16_t lid;
    int joined;   /* rdma_join_multicast was called: leave on destroy */
    int attached; /* 1, 0, -errno */
    char attach_error[192];
    struct ibv_ah *group_ah;
    struct ibv_ah_attr ah_template;
    uint32_t group_qpn, qkey;

    int epfd, timerfd;
    uint64_t timer_armed_us; /* 0: disarmed */
    bool cq_armed;

    size_t mtu, payload;
    uint32_t window, ack_every, max_ranges;
    uint64_t resend_us, failure_us, gap_interval_us;
    int recv_depth, send_depth;
    int *free_sends, nfree_sends;
    struct ibv_recv_wr *recv_wrs;
    struct ibv_sge *recv_sges;
    int nreposts;
    struct ibv_send_wr send_wrs[SEND_BATCH]; /* sends not posted yet, in order */
    struct ibv_sge send_sges[SEND_BATCH];
    int nsends;

    struct member *members;
    uint32_t members_known;
    struct slot slots[COLL_ASYNC_MCAST_MAX_ACTIVE];
    struct staged *staged;
    char *staging;
    struct op_queue waiting, done;
    uint64_t next_seq;      /* the next post's sequence */
    uint64_t activated_seq; /* the next activation's: below it, active or finished */
    uint64_t answered_not_posted; /* one past the highest sequence we said NOT_POSTED for */
    struct {
        uint64_t seq;
        uint32_t culprit;
    } failed[FAILED_REMEMBERED]; /* broadcasts that failed here, for members who ask */
    int nfailed;
    uint32_t stamp;   /* data packets sent (the last one's stamp) */
    uint64_t rng;

    int fatal;
    char fatal_message[192];
    struct coll_async_mcast_stats stats;
};

/* Small helpers */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static void say(char *why, size_t why_len, const char *format, ...)
{
    va_list ap;

    if (NULL == why || 0 == why_len) {
        return;
    }
    va_start(ap, format);
    vsnprintf(why, why_len, format, ap);
    va_end(ap);
}

/* Window bit rings */

static bool bit_test(const struct coll_async_mcast *m, const struct slot *slot, uint32_t index)
{
    uint32_t bit = index % m->window;

    return (slot->bits[bit / 64] >> (bit % 64)) & 1;
}

static void bit_set(const struct coll_async_mcast *m, struct slot *slot, uint32_t index)
{
    uint32_t bit = index % m->window;

    if (!bit_test(m, slot, index)) {
        slot->bits[bit / 64] |= 1ULL << (bit % 64);
        ++slot->nbits_set;
    }
}

static void bit_clear(const struct coll_async_mcast *m, struct slot *slot, uint32_t index)
{
    uint32_t bit = index % m->window;

    if (bit_test(m, slot, index)) {
        slot->bits[bit / 64] &= ~(1ULL << (bit % 64));
        --slot->nbits_set;
    }
}

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

/* Bytes of packet index of a broadcast of length bytes. */
static size_t packet_bytes(const struct coll_async_mcast *m, size_t length, uint32_t index)
{
    size_t offset = (size_t) index * m->payload;

    return length - offset < m->payload ? length - offset : m->payload;
}

static uint32_t packets_of(const struct coll_async_mcast *m, size_t length)
{
    return (uint32_t) ((length + m->payload - 1) / m->payload);
}

/* Sending */

static char *send_slot_buffer(struct coll_async_mcast *m, int slot)
{
    return m->memory + (size_t) m->recv_depth * (GRH_BYTES + m->mtu) + (size_t) slot * m->mtu;
}

static void set_fatal(struct coll_async_mcast *m, int err, const char *format, ...);

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
        set_fatal(m, -errno, "%s: no address handle to member %u: %s", m->name, rank,
                        strerror(errno));
    }
    return member->ah;
}

/* Posts the sends batched so far, with one doorbell: a system call per packet
 * would cost more than the packet on software RoCE. */
static void flush_sends(struct coll_async_mcast *m)
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
        set_fatal(m, -rc, "%s: ibv_post_send: %s", m->name, strerror(rc));
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
        flush_sends(m);
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

static int send_data(struct coll_async_mcast *m, struct slot *slot, uint32_t index, uint8_t flags)
{
    struct coll_async_mcast_op *op = slot->op;
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
static void send_report(struct coll_async_mcast *m, uint32_t rank, uint8_t type, uint64_t seq,
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
static void send_state(struct coll_async_mcast *m, uint32_t rank, uint8_t type, uint64_t seq,
                       uint8_t state, uint32_t count)
{
    struct report r = {.state = state, .count = count};

    send_report(m, rank, type, seq, &r);
}

/* Completion of broadcasts */

static void remember_failed(struct coll_async_mcast *m, uint64_t seq, uint32_t culprit)
{
    int i = m->nfailed++ % FAILED_REMEMBERED;

    m->failed[i].seq = seq;
    m->failed[i].culprit = culprit;
}

/* Whether broadcast seq failed here; *culprit is the member that stopped answering. */
static bool was_failed(const struct coll_async_mcast *m, uint64_t seq, uint32_t *culprit)
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

static void slot_finish(struct coll_async_mcast *m, struct slot *slot, int result)
{
    struct coll_async_mcast_op *op = slot->op;

    op->result = result;
    if (0 != result) {
        remember_failed(m, op->seq, slot->culprit);
    }
    slot->op = NULL;
    queue_push(&m->done, op);
}

static void slot_fail(struct coll_async_mcast *m, struct slot *slot, int err, const char *format,
                      ...)
{
    struct coll_async_mcast_op *op = slot->op;
    int n = snprintf(op->message, sizeof(op->message), "%s: broadcast %llu from root %u: ",
                     m->name, (unsigned long long) op->seq, op->root);
    va_list ap;

    va_start(ap, format);
    if (n > 0 && (size_t) n < sizeof(op->message)) {
        vsnprintf(op->message + n, sizeof(op->message) - (size_t) n, format, ap);
    }
    va_end(ap);
    op->error = op->message;
    slot_finish(m, slot, err);
}

static void op_fail_now(struct coll_async_mcast_op *op, int err, const char *message)
{
    snprintf(op->message, sizeof(op->message), "%s", message);
    op->error = op->message;
    op->result = err;
}

/* The transport cannot go on (device error, failed join). Recorded here, acted
 * on by fail_all at the end of progress, so that no caller deep in the protocol
 * loses its broadcast under its feet. */
static void set_fatal(struct coll_async_mcast *m, int err, const char *format, ...)
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
static int fail_all(struct coll_async_mcast *m)
{
    struct coll_async_mcast_op *op;
    int count = 0;

    for (int i = 0; i < COLL_ASYNC_MCAST_MAX_ACTIVE; ++i) {
        struct slot *slot = &m->slots[i];

        if (NULL != slot->op) {
            op_fail_now(slot->op, m->fatal, m->fatal_message);
            slot_finish(m, slot, m->fatal);
            ++count;
        }
    }
    while (NULL != (op = queue_pop(&m->waiting))) {
        op_fail_now(op, m->fatal, m->fatal_message);
        queue_push(&m->done, op);
        ++count;
    }
    return count;
}

static int run_completions(struct coll_async_mcast *m)
{
    struct coll_async_mcast_op *op;
    int count = 0;

    while (NULL != (op = queue_pop(&m->done))) {
        op->status = op->result;
        if (NULL != op->complete) {
            op->complete(op);
        }
        ++count;
    }
    return count;
}

static struct slot *slot_of(struct coll_async_mcast *m, uint64_t seq)
{
    for (int i = 0; i < COLL_ASYNC_MCAST_MAX_ACTIVE; ++i) {
        if (NULL != m->slots[i].op && m->slots[i].op->seq == seq) {
            return &m->slots[i];
        }
    }
    return NULL;
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
static void receiver_report(struct coll_async_mcast *m, struct slot *slot, uint8_t state,
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
    send_report(m, slot->op->root, PKT_ACK, slot->op->seq, &r);
}

static uint32_t report_limit(const struct coll_async_mcast *m, const struct slot *slot)
{
    uint32_t limit = slot->base + m->window;

    return limit < slot->npackets ? limit : slot->npackets;
}

/* Places packet index unless held already; whether it was new. */
static bool receiver_place(struct coll_async_mcast *m, struct slot *slot, uint32_t index,
                           const uint8_t *payload)
{
    struct coll_async_mcast_op *op = slot->op;

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
static void receiver_settle(struct coll_async_mcast *m, struct slot *slot, bool answer,
                            bool saw_gap)
{
    uint64_t now = coll_async_now_us();

    if (slot->base == slot->npackets) {
        receiver_report(m, slot, STATE_DONE, 0, 0);
        slot_finish(m, slot, 0);
        return;
    }
    if (answer || slot->base - slot->acked_base >= m->ack_every ||
        (saw_gap && now - slot->gap_report_us >= m->gap_interval_us)) {
        receiver_report(m, slot, STATE_RECEIVING, slot->highest, 0);
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
    struct coll_async_mcast_op *op = slot->op;

    if (h->sender != op->root) {
        return; /* someone else's idea of this broadcast: not ours to trust */
    }
    receiver_heard(m, slot);
    receiver_echo(slot, stamp);
    if (total != op->length) {
        send_state(m, op->root, PKT_ACK, op->seq, STATE_FAILED, 0);
        slot_fail(m, slot, -EMSGSIZE, "the root sends %llu bytes, this member posted %zu",
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
    receiver_settle(m, slot, 0 != (h->flags & FLAG_ANSWER), index > slot->base);
}

static void receiver_timer(struct coll_async_mcast *m, struct slot *slot, uint64_t now)
{
    if (now < slot->report_at_us) {
        return;
    }
    ++m->stats.timeouts;
    if (now - slot->heard_us >= m->failure_us) {
        slot_fail(m, slot, -ETIMEDOUT,
                  "the root stopped answering: nothing from it for %llu ms, %u of %u packets "
                  "held",
                  (unsigned long long) ((now - slot->heard_us) / 1000), slot->base,
                  slot->npackets);
        return;
    }
    receiver_report(m, slot, STATE_RECEIVING, report_limit(m, slot), FLAG_ANSWER);
    slot->report_interval_us *= 2;
    if (slot->report_interval_us > m->failure_us / 4) {
        slot->report_interval_us = m->failure_us / 4;
    }
    slot->report_at_us = now + slot->report_interval_us;
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
        slot_fail(m, slot, -EREMOTEIO, "the root gave it up: member %u stopped answering", count);
    } else {
        slot_fail(m, slot, -EREMOTEIO, "the root gave it up");
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
static uint32_t adopt_staged(struct coll_async_mcast *m, struct slot *slot)
{
    struct coll_async_mcast_op *op = slot->op;
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

/* Root side */

static void root_fail_member(struct coll_async_mcast *m, struct slot *slot, uint32_t rank,
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
    slot_fail(m, slot, -ETIMEDOUT,
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

static void root_take_ack(struct coll_async_mcast *m, struct slot *slot, uint32_t r,
                          const struct report *report)
{
    uint32_t count = report->count;
    uint64_t now = coll_async_now_us();
    bool moved = false;
    int marked = 0;

    slot->member_heard_us[r] = now;
    switch (report->state) {
    case STATE_FAILED:
        slot_fail(m, slot, -EREMOTEIO, "member %u gave it up (it posted another length?)", r);
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
        slot_finish(m, slot, 0);
        return;
    }
    if ((report->flags & FLAG_ANSWER) && 0 == marked) {
        send_state(m, r, PKT_ROOT, slot->op->seq, STATE_SENDING, 0);
    }
}

/* Resends first (oldest first), then new packets inside the window. */
static int root_send(struct coll_async_mcast *m, struct slot *slot, int budget)
{
    int sent = 0;

    for (uint32_t i = slot->min_acked; slot->nbits_set > 0 && i < slot->next_new && sent < budget;
         ++i) {
        if (!bit_test(m, slot, i)) {
            continue;
        }
        if (0 != send_data(m, slot, i, FLAG_RESENT)) {
            return sent;
        }
        bit_clear(m, slot, i);
        ++m->stats.data_resent;
        ++sent;
    }
    while (NULL != slot->op && slot->next_new < slot->npackets &&
           slot->next_new < slot->min_acked + m->window && sent < budget) {
        if (0 != send_data(m, slot, slot->next_new, 0)) {
            break;
        }
        ++slot->next_new;
        ++m->stats.data_sent;
        ++sent;
    }
    return sent;
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
            root_fail_member(m, slot, r, now);
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
        if (0 == send_data(m, slot, poke, FLAG_ANSWER | FLAG_RESENT)) {
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

/* Activation: broadcasts start in sequence order, as slots free up */

static void slot_start(struct coll_async_mcast *m, struct slot *slot,
                       struct coll_async_mcast_op *op)
{
    uint64_t now = coll_async_now_us();

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
            slot_finish(m, slot, 0);
        }
        return;
    }
    /* The root waits for us when it has sent a window already or heard that we
     * had not posted: tell it where we are at once. */
    if (adopt_staged(m, slot) > 0 || op->seq < m->answered_not_posted) {
        receiver_settle(m, slot, true, false);
    }
}

static int activate(struct coll_async_mcast *m)
{
    int count = 0;

    while (NULL != m->waiting.head) {
        struct coll_async_mcast_op *op = m->waiting.head;
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
        queue_pop(&m->waiting);
        m->activated_seq = op->seq + 1;
        ++count;
        if (NULL == slot) {
            queue_push(&m->done, op); /* nothing to send or receive */
        } else {
            slot_start(m, slot, op);
        }
    }
    return count;
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
            send_state(m, h->sender, PKT_ACK, h->seq, STATE_NOT_POSTED, 0);
            if (h->seq >= m->answered_not_posted) {
                m->answered_not_posted = h->seq + 1;
            }
        }
        return;
    }
    /* A broadcast finished here: the root lost our last word. */
    if (h->flags & FLAG_ANSWER) {
        uint32_t culprit;
        bool failed = was_failed(m, h->seq, &culprit);

        send_state(m, h->sender, PKT_ACK, h->seq, failed ? STATE_FAILED : STATE_DONE,
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
    slot = slot_of(m, h->seq);
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
    slot = slot_of(m, h->seq);
    if (PKT_ROOT == h->type) {
        if (NULL != slot && !slot->root) {
            receiver_root_says(m, slot, h, r.count);
        }
        return;
    }
    ++m->stats.acks_received;
    if (NULL != slot) {
        if (slot->root) {
            root_take_ack(m, slot, h->sender, &r);
        }
    } else if (!(h->flags & FLAG_ANSWER)) {
        return;
    } else if (h->seq >= m->activated_seq) {
        send_state(m, h->sender, PKT_ROOT, h->seq, STATE_NOT_POSTED, 0);
    } else if (was_failed(m, h->seq, &culprit)) {
        send_state(m, h->sender, PKT_ROOT, h->seq, STATE_FAILED, culprit);
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

/* Completion queue, rdma_cm events, timers */

static void repost_receive(struct coll_async_mcast *m, int index)
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

static void flush_reposts(struct coll_async_mcast *m)
{
    struct ibv_recv_wr *bad;
    int rc;

    if (0 == m->nreposts) {
        return;
    }
    m->nreposts = 0;
    rc = ibv_post_recv(m->id->qp, m->recv_wrs, &bad);
    if (0 != rc) {
        set_fatal(m, -rc, "%s: ibv_post_recv: %s", m->name, strerror(rc));
    }
}

static void on_completion(struct coll_async_mcast *m, const struct ibv_wc *wc)
{
    if (wc->wr_id & WR_SEND) {
        m->free_sends[m->nfree_sends++] = (int) (wc->wr_id & ~WR_SEND);
        if (IBV_WC_SUCCESS != wc->status) {
            set_fatal(m, -EIO, "%s: a send failed: %s", m->name,
                            ibv_wc_status_str(wc->status));
        }
        return;
    }
    if (IBV_WC_SUCCESS != wc->status) {
        set_fatal(m, -EIO, "%s: a receive failed: %s", m->name,
                        ibv_wc_status_str(wc->status));
        return;
    }
    if (wc->byte_len > GRH_BYTES && 0 == m->fatal) {
        uint8_t *grh = (uint8_t *) m->memory + wc->wr_id * (GRH_BYTES + m->mtu);

        on_packet(m, wc, grh, grh + GRH_BYTES, wc->byte_len - GRH_BYTES);
    }
    repost_receive(m, (int) wc->wr_id);
}

static int poll_completions(struct coll_async_mcast *m)
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
        set_fatal(m, -EIO, "%s: ibv_poll_cq failed", m->name);
        return 0;
    }
    for (int i = 0; i < n; ++i) {
        on_completion(m, &wcs[i]);
    }
    flush_reposts(m);
    return n;
}

/* Asks for a completion event before the caller may sleep on the fd; completions
 * that came before the request are seen by the next progress call. */
static int arm_cq(struct coll_async_mcast *m)
{
    if (m->cq_armed || 0 != m->fatal) {
        return 0;
    }
    if (0 != ibv_req_notify_cq(m->cq, 0)) {
        set_fatal(m, -EIO, "%s: ibv_req_notify_cq failed", m->name);
        return 0;
    }
    m->cq_armed = true;
    return 1; /* polling once more is the caller's next call */
}

static void joined(struct coll_async_mcast *m, const struct rdma_cm_event *event)
{
    m->group_qpn = event->param.ud.qp_num;
    m->qkey = event->param.ud.qkey;
    m->ah_template = event->param.ud.ah_attr;
    m->group_ah = ibv_create_ah(m->pd, &m->ah_template);
    if (NULL == m->group_ah) {
        m->attached = -errno;
        say(m->attach_error, sizeof(m->attach_error), "%s: no address handle for the group: %s",
            m->name, strerror(-m->attached));
        set_fatal(m, m->attached, "%s", m->attach_error);
        return;
    }
    m->attached = 1;
}

static int cm_events(struct coll_async_mcast *m)
{
    struct rdma_cm_event *event;
    int count = 0;

    while (0 == rdma_get_cm_event(m->cm_channel, &event)) {
        ++count;
        switch (event->event) {
        case RDMA_CM_EVENT_MULTICAST_JOIN:
            if (0 != event->status) {
                m->attached = event->status < 0 ? event->status : -EIO;
                say(m->attach_error, sizeof(m->attach_error), "%s: joining failed: %s", m->name,
                    strerror(-m->attached));
                set_fatal(m, m->attached, "%s", m->attach_error);
            } else {
                joined(m, event);
            }
            break;
        case RDMA_CM_EVENT_MULTICAST_ERROR:
        case RDMA_CM_EVENT_DEVICE_REMOVAL:
        case RDMA_CM_EVENT_ADDR_CHANGE:
            m->attached = -ENETDOWN;
            say(m->attach_error, sizeof(m->attach_error), "%s: %s", m->name,
                rdma_event_str(event->event));
            set_fatal(m, m->attached, "%s", m->attach_error);
            break;
        default:
            break;
        }
        rdma_ack_cm_event(event);
    }
    return count;
}

static void arm_timer(struct coll_async_mcast *m)
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

static int run_timers(struct coll_async_mcast *m)
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

int coll_async_mcast_progress(struct coll_async_mcast *m)
{
    int work = cm_events(m);

    if (1 == m->attached && 0 == m->fatal) {
        int budget = SENDS_PER_PROGRESS;

        work += poll_completions(m);
        work += run_timers(m);
        work += activate(m);
        for (int i = 0; i < COLL_ASYNC_MCAST_MAX_ACTIVE && budget > 0; ++i) {
            if (NULL != m->slots[i].op && m->slots[i].root) {
                int sent = root_send(m, &m->slots[i], budget);

                budget -= sent;
                work += sent;
            }
        }
        flush_sends(m);
        work += arm_cq(m);
        arm_timer(m);
    }
    if (0 != m->fatal) {
        work += fail_all(m);
    }
    return work + run_completions(m);
}

int coll_async_mcast_fd(const struct coll_async_mcast *m)
{
    return m->epfd;
}

/* Posting */

int coll_async_mcast_bcast(struct coll_async_mcast *m, uint32_t root, void *buffer, size_t length,
                           struct coll_async_mcast_op *op)
{
    op->error = NULL;
    if (root >= m->config.nranks || (NULL == buffer && 0 != length) ||
        length / m->payload >= UINT32_MAX) {
        return -EINVAL;
    }
    if (0 != m->fatal) {
        op_fail_now(op, m->fatal, m->fatal_message);
        return m->fatal;
    }
    if (m->members_known < m->config.nranks - 1) {
        snprintf(op->message, sizeof(op->message), "%s: %u of %u members' addresses are known",
                 m->name, m->members_known, m->config.nranks - 1);
        op->error = op->message;
        return -EINVAL;
    }
    op->status = COLL_ASYNC_MCAST_PENDING;
    op->result = 0;
    op->buffer = buffer;
    op->length = length;
    op->root = root;
    op->seq = m->next_seq++;
    queue_push(&m->waiting, op);
    return 0;
}

/* Address blobs: magic (2), version (1), 0 (1), QPN (4), LID (2), 0 (2), GID (16) */

int coll_async_mcast_address(const struct coll_async_mcast *m, void *blob, size_t size)
{
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

int coll_async_mcast_add_member(struct coll_async_mcast *m, uint32_t rank, const void *blob,
                                size_t length)
{
    const uint8_t *p = blob;
    struct member *member;

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

/* Finding the port */

/* Whether the filter list (comma-separated "device" or "device:port") names the port. */
static bool filter_names(const char *list, const char *device, int port)
{
    size_t dlen = strlen(device);

    for (const char *p = list; NULL != p && '\0' != *p;) {
        const char *end = strchr(p, ',');
        size_t len = NULL != end ? (size_t) (end - p) : strlen(p);

        if (len >= dlen && 0 == strncmp(p, device, dlen) &&
            (len == dlen || (':' == p[dlen] && atoi(p + dlen + 1) == port))) {
            return true;
        }
        p = NULL != end ? end + 1 : NULL;
    }
    return false;
}

static bool port_kept(const struct coll_async_mcast_config *config, struct rdma_cm_id *id)
{
    const char *device = ibv_get_device_name(id->verbs->device);
    struct ibv_port_attr attr;

    if (NULL != config->include && '\0' != config->include[0] &&
        !filter_names(config->include, device, id->port_num)) {
        return false;
    }
    if (NULL != config->exclude && '\0' != config->exclude[0] &&
        filter_names(config->exclude, device, id->port_num)) {
        return false;
    }
    return 0 == ibv_query_port(id->verbs, id->port_num, &attr) && IBV_PORT_ACTIVE == attr.state;
}

/* Binds m->id to address on a kept port; whether it did. */
static bool try_bind(struct coll_async_mcast *m, const struct sockaddr_in *address)
{
    if (0 != rdma_create_id(m->cm_channel, &m->id, m, RDMA_PS_UDP)) {
        return false;
    }
    if (0 == rdma_bind_addr(m->id, (struct sockaddr *) address) && NULL != m->id->verbs &&
        port_kept(&m->config, m->id)) {
        m->local = *address;
        return true;
    }
    rdma_destroy_id(m->id);
    m->id = NULL;
    return false;
}

static int bind_port(struct coll_async_mcast *m, char *why, size_t why_len)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    struct ifaddrs *ifs;

    if (NULL != m->config.address && '\0' != m->config.address[0]) {
        if (1 != inet_pton(AF_INET, m->config.address, &sin.sin_addr)) {
            say(why, why_len, "mcast: %s is no IPv4 address", m->config.address);
            return -EINVAL;
        }
        if (try_bind(m, &sin)) {
            return 0;
        }
        say(why, why_len, "mcast: no active RDMA port the filter keeps has address %s",
            m->config.address);
        return -ENODEV;
    }
    if (0 != getifaddrs(&ifs)) {
        say(why, why_len, "mcast: getifaddrs: %s", strerror(errno));
        return -errno;
    }
    for (struct ifaddrs *ifa = ifs; NULL != ifa; ifa = ifa->ifa_next) {
        if (NULL != ifa->ifa_addr && AF_INET == ifa->ifa_addr->sa_family) {
            sin.sin_addr = ((const struct sockaddr_in *) ifa->ifa_addr)->sin_addr;
            if (try_bind(m, &sin)) {
                freeifaddrs(ifs);
                return 0;
            }
        }
    }
    freeifaddrs(ifs);
    say(why, why_len, "mcast: no active RDMA port%s has an IPv4 address",
        (NULL != m->config.include && '\0' != m->config.include[0]) ||
                (NULL != m->config.exclude && '\0' != m->config.exclude[0])
            ? " that the filter keeps"
            : "");
    return -ENODEV;
}

/* Creation and destruction */

static int config_check(struct coll_async_mcast_config *config, char *why, size_t why_len)
{
    if (NULL != config->include && '\0' != config->include[0] && NULL != config->exclude &&
        '\0' != config->exclude[0]) {
        say(why, why_len, "mcast: include and exclude are mutually exclusive");
        return -EINVAL;
    }
    if (0 == config->nranks || config->self >= config->nranks || config->drop_fraction < 0 ||
        config->drop_fraction > 1 || config->window < 0 || config->window > MAX_WINDOW ||
        config->resend_timeout_ms < 0 || config->failure_timeout_ms < 0) {
        say(why, why_len, "mcast: bad configuration");
        return -EINVAL;
    }
    if (0 == config->window) {
        config->window = DEFAULT_WINDOW;
    }
    if (0 == config->resend_timeout_ms) {
        config->resend_timeout_ms = DEFAULT_RESEND_MS;
    }
    if (0 == config->failure_timeout_ms) {
        config->failure_timeout_ms = DEFAULT_FAILURE_MS;
    }
    return 0;
}

/* The packet size: the port's active MTU, or less when asked. */
static int choose_mtu(struct coll_async_mcast *m, char *why, size_t why_len)
{
    struct ibv_port_attr attr;
    size_t active;

    if (0 != ibv_query_port(m->id->verbs, m->id->port_num, &attr)) {
        say(why, why_len, "mcast: ibv_query_port: %s", strerror(errno));
        return -errno;
    }
    active = (size_t) 128 << attr.active_mtu; /* IBV_MTU_256 is 1 */
    m->mtu = 0 == m->config.mtu || m->config.mtu > active ? active : m->config.mtu;
    if (m->mtu < MIN_MTU) {
        say(why, why_len, "mcast: packets of %zu bytes are too small", m->mtu);
        return -EINVAL;
    }
    m->ethernet = IBV_LINK_LAYER_ETHERNET == attr.link_layer;
    m->lid = attr.lid;
    m->payload = m->mtu - DATA_HEADER;
    m->max_ranges = (uint32_t) ((m->mtu - REPORT_HEADER) / 8);
    if (m->max_ranges > MAX_RANGES) {
        m->max_ranges = MAX_RANGES;
    }
    return 0;
}

static int alloc_state(struct coll_async_mcast *m)
{
    size_t words = (m->window + 63) / 64, n = m->config.nranks;
    size_t bytes = (size_t) m->recv_depth * (GRH_BYTES + m->mtu) + (size_t) m->send_depth * m->mtu;

    m->members = calloc(n, sizeof(*m->members));
    m->staged = calloc(m->window, sizeof(*m->staged));
    m->staging = malloc((size_t) m->window * m->payload);
    m->free_sends = malloc(sizeof(int) * (size_t) m->send_depth);
    m->recv_wrs = calloc((size_t) m->recv_depth, sizeof(*m->recv_wrs));
    m->recv_sges = calloc((size_t) m->recv_depth, sizeof(*m->recv_sges));
    if (NULL == m->members || NULL == m->staged || NULL == m->staging || NULL == m->free_sends ||
        NULL == m->recv_wrs || NULL == m->recv_sges ||
        0 != posix_memalign((void **) &m->memory, 4096, bytes)) {
        return -ENOMEM;
    }
    for (int i = 0; i < COLL_ASYNC_MCAST_MAX_ACTIVE; ++i) {
        struct slot *slot = &m->slots[i];

        slot->bits = calloc(words, sizeof(uint64_t));
        slot->acked = calloc(n, sizeof(uint32_t));
        slot->state = calloc(n, 1);
        slot->member_heard_us = calloc(n, sizeof(uint64_t));
        slot->sent_stamp = calloc(m->window, sizeof(uint32_t));
        if (NULL == slot->bits || NULL == slot->acked || NULL == slot->state ||
            NULL == slot->member_heard_us || NULL == slot->sent_stamp) {
            return -ENOMEM;
        }
    }
    for (int i = 0; i < m->send_depth; ++i) {
        m->free_sends[i] = m->send_depth - 1 - i;
    }
    m->nfree_sends = m->send_depth;
    m->mr = ibv_reg_mr(m->pd, m->memory, bytes, IBV_ACCESS_LOCAL_WRITE);
    return NULL == m->mr ? -errno : 0;
}

static int set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);

    return flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ? -errno : 0;
}

static int watch(struct coll_async_mcast *m, int fd)
{
    struct epoll_event ev = {.events = EPOLLIN};

    ev.data.fd = fd;
    return 0 != epoll_ctl(m->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int open_queues(struct coll_async_mcast *m, char *why, size_t why_len)
{
    struct ibv_qp_init_attr init = {.qp_type = IBV_QPT_UD, .sq_sig_all = 0};
    int rc;

    m->pd = ibv_alloc_pd(m->id->verbs);
    m->comp_channel = ibv_create_comp_channel(m->id->verbs);
    if (NULL == m->pd || NULL == m->comp_channel) {
        say(why, why_len, "%s: protection domain or completion channel: %s", m->name,
            strerror(errno));
        return -errno;
    }
    m->cq = ibv_create_cq(m->id->verbs, m->recv_depth + m->send_depth, m, m->comp_channel, 0);
    if (NULL == m->cq) {
        say(why, why_len, "%s: ibv_create_cq: %s", m->name, strerror(errno));
        return -errno;
    }
    init.send_cq = init.recv_cq = m->cq;
    init.cap.max_send_wr = (uint32_t) m->send_depth;
    init.cap.max_recv_wr = (uint32_t) m->recv_depth;
    init.cap.max_send_sge = init.cap.max_recv_sge = 1;
    if (0 != rdma_create_qp(m->id, m->pd, &init)) {
        say(why, why_len, "%s: rdma_create_qp: %s", m->name, strerror(errno));
        return -errno;
    }
    rc = alloc_state(m);
    if (0 != rc) {
        say(why, why_len, "%s: buffers: %s", m->name, strerror(-rc));
        return rc;
    }
    for (int i = 0; i < m->recv_depth; ++i) {
        repost_receive(m, i);
    }
    flush_reposts(m);
    if (0 != m->fatal) {
        say(why, why_len, "%s", m->fatal_message);
        return m->fatal;
    }
    return 0;
}

static int open_fds(struct coll_async_mcast *m, char *why, size_t why_len)
{
    int rc;

    m->epfd = epoll_create1(EPOLL_CLOEXEC);
    m->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (m->epfd < 0 || m->timerfd < 0) {
        say(why, why_len, "mcast: epoll or timerfd: %s", strerror(errno));
        return -errno;
    }
    rc = set_nonblocking(m->cm_channel->fd);
    if (0 == rc) {
        rc = watch(m, m->cm_channel->fd);
    }
    if (0 == rc) {
        rc = watch(m, m->timerfd);
    }
    if (0 != rc) {
        say(why, why_len, "mcast: %s", strerror(-rc));
    }
    return rc;
}

static int open_cq_fd(struct coll_async_mcast *m, char *why, size_t why_len)
{
    int rc = set_nonblocking(m->comp_channel->fd);

    if (0 == rc) {
        rc = watch(m, m->comp_channel->fd);
    }
    if (0 != rc) {
        say(why, why_len, "mcast: completion channel: %s", strerror(-rc));
    }
    return rc;
}

/* The group's address: 239.192.0.0/14 (organization-local scope, RFC 2365),
 * the low 18 bits from the group id. */
static void group_address(struct coll_async_mcast *m)
{
    uint32_t low = (uint32_t) (mix64(m->config.group_id) & 0x3ffff);

    m->group.sin_family = AF_INET;
    m->group.sin_addr.s_addr = htonl((239u << 24) | (192u << 16) | low);
}

static void name_it(struct coll_async_mcast *m)
{
    char group[INET_ADDRSTRLEN], local[INET_ADDRSTRLEN];

    inet_ntop(AF_INET, &m->group.sin_addr, group, sizeof(group));
    inet_ntop(AF_INET, &m->local.sin_addr, local, sizeof(local));
    snprintf(m->name, sizeof(m->name), "mcast %s on %s:%u (%s)", group,
             ibv_get_device_name(m->id->verbs->device), m->id->port_num, local);
}

int coll_async_mcast_create(struct coll_async_mcast **out,
                            const struct coll_async_mcast_config *config, char *why,
                            size_t why_len)
{
    struct coll_async_mcast *m = calloc(1, sizeof(*m));
    int rc;

    *out = NULL;
    if (NULL == m) {
        return -ENOMEM;
    }
    m->config = *config;
    m->epfd = m->timerfd = -1;
    rc = config_check(&m->config, why, why_len);
    if (0 != rc) {
        free(m);
        return rc;
    }
    m->window = (uint32_t) m->config.window;
    m->ack_every = m->window / 4 > 0 ? m->window / 4 : 1;
    m->resend_us = (uint64_t) m->config.resend_timeout_ms * 1000;
    m->failure_us = (uint64_t) m->config.failure_timeout_ms * 1000;
    m->gap_interval_us = m->resend_us / 4;
    m->recv_depth = 2 * (int) m->window + 64;
    m->send_depth = ((int) m->window < 128 ? (int) m->window : 128) + REPORT_SLOTS;
    m->rng = mix64(m->config.drop_seed ^ mix64(m->config.self + 1)) | 1;
    group_address(m);

    m->cm_channel = rdma_create_event_channel();
    if (NULL == m->cm_channel) {
        say(why, why_len, "mcast: no rdma_cm (%s): no RDMA device here?", strerror(errno));
        rc = ENOENT == errno || ENODEV == errno ? -ENODEV : -errno;
        goto fail;
    }
    rc = open_fds(m, why, why_len);
    if (0 == rc) {
        rc = bind_port(m, why, why_len);
    }
    if (0 != rc) {
        goto fail;
    }
    name_it(m);
    memcpy(m->gid.raw, &m->id->route.addr.addr.ibaddr.sgid, 16);
    rc = choose_mtu(m, why, why_len);
    if (0 == rc) {
        rc = open_queues(m, why, why_len);
    }
    if (0 == rc) {
        rc = open_cq_fd(m, why, why_len);
    }
    if (0 != rc) {
        goto fail;
    }
    if (0 != rdma_join_multicast(m->id, (struct sockaddr *) &m->group, m)) {
        rc = -errno;
        say(why, why_len, "%s: rdma_join_multicast: %s", m->name, strerror(errno));
        goto fail;
    }
    m->joined = 1;
    *out = m;
    return 0;

fail:
    coll_async_mcast_destroy(m);
    return rc;
}

void coll_async_mcast_destroy(struct coll_async_mcast *m)
{
    if (NULL == m) {
        return;
    }
    set_fatal(m, -ECANCELED, "%s: destroyed", '\0' != m->name[0] ? m->name : "mcast");
    fail_all(m);
    run_completions(m);
    for (uint32_t r = 0; NULL != m->members && r < m->config.nranks; ++r) {
        if (NULL != m->members[r].ah) {
            ibv_destroy_ah(m->members[r].ah);
        }
    }
    if (NULL != m->group_ah) {
        ibv_destroy_ah(m->group_ah);
    }
    if (m->joined) {
        rdma_leave_multicast(m->id, (struct sockaddr *) &m->group);
    }
    if (NULL != m->id && NULL != m->id->qp) {
        rdma_destroy_qp(m->id);
    }
    if (NULL != m->mr) {
        ibv_dereg_mr(m->mr);
    }
    if (NULL != m->cq) {
        ibv_destroy_cq(m->cq);
    }
    if (NULL != m->comp_channel) {
        ibv_destroy_comp_channel(m->comp_channel);
    }
    if (NULL != m->pd) {
        ibv_dealloc_pd(m->pd);
    }
    if (NULL != m->id) {
        rdma_destroy_id(m->id);
    }
    if (NULL != m->cm_channel) {
        rdma_destroy_event_channel(m->cm_channel);
    }
    if (m->epfd >= 0) {
        close(m->epfd);
    }
    if (m->timerfd >= 0) {
        close(m->timerfd);
    }
    for (int i = 0; i < COLL_ASYNC_MCAST_MAX_ACTIVE; ++i) {
        free(m->slots[i].bits);
        free(m->slots[i].acked);
        free(m->slots[i].state);
        free(m->slots[i].member_heard_us);
        free(m->slots[i].sent_stamp);
    }
    free(m->members);
    free(m->staged);
    free(m->staging);
    free(m->free_sends);
    free(m->recv_wrs);
    free(m->recv_sges);
    free(m->memory);
    free(m);
}

/* Queries */

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
