/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the UD multicast transport's insides, shared by its files:
 *
 *   coll_async_mcast.c          the table's functions: posting, activation,
 *                               progress, completion; the address blobs
 *   coll_async_mcast_join.c     the port, creation, the join (rdma_cm), destroy
 *   coll_async_mcast_send.c     packets out, and the root's side of a broadcast
 *   coll_async_mcast_receive.c  packets in, the receivers' side, acknowledgements
 *   coll_async_mcast_timers.c   resend and report timers, the timerfd
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

#ifndef MCA_COLL_ASYNC_MCAST_INTERNAL_H
#define MCA_COLL_ASYNC_MCAST_INTERNAL_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "coll_async_mcast.h"
#include "coll_async_mcast_auth.h"
#include "coll_async_port_filter.h"
#include "coll_async_transport.h"

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

/* A broadcast's own fields, in its transfer's state area. */
struct mcast_op {
    char *buffer;
    size_t length;
    uint64_t seq;
    uint32_t root;
};
coll_async_transfer_state_fits(struct mcast_op);

static inline struct mcast_op *mcast_op_of(struct coll_async_transfer *transfer)
{
    return (struct mcast_op *) (void *) transfer->state;
}

/* One broadcast in flight, in the role this member has in it. */
struct slot {
    struct coll_async_transfer *transfer; /* NULL: free */
    struct mcast_op *op;                  /* the transfer's, NULL: free */
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
    /* Why it failed, for its transfer's error: kept until a later broadcast in
     * this slot fails, which cannot happen before the transfer has completed. */
    char message[192];
};

/* A packet of a broadcast not posted yet; entry i holds packet i (i < window). */
struct staged {
    bool used;
    uint64_t seq, total;
    uint32_t root, length, stamp;
};

struct coll_async_mcast {
    struct coll_async_transport base; /* first: the transport table */
    struct coll_async_mcast_config config;
    struct coll_async_port_filter filter; /* the ports config's include or exclude keeps */
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
    struct coll_async_transfer_queue waiting, done;
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
    char post_error[192]; /* why the latest post was refused */
    struct coll_async_mcast_stats stats;
};

static inline struct coll_async_mcast *mcast_of(struct coll_async_transport *transport)
{
    return (struct coll_async_mcast *) transport;
}

static inline const struct coll_async_mcast *mcast_of_const(const struct coll_async_transport *t)
{
    return (const struct coll_async_mcast *) t;
}

/* Window bit rings */

static inline bool bit_test(const struct coll_async_mcast *m, const struct slot *slot,
                            uint32_t index)
{
    uint32_t bit = index % m->window;

    return (slot->bits[bit / 64] >> (bit % 64)) & 1;
}

static inline void bit_set(const struct coll_async_mcast *m, struct slot *slot, uint32_t index)
{
    uint32_t bit = index % m->window;

    if (!bit_test(m, slot, index)) {
        slot->bits[bit / 64] |= 1ULL << (bit % 64);
        ++slot->nbits_set;
    }
}

static inline void bit_clear(const struct coll_async_mcast *m, struct slot *slot, uint32_t index)
{
    uint32_t bit = index % m->window;

    if (bit_test(m, slot, index)) {
        slot->bits[bit / 64] &= ~(1ULL << (bit % 64));
        --slot->nbits_set;
    }
}

/* Packets */

/* Bytes of packet index of a broadcast of length bytes. */
static inline size_t packet_bytes(const struct coll_async_mcast *m, size_t length, uint32_t index)
{
    size_t offset = (size_t) index * m->payload;

    return length - offset < m->payload ? length - offset : m->payload;
}

static inline uint32_t packets_of(const struct coll_async_mcast *m, size_t length)
{
    return (uint32_t) ((length + m->payload - 1) / m->payload);
}

/* coll_async_mcast.c: completion of broadcasts */

void mcast_set_fatal(struct coll_async_mcast *m, int err, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
void mcast_slot_finish(struct coll_async_mcast *m, struct slot *slot, int result);
void mcast_slot_fail(struct coll_async_mcast *m, struct slot *slot, int err, const char *format,
                     ...) __attribute__((format(printf, 4, 5)));
int mcast_fail_all(struct coll_async_mcast *m);
bool mcast_was_failed(const struct coll_async_mcast *m, uint64_t seq, uint32_t *culprit);
struct slot *mcast_slot_of(struct coll_async_mcast *m, uint64_t seq);
extern const struct coll_async_transport_ops mcast_ops;

/* coll_async_mcast_join.c */

int mcast_cm_events(struct coll_async_mcast *m);
void mcast_destroy(struct coll_async_transport *transport);

/* coll_async_mcast_send.c */

void mcast_flush_sends(struct coll_async_mcast *m);
int mcast_send_data(struct coll_async_mcast *m, struct slot *slot, uint32_t index, uint8_t flags);
void mcast_send_report(struct coll_async_mcast *m, uint32_t rank, uint8_t type, uint64_t seq,
                       const struct report *r);
void mcast_send_state(struct coll_async_mcast *m, uint32_t rank, uint8_t type, uint64_t seq,
                      uint8_t state, uint32_t count);
void mcast_root_fail_member(struct coll_async_mcast *m, struct slot *slot, uint32_t rank,
                            uint64_t now);
void mcast_root_take_ack(struct coll_async_mcast *m, struct slot *slot, uint32_t r,
                         const struct report *report);
int mcast_root_send(struct coll_async_mcast *m, struct slot *slot, int budget);

/* coll_async_mcast_receive.c */

void mcast_receiver_report(struct coll_async_mcast *m, struct slot *slot, uint8_t state,
                           uint32_t limit, uint8_t flags);
uint32_t mcast_report_limit(const struct coll_async_mcast *m, const struct slot *slot);
void mcast_receiver_settle(struct coll_async_mcast *m, struct slot *slot, bool answer,
                           bool saw_gap);
uint32_t mcast_adopt_staged(struct coll_async_mcast *m, struct slot *slot);
void mcast_repost_receive(struct coll_async_mcast *m, int index);
void mcast_flush_reposts(struct coll_async_mcast *m);
int mcast_poll_completions(struct coll_async_mcast *m);
int mcast_arm_cq(struct coll_async_mcast *m);

/* coll_async_mcast_timers.c */

void mcast_arm_timer(struct coll_async_mcast *m);
int mcast_run_timers(struct coll_async_mcast *m);

#endif /* MCA_COLL_ASYNC_MCAST_INTERNAL_H */
