/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the verbs RC transport's internals, shared by its files (the
 * interface is coll_async_verbs.h): its structs, and how it works.
 *
 * Links. Two peers pair their ports by subnet, the lower id's ports in order
 * each taking the first free port of the higher id's on the same subnet, up to
 * max_ports pairs: link l is the same pair of ports seen from both sides. On
 * link l each side connects its own QP to the other (never both ends of one QP
 * sending), so a link holds up to two QPs: "out" (this side connected it and
 * sends on it) and "in" (the peer's, this side only receives on it).
 *
 * Connections (coll_async_verbs_handshake.h says what travels). Both sides
 * create their QPs themselves and move them through rdma_cm's states with
 * rdma_init_qp_attr, so that no QP takes an RDMA write before this side says
 * so: a connector's QP never does (it only sends), an acceptor's only once its
 * connector has proved it holds this process's key. The acceptor checks the
 * request, accepts with HANDSHAKE_RECEIVES receives posted (two small slots'
 * worth of memory: the proof, and a credit message) and a deadline, and keeps
 * the connection aside, counted against max_unproven and known to no peer,
 * until the connector's first SEND, PROOF, checks out; only then is it the
 * peer's link, its QP open to RDMA writes, its RECEIVES buffers allocated,
 * posted and granted as credits. Anything else first, a failure, or the
 * deadline closes it and reports it (on_refused), the peer untouched: a
 * stranger cannot fail a peer by claiming its id. The connector, before its QP
 * leaves INIT, checks ACCEPT with the peer's key, then sends PROOF with one of
 * the two credits the accept gave and keeps the other for a credit message.
 *
 * Credits. The side that accepts a QP posts receive buffers on it and tells the
 * connector how many it may use (the handshake's, until the proof has come);
 * every SEND and every RDMA WRITE WITH IMM the connector posts uses one. The
 * receiver returns them, once reposted, in the header of what it sends on its
 * own QP of the same link, or alone in a CREDIT message once half are owed.
 * Only credit messages may take a sender's last credit: a message always returns
 * at least one, so two sides that have spent everything still have the last one
 * each to unblock the other. A connector that has proved itself holds one
 * credit, which only a credit message may take: it writes nothing until the
 * acceptor's grant says its QP takes writes.
 *
 * Every SEND starts with a 24-byte header in network byte order:
 *   type (1), 0 (1), credits (2)  receives returned for the reverse QP of this link
 *   seen (4)                      link 0: SENDs of the peer's link 0 processed so far
 *   tag (8)
 *   length (8)                    SMALL: payload bytes; READY: the receive's
 *                                 capacity; START, REJECT: the transfer's length
 * then, by type:
 *   SMALL            the payload
 *   READY            id (4), keys (4), address (8), rkey (4) per link
 *   START, REJECT    id (4), errno (4, REJECT only)
 *   CREDIT           nothing
 *   PROOF            the handshake's tag (8); first on every QP, and never again
 * SMALL, READY, START and REJECT go on link 0, in order (type 1, an eager
 * message, is gone). A receiver holds every message to what it expects: SMALL
 * exactly as long as its header says and within the eager limit, READY and
 * START only for transfers above it, RDMA writes only into a posted receive and
 * no more than it holds, credits no more than it posted; anything else fails
 * the peer.
 *
 * Bulk transfers. One of at most eager_limit bytes is a SMALL message, copied
 * into the posted receive or staged until it is posted. A longer one is written
 * by the sender into the receiver's buffer: each posted receive sends READY
 * (tag, its id, capacity, address and rkeys) at once, the sender takes it (or
 * waits for it), sends START (id, length) and RDMA-WRITEs WITH IMM (the id)
 * chunk by chunk over the links; the receiver completes when START has come and
 * the immediates have counted that many bytes. A sender that cannot deliver
 * (longer than the capacity, a buffer it cannot register) sends REJECT instead.
 *
 * A READY can cross a SMALL for its tag: the receive it announces is then
 * completed by the SMALL, and the sender must not use it for the next transfer
 * with that tag. The sender notes every SMALL that took no READY with its
 * link-0 sequence number; a READY whose "seen" shows it was sent before the
 * receiver processed such a SMALL of the same tag is stale and dropped.
 */

#ifndef MCA_COLL_ASYNC_VERBS_INTERNAL_H
#define MCA_COLL_ASYNC_VERBS_INTERNAL_H

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "coll_async_clock.h"
#include "coll_async_ipv4.h"
#include "coll_async_refusals.h"
#include "coll_async_verbs.h"
#include "coll_async_verbs_cache.h"
#include "coll_async_verbs_handshake.h"
#include "coll_async_verbs_port.h"
#include "coll_async_wire.h"

#define HEADER 24
#define READY_BODY (4 + 4 + 8 + 4 * COLL_ASYNC_VERBS_MAX_PORTS)
#define RECEIVES 64        /* receive buffers per accepted QP: the connector's credits */
#define HANDSHAKE_RECEIVES 2 /* posted before the proof: for it, and for one credit message */
#define SEND_SLOTS 64      /* send work requests per connected QP */
#define CREDIT_THRESHOLD (RECEIVES / 2)
#define CHUNKS_PER_LINK 4  /* RDMA writes in flight per QP: link 0's messages queue behind few */
#define CQ_INITIAL 1024
#define POLL_BATCH 32
#define POLL_ROUNDS 4      /* batches one progress call takes from a CQ */
#define CM_EVENTS_PER_PROGRESS 16
#define LISTEN_BACKLOG 128
#define RNR_RETRIES 6      /* finite: a credit bug shows as an error, not a hang */
#define TRANSPORT_RETRIES 7

#define DEFAULT_EAGER_LIMIT (8 * 1024)
#define DEFAULT_CHUNK (512 * 1024)
#define DEFAULT_CONNECT_TIMEOUT_MS 10000
#define DEFAULT_CACHE_BYTES ((size_t) 256 << 20)
#define DEFAULT_MAX_UNPROVEN 128 /* as many as the listen backlog */
#define PROOF_BYTES (HEADER + 8)
#define ADDRESS_MAGIC0 0xca
#define ADDRESS_MAGIC1 0x56
#define ADDRESS_VERSION 1
#define ADDRESS_HEADER 8
#define ADDRESS_PORT 8

/* epoll tags */
#define POLL_CM 0
#define POLL_TIMER 1
#define POLL_DEVICE 2 /* + the device's index */

enum msg_type {
    MSG_SMALL = 2, /* 1 was an eager message, gone with the API that sent it */
    MSG_READY, MSG_START, MSG_REJECT, MSG_CREDIT, MSG_PROOF
};

/* What an op waits for. */
enum stage {
    STAGE_SMALL = 1, /* outbox: to go as SMALL (or REJECT, if a READY says it does not fit) */
    STAGE_AWAIT,     /* awaiting: a bulk send waiting for the receiver's READY */
    STAGE_START,     /* outbox: START, then its chunks */
    STAGE_WRITING,   /* writing: chunks left to hand to links */
    STAGE_REJECT,    /* outbox: REJECT, then it fails */
    STAGE_READY,     /* outbox: a bulk receive's READY */
    STAGE_POSTED,    /* a bulk receive waiting for its data */
    STAGE_SENT,      /* a send with nothing left to post */
    STAGE_DONE       /* on the done queue */
};

struct header {
    uint8_t type;
    uint16_t credits;
    uint32_t seen;
    uint64_t tag, length;
};

struct device {
    struct ibv_context *context; /* librdmacm's */
    struct ibv_comp_channel *channel;
};

struct port {
    struct coll_async_verbs_port_info info;
    struct device *device;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    int cq_need; /* entries the QPs on it may fill */
    bool armed;  /* the CQ will raise an event on its next completion */
    struct rdma_cm_id *listener;
    struct in_addr addr;
    uint8_t prefix;
    uint16_t cm_port;
    uint32_t max_msg;
    uint64_t polls;   /* ibv_poll_cq calls so far */
    uint64_t drained; /* the latest of them that found the CQ empty */
};

/* A peer's port as its address blob carries it. */
struct endpoint {
    struct in_addr addr;
    uint16_t cm_port;
    uint8_t prefix;
};

enum conn_state {
    CONN_RESOLVING_ADDR,
    CONN_RESOLVING_ROUTE,
    CONN_CONNECTING,
    CONN_ACCEPTING, /* inbound, until its connector has proved itself */
    CONN_ESTABLISHED,
    CONN_CLOSED /* resources released; the struct stays for late completions */
};

/* What a work request's wr_id points to. */
struct work {
    struct conn *conn;
    struct coll_async_transfer *op; /* a send the op waits for; NULL for control */
    char *buffer;                   /* this slot's part of one of the conn's regions */
    uint32_t lkey;                  /* that region's */
    bool receive, write;
    bool retire;                    /* a handshake receive: not reposted once proven */
};

/* Registered message slots. */
struct region {
    char *buffers;
    struct ibv_mr *mr;
};

struct conn {
    struct coll_async_verbs_peer *peer; /* inbound, until proven: the one it claims to be */
    struct port *port;
    int link;
    bool outbound;
    enum conn_state state;
    struct rdma_cm_id *id;
    struct ibv_qp *qp; /* ours, not rdma_cm's: we say when it takes RDMA writes */
    struct sockaddr_in remote;
    struct coll_async_verbs_request request; /* the handshake's, for its tags */
    uint8_t nonce[COLL_ASYNC_VERBS_NONCE_BYTES]; /* the acceptor's */
    struct region regions[2]; /* outbound: the send slots; inbound: the handshake's
                                 receives, then the others once proven */
    struct work *works;
    int nworks;
    int *free_slots, nfree; /* outbound: send slots not in flight */
    int credits;            /* outbound: receives the peer posted that we may use */
    int owed;               /* inbound: receives reposted and not yet returned */
    int chunks;             /* outbound: RDMA writes in flight */
    uint64_t deadline_ms;   /* nonzero until established (inbound: proven) */
    bool refused;           /* inbound, never proven: freed once its CQ has drained */
    uint64_t closed_at;     /* its port's polls when it closed */
    struct conn *next;      /* every conn, for deadlines and destroy */
};

struct link {
    int port; /* index in the transport's ports */
    struct endpoint remote;
    struct conn *out, *in;
    uint64_t bytes; /* payload written to the peer through it */
};

/* A READY no send has taken yet. */
struct ready {
    struct ready *next;
    uint64_t tag, capacity, address;
    uint32_t id;
    int nkeys;
    uint32_t rkeys[COLL_ASYNC_VERBS_MAX_PORTS];
};

/* A SMALL sent without a READY, until the peer has seen it. */
struct small_note {
    struct small_note *next;
    uint64_t tag;
    uint32_t seq;
};

/* A SMALL that came before its receive was posted. */
struct unexpected {
    struct unexpected *next;
    uint64_t tag;
    size_t length;
    char data[];
};

/* The registration of one buffer on every port. */
struct registration {
    struct ibv_mr *mrs[COLL_ASYNC_VERBS_MAX_PORTS];
    bool writable;
};

/* A transfer's own fields, in its state area. */
struct verbs_op {
    struct coll_async_verbs_peer *peer;
    uint64_t tag;
    char *buffer;
    size_t length;
    size_t offset;      /* bulk send: next byte to hand to a link */
    size_t acked;       /* bulk receive: bytes arrived */
    void *registration; /* the cache entry registering buffer */
    void *ready;        /* bulk send: where the receiver wants the data */
    int in_flight;      /* work requests posted for it and not completed */
    uint32_t id;        /* bulk receive: its transfer id; bulk send: the receiver's */
    uint8_t stage;      /* what it waits for */
    bool queued;        /* on one of the peer's queues */
    bool has_total;     /* bulk receive: bytes is known */
};
coll_async_transfer_state_fits(struct verbs_op);

static inline struct verbs_op *op_of(const struct coll_async_transfer *transfer)
{
    return (struct verbs_op *) transfer->state;
}

struct coll_async_verbs_peer {
    uint32_t id;
    struct coll_async_key key; /* the peer's, once added */
    bool routable;
    int nlinks;
    struct link links[COLL_ASYNC_VERBS_MAX_PORTS];
    struct coll_async_transfer_queue outbox;   /* link 0 messages, in order */
    struct coll_async_transfer_queue awaiting; /* bulk sends without a READY */
    struct coll_async_transfer_queue writing;  /* bulk sends with chunks to hand out */
    struct coll_async_transfer **receives; /* posted bulk receives, by id & 0xffff */
    uint32_t nreceives, generation;
    struct ready *readies;
    struct small_note *notes;
    struct unexpected *unexpected;
    uint32_t sent0, received0; /* SENDs posted on our link 0 QP; processed from theirs */
    int next_link;
    int max_links; /* the peer's max_ports */
    int error;
    char message[320];
    struct coll_async_verbs_peer *next;
};

struct coll_async_verbs {
    struct coll_async_transport transport; /* first: what the mapper holds */
    struct coll_async_verbs_config config;
    struct port ports[COLL_ASYNC_VERBS_MAX_PORTS];
    int nports;
    struct device devices[COLL_ASYNC_VERBS_MAX_PORTS];
    int ndevices;
    struct rdma_event_channel *cm;
    int epfd, timerfd;
    size_t slot_size; /* a message buffer: header and payload room */
    struct coll_async_verbs_cache *cache;
    uintptr_t heap_start; /* the program break's heap begins here (0: unknown) */
    struct coll_async_verbs_peer **peers; /* [nprocs] */
    struct coll_async_verbs_peer *all_peers;
    struct conn *conns;
    struct coll_async_transfer_queue done;
    int pending;  /* conns with a deadline */
    int unproven; /* inbound conns accepted and not proven yet */
    int refused;  /* refused conns not freed yet */
    struct coll_async_refusals refusals; /* said through config.on_refused */
};

static const char *const too_long =
    "verbs: the bulk transfer is longer than the receive posted for its tag";
static const char *const sender_failed =
    "verbs: the sender could not deliver the bulk transfer (it could not register its buffer)";

/* coll_async_verbs_qp.c: transfers, receive ids, peer failure, peers, deadlines, queue pairs and
 * their buffers, posting sends. */

void verbs_encode_header(uint8_t *p, const struct header *header);
void verbs_decode_header(const uint8_t *p, struct header *header);
void verbs_op_start(struct coll_async_transfer *op, struct coll_async_verbs_peer *peer,
                    uint64_t tag, const void *buffer, size_t length, enum stage stage);
void verbs_op_set_error(struct coll_async_transfer *op, int result, const char *error);
void verbs_op_done(struct coll_async_verbs *verbs, struct coll_async_transfer *op);
void verbs_send_try_done(struct coll_async_verbs *verbs, struct coll_async_transfer *op);
int verbs_receive_add(struct coll_async_verbs_peer *peer, struct coll_async_transfer *op);
struct coll_async_transfer *verbs_receive_by_id(struct coll_async_verbs_peer *peer, uint32_t id);
struct coll_async_transfer *verbs_receive_by_tag(struct coll_async_verbs_peer *peer,
                                                 uint64_t tag);
void verbs_receive_end(struct coll_async_verbs *verbs, struct coll_async_transfer *op);
void verbs_receive_try_done(struct coll_async_verbs *verbs, struct coll_async_transfer *op);
const char *verbs_port_name(const struct port *port, char *name, size_t size);
void verbs_conn_settle(struct coll_async_verbs *verbs, struct conn *conn);
void verbs_conn_close(struct coll_async_verbs *verbs, struct conn *conn);
void verbs_conn_free(struct conn *conn);
void verbs_peer_fail(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer,
                     const struct conn *conn, const char *what, int err);
void verbs_protocol_error(struct coll_async_verbs *verbs, struct conn *conn, const char *what);
void verbs_report_refusal(struct coll_async_verbs *verbs, const struct port *port,
                          const struct sockaddr_in *remote,
                          const struct coll_async_verbs_request *request, const char *why);
void verbs_refuse(struct coll_async_verbs *verbs, struct conn *conn, const char *why);
void verbs_reclaim(struct coll_async_verbs *verbs);
struct coll_async_verbs_peer *verbs_peer_get(struct coll_async_verbs *verbs, uint32_t id);
void verbs_conn_arm(struct coll_async_verbs *verbs, struct conn *conn);
void verbs_check_deadlines(struct coll_async_verbs *verbs);
struct conn *verbs_conn_new(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer,
                            struct port *port, int link, bool outbound);
int verbs_conn_works(struct conn *conn, int count);
int verbs_conn_region(struct coll_async_verbs *verbs, struct conn *conn, int r, int first,
                      int count);
int verbs_qp_move(struct conn *conn, enum ibv_qp_state state, bool writable);
int verbs_qp_allow_writes(struct conn *conn);
int verbs_conn_qp(struct coll_async_verbs *verbs, struct conn *conn);
int verbs_post_receive(struct coll_async_verbs *verbs, struct conn *conn, struct work *work);
bool verbs_conn_room(const struct conn *conn, bool credit_message);
struct work *verbs_slot_take(struct conn *conn);
void verbs_slot_give_back(struct conn *conn, struct work *work);
uint8_t *verbs_message_start(struct conn *conn, struct work *work, enum msg_type type,
                             uint64_t tag, uint64_t length);
int verbs_post_send(struct coll_async_verbs *verbs, struct conn *conn, struct work *work,
                    size_t bytes);
int verbs_post_message(struct coll_async_verbs *verbs, struct conn *conn, struct work *work,
                       size_t bytes, struct coll_async_transfer *op);
int verbs_send_control(struct coll_async_verbs *verbs, struct conn *conn, enum msg_type type,
                       uint64_t tag, uint64_t length, uint32_t id, uint32_t err);
int verbs_send_payload(struct coll_async_verbs *verbs, struct conn *conn, enum msg_type type,
                       struct coll_async_transfer *op);
int verbs_send_ready(struct coll_async_verbs *verbs, struct conn *conn,
                     struct coll_async_transfer *op);
int verbs_post_chunk(struct coll_async_verbs *verbs, struct conn *conn,
                     struct coll_async_transfer *op, size_t length);

/* coll_async_verbs_connect.c: connecting, accepting, the handshake, rdma_cm events. */

bool verbs_link_usable(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer, int l);
bool verbs_cm_event(struct coll_async_verbs *verbs);

/* coll_async_verbs_flow.c: what flows once connected: the outbox, credits, chunks, arriving
 * messages, completions, progress. */

struct ready *verbs_take_ready(struct coll_async_verbs_peer *peer, uint64_t tag);
void verbs_kick(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer);
void verbs_start_bulk(struct coll_async_verbs *verbs, struct coll_async_transfer *op,
                      struct ready *ready);
void verbs_completion(struct coll_async_verbs *verbs, const struct ibv_wc *wc);
int verbs_progress(struct coll_async_transport *transport);
int verbs_fd(const struct coll_async_transport *transport);

#endif /* MCA_COLL_ASYNC_VERBS_INTERNAL_H */
