/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the verbs RC transport: ports, connections, messages, bulk
 * transfers, progress. See coll_async_verbs.h.
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

#define _GNU_SOURCE

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

/* Small helpers */

static void encode_header(uint8_t *p, const struct header *header)
{
    p[0] = header->type;
    p[1] = 0;
    p[2] = (uint8_t) (header->credits >> 8);
    p[3] = (uint8_t) header->credits;
    coll_async_put_be32(p + 4, header->seen);
    coll_async_put_be64(p + 8, header->tag);
    coll_async_put_be64(p + 16, header->length);
}

static void decode_header(const uint8_t *p, struct header *header)
{
    header->type = p[0];
    header->credits = (uint16_t) (p[2] << 8 | p[3]);
    header->seen = coll_async_get_be32(p + 4);
    header->tag = coll_async_get_be64(p + 8);
    header->length = coll_async_get_be64(p + 16);
}

/* Operations */

static void op_start(struct coll_async_transfer *op, struct coll_async_verbs_peer *peer,
                     uint64_t tag, const void *buffer, size_t length, enum stage stage)
{
    op->status = COLL_ASYNC_TRANSFER_PENDING;
    op->error = NULL;
    op->bytes = 0;
    op->next = NULL;
    op->result = 0;
    *op_of(op) = (struct verbs_op){.peer = peer, .tag = tag, .buffer = (char *) buffer,
                                   .length = length, .stage = (uint8_t) stage};
}

static void op_set_error(struct coll_async_transfer *op, int result, const char *error)
{
    if (0 == op->result) {
        op->result = result;
        op->error = error;
    }
}

/* Hands op to the done queue: it completes at the end of this progress call. */
static void op_done(struct coll_async_verbs *verbs, struct coll_async_transfer *op)
{
    if (NULL != op_of(op)->registration) {
        coll_async_verbs_cache_release(verbs->cache, op_of(op)->registration);
        op_of(op)->registration = NULL;
    }
    free(op_of(op)->ready);
    op_of(op)->ready = NULL;
    op_of(op)->stage = STAGE_DONE;
    coll_async_transfer_push(&verbs->done, op);
}

/* Completes a send once nothing refers to it any more. */
static void send_try_done(struct coll_async_verbs *verbs, struct coll_async_transfer *op)
{
    if (!op_of(op)->queued && 0 == op_of(op)->in_flight && STAGE_SENT == op_of(op)->stage) {
        op_done(verbs, op);
    }
}

/* Receive ids: an index into the peer's table, and a generation above it. */

static int receive_add(struct coll_async_verbs_peer *peer, struct coll_async_transfer *op)
{
    uint32_t index = 0;

    while (index < peer->nreceives && NULL != peer->receives[index]) {
        ++index;
    }
    if (index == peer->nreceives) {
        uint32_t count = 0 == peer->nreceives ? 16 : 2 * peer->nreceives;
        struct coll_async_transfer **bigger;

        if (count > 0x10000) {
            return -ENOMEM;
        }
        bigger = realloc(peer->receives, count * sizeof(*bigger));
        if (NULL == bigger) {
            return -ENOMEM;
        }
        memset(bigger + peer->nreceives, 0, (count - peer->nreceives) * sizeof(*bigger));
        peer->receives = bigger;
        peer->nreceives = count;
    }
    peer->receives[index] = op;
    op_of(op)->id = (++peer->generation << 16) | index;
    return 0;
}

static struct coll_async_transfer *receive_by_id(struct coll_async_verbs_peer *peer, uint32_t id)
{
    uint32_t index = id & 0xffff;

    if (index < peer->nreceives && NULL != peer->receives[index]
        && op_of(peer->receives[index])->id == id) {
        return peer->receives[index];
    }
    return NULL;
}

static struct coll_async_transfer *receive_by_tag(struct coll_async_verbs_peer *peer,
                                                  uint64_t tag)
{
    for (uint32_t i = 0; i < peer->nreceives; ++i) {
        if (NULL != peer->receives[i] && op_of(peer->receives[i])->tag == tag) {
            return peer->receives[i];
        }
    }
    return NULL;
}

/* Ends a bulk receive: off the table (and the outbox, READY unsent), completed. */
static void receive_end(struct coll_async_verbs *verbs, struct coll_async_transfer *op)
{
    struct coll_async_verbs_peer *peer = op_of(op)->peer;

    peer->receives[op_of(op)->id & 0xffff] = NULL;
    if (op_of(op)->queued) {
        coll_async_transfer_remove(&peer->outbox, op);
        op_of(op)->queued = false;
    }
    op_done(verbs, op);
}

static void receive_try_done(struct coll_async_verbs *verbs, struct coll_async_transfer *op)
{
    if (op_of(op)->has_total && op_of(op)->acked == op->bytes) {
        receive_end(verbs, op);
    }
}

/* Peer failure */

static const char *port_name(const struct port *port, char *name, size_t size)
{
    snprintf(name, size, "%s:%d", port->info.device, port->info.port);
    return name;
}

static void describe(struct coll_async_verbs_peer *peer, const struct conn *conn, const char *what,
                     int err)
{
    char local[INET_ADDRSTRLEN] = "?", remote[INET_ADDRSTRLEN] = "?", name[80];

    if (NULL == conn) {
        snprintf(peer->message, sizeof(peer->message), "verbs: peer %u: %s: %s", peer->id, what,
                 strerror(-err));
        return;
    }
    inet_ntop(AF_INET, &conn->port->addr, local, sizeof(local));
    inet_ntop(AF_INET, &conn->remote.sin_addr, remote, sizeof(remote));
    snprintf(peer->message, sizeof(peer->message),
             "verbs: peer %u, link %d (%s %s %s -> %s:%u, %s): %s: %s", peer->id, conn->link,
             port_name(conn->port, name, sizeof(name)), local,
             conn->outbound ? "connected" : "accepted", remote, ntohs(conn->remote.sin_port),
             conn->outbound ? "sending" : "receiving", what, strerror(-err));
}

static void conn_settle(struct coll_async_verbs *verbs, struct conn *conn)
{
    if (0 != conn->deadline_ms) {
        conn->deadline_ms = 0;
        --verbs->pending;
    }
}

static void region_free(struct region *region)
{
    if (NULL != region->mr) {
        ibv_dereg_mr(region->mr);
        region->mr = NULL;
    }
    free(region->buffers);
    region->buffers = NULL;
}

/* Releases the QP and what it used; ops waiting for its sends fail. The struct
 * stays: completions already in the CQ still point to its works. */
static void conn_close(struct coll_async_verbs *verbs, struct conn *conn)
{
    struct coll_async_verbs_peer *peer = conn->peer;

    if (CONN_CLOSED == conn->state) {
        return;
    }
    conn_settle(verbs, conn);
    if (CONN_ACCEPTING == conn->state) {
        --verbs->unproven;
    }
    if (NULL != conn->id) {
        if (NULL != conn->qp) {
            (void) rdma_disconnect(conn->id);
            ibv_destroy_qp(conn->qp); /* no more DMA into or out of user buffers */
            conn->qp = NULL;
            conn->port->cq_need -= conn->nworks + 1;
        }
        rdma_destroy_id(conn->id);
        conn->id = NULL;
    }
    for (int i = 0; i < conn->nworks; ++i) {
        struct coll_async_transfer *op = conn->works[i].op;

        conn->works[i].op = NULL;
        if (NULL != op) {
            op_set_error(op, peer->error, peer->message);
            --op_of(op)->in_flight;
            send_try_done(verbs, op);
        }
    }
    region_free(&conn->regions[0]);
    region_free(&conn->regions[1]);
    conn->closed_at = conn->port->polls;
    conn->state = CONN_CLOSED;
}

static void conn_free(struct conn *conn)
{
    free(conn->works);
    free(conn->free_slots);
    free(conn);
}

static void fail_queue(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer,
                       struct coll_async_transfer_queue *queue)
{
    struct coll_async_transfer *op;

    while (NULL != (op = coll_async_transfer_pop(queue))) {
        op_of(op)->queued = false;
        if (STAGE_READY == op_of(op)->stage) {
            continue; /* a receive: the table's pass ends it */
        }
        op_set_error(op, peer->error, peer->message);
        op_of(op)->stage = STAGE_SENT;
        send_try_done(verbs, op);
    }
}

static void peer_drop_state(struct coll_async_verbs_peer *peer)
{
    while (NULL != peer->readies) {
        struct ready *ready = peer->readies;

        peer->readies = ready->next;
        free(ready);
    }
    while (NULL != peer->notes) {
        struct small_note *note = peer->notes;

        peer->notes = note->next;
        free(note);
    }
    while (NULL != peer->unexpected) {
        struct unexpected *u = peer->unexpected;

        peer->unexpected = u->next;
        free(u);
    }
}

/*
 * Fails every operation on peer and closes its QPs, for good: data in flight on
 * them is lost. conn is the one that failed (NULL: none in particular); what and
 * err (-errno) say how.
 */
static void peer_fail(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer,
                      const struct conn *conn, const char *what, int err)
{
    if (0 != peer->error) {
        return;
    }
    describe(peer, conn, what, err);
    peer->error = err;
    for (int l = 0; l < COLL_ASYNC_VERBS_MAX_PORTS; ++l) {
        if (NULL != peer->links[l].out) {
            conn_close(verbs, peer->links[l].out);
        }
        if (NULL != peer->links[l].in) {
            conn_close(verbs, peer->links[l].in);
        }
    }
    fail_queue(verbs, peer, &peer->outbox);
    fail_queue(verbs, peer, &peer->awaiting);
    fail_queue(verbs, peer, &peer->writing);
    for (uint32_t i = 0; i < peer->nreceives; ++i) {
        struct coll_async_transfer *op = peer->receives[i];

        if (NULL != op) {
            op_set_error(op, peer->error, peer->message);
            receive_end(verbs, op);
        }
    }
    peer_drop_state(peer);
}

/* Fails peer for a protocol violation seen on conn. */
static void protocol_error(struct coll_async_verbs *verbs, struct conn *conn, const char *what)
{
    peer_fail(verbs, conn->peer, conn, what, -EPROTO);
}

/* Says that a connection to port from remote was refused; request, when it could
 * be read, names who it claimed to be. */
static void report_refusal(struct coll_async_verbs *verbs, const struct port *port,
                           const struct sockaddr_in *remote,
                           const struct coll_async_verbs_request *request, const char *why)
{
    char local[INET_ADDRSTRLEN] = "?", from[INET_ADDRSTRLEN] = "?", name[80], claim[64] = "";

    inet_ntop(AF_INET, &port->addr, local, sizeof(local));
    if (NULL != remote && AF_INET == remote->sin_family) {
        inet_ntop(AF_INET, &remote->sin_addr, from, sizeof(from));
    }
    if (NULL != request) {
        snprintf(claim, sizeof(claim), " as process %u, link %u", request->from, request->link);
    }
    coll_async_refusals_say(&verbs->refusals,
                            "verbs: refused a connection on %s (%s) from %s:%u%s: %s",
                            port_name(port, name, sizeof(name)), local, from,
                            NULL != remote ? ntohs(remote->sin_port) : 0, claim, why);
}

/* Closes an inbound connection that has not proved itself and says why; the peer
 * it claimed to be is untouched. Freed once its CQ has drained (reclaim). */
static void refuse(struct coll_async_verbs *verbs, struct conn *conn, const char *why)
{
    report_refusal(verbs, conn->port, &conn->remote, &conn->request, why);
    conn_close(verbs, conn);
    conn->refused = true;
    ++verbs->refused;
}

/* Frees the refused conns that no completion can point to any more: a poll that
 * began after their QP was destroyed found the CQ empty. Strangers may connect
 * and fail without end; what they leave must not grow. */
static void reclaim(struct coll_async_verbs *verbs)
{
    struct conn **p = &verbs->conns;

    while (verbs->refused > 0 && NULL != *p) {
        struct conn *conn = *p;

        if (conn->refused && conn->port->drained > conn->closed_at) {
            *p = conn->next;
            conn_free(conn);
            --verbs->refused;
        } else {
            p = &conn->next;
        }
    }
}

/* Peers */

static struct coll_async_verbs_peer *peer_get(struct coll_async_verbs *verbs, uint32_t id)
{
    struct coll_async_verbs_peer *peer;

    if (id >= verbs->config.nprocs || id == verbs->config.self) {
        return NULL;
    }
    if (NULL != verbs->peers[id]) {
        return verbs->peers[id];
    }
    peer = calloc(1, sizeof(*peer));
    if (NULL == peer) {
        return NULL;
    }
    peer->id = id;
    peer->next = verbs->all_peers;
    verbs->all_peers = peer;
    verbs->peers[id] = peer;
    return peer;
}

/* Connection deadlines: a timer fd in the epoll set wakes a sleeping thread. */

static void arm_timer(struct coll_async_verbs *verbs)
{
    struct itimerspec when = {{0, 0}, {0, 0}};
    uint64_t first = 0;

    for (struct conn *conn = verbs->conns; NULL != conn; conn = conn->next) {
        if (0 != conn->deadline_ms && (0 == first || conn->deadline_ms < first)) {
            first = conn->deadline_ms;
        }
    }
    if (0 != first) {
        when.it_value.tv_sec = (time_t) (first / 1000);
        when.it_value.tv_nsec = (long) (first % 1000) * 1000000 + 1;
    }
    (void) timerfd_settime(verbs->timerfd, TFD_TIMER_ABSTIME, &when, NULL);
}

static void conn_arm(struct coll_async_verbs *verbs, struct conn *conn)
{
    if (0 == conn->deadline_ms) {
        ++verbs->pending;
    }
    conn->deadline_ms = coll_async_now_ms() + (uint64_t) verbs->config.connect_timeout_ms;
    arm_timer(verbs);
}

static void check_deadlines(struct coll_async_verbs *verbs)
{
    uint64_t now = coll_async_now_ms(), expirations;

    (void) read(verbs->timerfd, &expirations, sizeof(expirations));
    for (struct conn *conn = verbs->conns; NULL != conn; conn = conn->next) {
        if (0 == conn->deadline_ms || now < conn->deadline_ms) {
            continue;
        }
        if (CONN_ACCEPTING == conn->state) {
            char why[80];

            snprintf(why, sizeof(why), "it did not prove itself within %d ms",
                     verbs->config.connect_timeout_ms);
            refuse(verbs, conn, why);
        } else {
            peer_fail(verbs, conn->peer, conn, "connection not established in time",
                      -ETIMEDOUT);
        }
    }
    arm_timer(verbs);
}

/* Queue pairs and their buffers */

static struct conn *conn_new(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer,
                             struct port *port, int link, bool outbound)
{
    struct conn *conn = calloc(1, sizeof(*conn));

    if (NULL == conn) {
        return NULL;
    }
    conn->peer = peer;
    conn->port = port;
    conn->link = link;
    conn->outbound = outbound;
    conn->next = verbs->conns;
    verbs->conns = conn;
    return conn;
}

/* The conn's count work requests, none with a buffer yet. */
static int conn_works(struct conn *conn, int count)
{
    conn->works = calloc((size_t) count, sizeof(*conn->works));
    conn->free_slots = calloc((size_t) count, sizeof(*conn->free_slots));
    if (NULL == conn->works || NULL == conn->free_slots) {
        return -ENOMEM;
    }
    conn->nworks = count;
    for (int i = 0; i < count; ++i) {
        conn->works[i].conn = conn;
        conn->works[i].receive = !conn->outbound;
        conn->free_slots[i] = count - 1 - i;
    }
    conn->nfree = conn->outbound ? count : 0;
    return 0;
}

/* Allocates and registers region r's count message slots, for the works from first on. */
static int conn_region(struct coll_async_verbs *verbs, struct conn *conn, int r, int first,
                       int count)
{
    struct region *region = &conn->regions[r];
    size_t bytes = verbs->slot_size * (size_t) count;

    if (0 != posix_memalign((void **) &region->buffers, 4096, bytes)) {
        region->buffers = NULL;
        return -ENOMEM;
    }
    region->mr = ibv_reg_mr(conn->port->pd, region->buffers, bytes, IBV_ACCESS_LOCAL_WRITE);
    if (NULL == region->mr) {
        return -errno;
    }
    for (int i = 0; i < count; ++i) {
        conn->works[first + i].buffer = region->buffers + verbs->slot_size * (size_t) i;
        conn->works[first + i].lkey = region->mr->lkey;
    }
    return 0;
}

/* Moves conn's QP to state with what rdma_cm has for it, but access of our own:
 * RDMA writes only when writable, never RDMA reads or atomics (nothing here
 * issues them, so nobody may issue them here). */
static int qp_move(struct conn *conn, enum ibv_qp_state state, bool writable)
{
    struct ibv_qp_attr attr = {.qp_state = state};
    int mask = 0;

    if (0 != rdma_init_qp_attr(conn->id, &attr, &mask)) {
        return -errno;
    }
    attr.qp_access_flags = writable ? IBV_ACCESS_REMOTE_WRITE : 0;
    attr.max_dest_rd_atomic = 0;
    attr.max_rd_atomic = 0;
    return -ibv_modify_qp(conn->qp, &attr, mask);
}

/* An inbound QP whose connector has proved itself takes RDMA writes from now on. */
static int qp_allow_writes(struct conn *conn)
{
    struct ibv_qp_attr attr = {.qp_access_flags = IBV_ACCESS_REMOTE_WRITE};

    return -ibv_modify_qp(conn->qp, &attr, IBV_QP_ACCESS_FLAGS);
}

/* Creates the QP on conn's port, growing the port's CQ to hold its completions,
 * and moves it to INIT. Ours, not rdma_cm's: rdma_cm would open it to RDMA
 * writes on its way to RTR. */
static int conn_qp(struct coll_async_verbs *verbs, struct conn *conn)
{
    struct port *port = conn->port;
    int need = conn->nworks + 1;
    struct ibv_qp_init_attr attr = {
        .send_cq = port->cq,
        .recv_cq = port->cq,
        .cap = {
            .max_send_wr = conn->outbound ? (uint32_t) conn->nworks : 1,
            .max_recv_wr = conn->outbound ? 1 : (uint32_t) conn->nworks,
            .max_send_sge = 1,
            .max_recv_sge = 1,
        },
        .qp_type = IBV_QPT_RC,
    };

    (void) verbs;
    if (port->cq_need + need > port->cq->cqe
        && 0 != ibv_resize_cq(port->cq, 2 * (port->cq_need + need))) {
        return -ENOSPC;
    }
    conn->qp = ibv_create_qp(port->pd, &attr);
    if (NULL == conn->qp) {
        return 0 != errno ? -errno : -ENOMEM;
    }
    port->cq_need += need;
    return qp_move(conn, IBV_QPS_INIT, false);
}

static int post_receive(struct coll_async_verbs *verbs, struct conn *conn, struct work *work)
{
    struct ibv_sge sge = {
        .addr = (uintptr_t) work->buffer,
        .length = (uint32_t) verbs->slot_size,
        .lkey = work->lkey,
    };
    struct ibv_recv_wr wr = {.wr_id = (uintptr_t) work, .sg_list = &sge, .num_sge = 1}, *bad;

    return -ibv_post_recv(conn->qp, &wr, &bad);
}

/* Posting sends on an outbound QP */

static bool conn_room(const struct conn *conn, bool credit_message)
{
    return CONN_ESTABLISHED == conn->state && conn->nfree > 0
           && conn->credits > (credit_message ? 0 : 1);
}

static struct work *slot_take(struct conn *conn)
{
    return &conn->works[conn->free_slots[--conn->nfree]];
}

static void slot_give_back(struct conn *conn, struct work *work)
{
    work->op = NULL;
    work->write = false;
    conn->free_slots[conn->nfree++] = (int) (work - conn->works);
}

/* Writes the header into work's buffer, returning owed credits and the link-0
 * sequence with it; the body's start. */
static uint8_t *message_start(struct conn *conn, struct work *work, enum msg_type type,
                              uint64_t tag, uint64_t length)
{
    struct coll_async_verbs_peer *peer = conn->peer;
    struct conn *in = peer->links[conn->link].in;
    struct header header = {.type = (uint8_t) type, .tag = tag, .length = length};

    if (NULL != in && CONN_CLOSED != in->state) {
        header.credits = (uint16_t) in->owed;
        in->owed = 0;
    }
    header.seen = 0 == conn->link ? peer->received0 : 0;
    encode_header((uint8_t *) work->buffer, &header);
    return (uint8_t *) work->buffer + HEADER;
}

/* Posts a SEND of work's first bytes, taking a credit; on failure the peer fails. */
static int post_send(struct coll_async_verbs *verbs, struct conn *conn, struct work *work,
                     size_t bytes)
{
    struct ibv_sge sge = {.addr = (uintptr_t) work->buffer, .length = (uint32_t) bytes,
                          .lkey = work->lkey};
    struct ibv_send_wr wr = {
        .wr_id = (uintptr_t) work, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
        .send_flags = IBV_SEND_SIGNALED,
    }, *bad;
    int rc = ibv_post_send(conn->qp, &wr, &bad);

    if (0 != rc) {
        slot_give_back(conn, work);
        peer_fail(verbs, conn->peer, conn, "post send", -rc);
        return -rc;
    }
    --conn->credits;
    return 0;
}

/* A message of the protocol (the proof is not one: it counts in no sequence). */
static int post_message(struct coll_async_verbs *verbs, struct conn *conn, struct work *work,
                        size_t bytes, struct coll_async_transfer *op)
{
    int rc = post_send(verbs, conn, work, bytes);

    if (0 != rc) {
        return rc;
    }
    if (0 == conn->link) {
        ++conn->peer->sent0;
    }
    work->op = op;
    if (NULL != op) {
        ++op_of(op)->in_flight;
    }
    return 0;
}

static int send_control(struct coll_async_verbs *verbs, struct conn *conn, enum msg_type type,
                        uint64_t tag, uint64_t length, uint32_t id, uint32_t err)
{
    struct work *work = slot_take(conn);
    uint8_t *body = message_start(conn, work, type, tag, length);

    coll_async_put_be32(body, id);
    coll_async_put_be32(body + 4, err);
    return post_message(verbs, conn, work, HEADER + 8, NULL);
}

static int send_payload(struct coll_async_verbs *verbs, struct conn *conn, enum msg_type type,
                        struct coll_async_transfer *op)
{
    struct work *work = slot_take(conn);
    uint8_t *body = message_start(conn, work, type, op_of(op)->tag, op_of(op)->length);

    if (op_of(op)->length > 0) {
        memcpy(body, op_of(op)->buffer, op_of(op)->length);
    }
    conn->peer->links[conn->link].bytes += op_of(op)->length;
    return post_message(verbs, conn, work, HEADER + op_of(op)->length, op);
}

static int send_ready(struct coll_async_verbs *verbs, struct conn *conn,
                      struct coll_async_transfer *op)
{
    struct coll_async_verbs_peer *peer = conn->peer;
    struct work *work = slot_take(conn);
    uint8_t *body = message_start(conn, work, MSG_READY, op_of(op)->tag, op_of(op)->length);
    struct registration *registration = NULL != op_of(op)->registration
                                            ? coll_async_verbs_cache_handle(op_of(op)->registration)
                                            : NULL;
    int nkeys = NULL != registration ? peer->nlinks : 0;

    coll_async_put_be32(body, op_of(op)->id);
    coll_async_put_be32(body + 4, (uint32_t) nkeys);
    coll_async_put_be64(body + 8, (uintptr_t) op_of(op)->buffer);
    for (int l = 0; l < nkeys; ++l) {
        coll_async_put_be32(body + 16 + 4 * l, registration->mrs[peer->links[l].port]->rkey);
    }
    return post_message(verbs, conn, work, HEADER + 16 + 4 * (size_t) nkeys, NULL);
}

/* One chunk of a bulk send, written with the receive's id as the immediate. */
static int post_chunk(struct coll_async_verbs *verbs, struct conn *conn,
                      struct coll_async_transfer *op, size_t length)
{
    const struct ready *ready = op_of(op)->ready;
    struct registration *registration = coll_async_verbs_cache_handle(op_of(op)->registration);
    struct work *work = slot_take(conn);
    struct ibv_sge sge = {
        .addr = (uintptr_t) op_of(op)->buffer + op_of(op)->offset,
        .length = (uint32_t) length,
        .lkey = registration->mrs[conn->port - verbs->ports]->lkey,
    };
    struct ibv_send_wr wr =
                           {
                               .wr_id = (uintptr_t) work,
                               .sg_list = &sge,
                               .num_sge = 1,
                               .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
                               .send_flags = IBV_SEND_SIGNALED,
                               .imm_data = htonl(ready->id),
                               .wr.rdma = {.remote_addr = ready->address + op_of(op)->offset,
                                           .rkey = ready->rkeys[conn->link]},
                           },
                       *bad;
    int rc = ibv_post_send(conn->qp, &wr, &bad);

    if (0 != rc) {
        slot_give_back(conn, work);
        peer_fail(verbs, conn->peer, conn, "post RDMA write", -rc);
        return -rc;
    }
    --conn->credits;
    ++conn->chunks;
    work->op = op;
    work->write = true;
    ++op_of(op)->in_flight;
    op_of(op)->offset += length;
    conn->peer->links[conn->link].bytes += length;
    return 0;
}

/* Connecting */

static void link_connect(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer, int l)
{
    struct link *link = &peer->links[l];
    struct port *port = &verbs->ports[link->port];
    struct sockaddr_in src = {.sin_family = AF_INET, .sin_addr = port->addr};
    struct conn *conn = conn_new(verbs, peer, port, l, true);

    if (NULL == conn) {
        peer_fail(verbs, peer, NULL, "connect", -ENOMEM);
        return;
    }
    link->out = conn;
    conn->remote.sin_family = AF_INET;
    conn->remote.sin_addr = link->remote.addr;
    conn->remote.sin_port = htons(link->remote.cm_port);
    conn->state = CONN_RESOLVING_ADDR;
    if (0 != rdma_create_id(verbs->cm, &conn->id, conn, RDMA_PS_TCP)) {
        conn->id = NULL;
        peer_fail(verbs, peer, conn, "rdma_create_id", -errno);
        return;
    }
    conn_arm(verbs, conn);
    if (0 != rdma_resolve_addr(conn->id, (struct sockaddr *) &src,
                               (struct sockaddr *) &conn->remote,
                               verbs->config.connect_timeout_ms)) {
        peer_fail(verbs, peer, conn, "rdma_resolve_addr", -errno);
    }
}

/* True when link l can take sends now; opens its QP on first use. */
static bool link_usable(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer, int l)
{
    struct link *link = &peer->links[l];

    if (NULL == link->out) {
        if (peer->routable && l < peer->nlinks) {
            link_connect(verbs, peer, l);
        }
        return false;
    }
    return CONN_ESTABLISHED == link->out->state;
}

/* Route resolved: the QP (in INIT), then the request, with a fresh nonce. */
static void send_connect(struct coll_async_verbs *verbs, struct conn *conn)
{
    uint8_t data[COLL_ASYNC_VERBS_REQUEST_BYTES];
    struct rdma_conn_param param = {
        .private_data = data, .private_data_len = sizeof(data),
        .retry_count = TRANSPORT_RETRIES, .rnr_retry_count = RNR_RETRIES,
    };
    int rc = conn_works(conn, SEND_SLOTS);

    if (0 == rc) {
        rc = conn_region(verbs, conn, 0, 0, SEND_SLOTS);
    }
    if (0 == rc) {
        rc = conn_qp(verbs, conn);
    }
    if (0 == rc) {
        rc = coll_async_random(conn->request.nonce, sizeof(conn->request.nonce));
    }
    if (0 != rc) {
        peer_fail(verbs, conn->peer, conn, "set up the queue pair", rc);
        return;
    }
    conn->request.from = verbs->config.self;
    conn->request.to = conn->peer->id;
    conn->request.link = (uint8_t) conn->link;
    conn->request.eager_limit = (uint32_t) verbs->config.eager_limit;
    coll_async_verbs_request_encode(&conn->request, data);
    param.qp_num = conn->qp->qp_num;
    conn->state = CONN_CONNECTING;
    if (0 != rdma_connect(conn->id, &param)) {
        peer_fail(verbs, conn->peer, conn, "rdma_connect", -errno);
    }
}

/* The connection's first SEND: PROOF, with one of the two credits of the accept. */
static void send_proof(struct coll_async_verbs *verbs, struct conn *conn)
{
    struct work *work = slot_take(conn);
    struct header header = {.type = MSG_PROOF, .length = 8};

    encode_header((uint8_t *) work->buffer, &header);
    coll_async_put_be64((uint8_t *) work->buffer + HEADER,
          coll_async_verbs_proof_tag(&conn->peer->key, &conn->request, conn->nonce));
    (void) post_send(verbs, conn, work, PROOF_BYTES);
}

/* The acceptor's answer: its proof that it holds the peer's key, checked before
 * our QP leaves INIT, the receives it posted, its eager limit. Then RTS, the
 * connection established, and our proof first on it. */
static void connected(struct coll_async_verbs *verbs, struct conn *conn, const uint8_t *data,
                      size_t length)
{
    struct coll_async_verbs_peer *peer = conn->peer;
    struct coll_async_verbs_accept accept;
    int rc;

    if (0 != coll_async_verbs_accept_decode(data, length, &accept)) {
        protocol_error(verbs, conn, "the peer's accept carries no coll/async protocol data");
        return;
    }
    if (!coll_async_tags_equal(accept.tag, coll_async_verbs_accept_tag(
                                                     &peer->key, &conn->request, accept.nonce))) {
        coll_async_refusals_say(&verbs->refusals,
                                "verbs: refused the process that accepted a connection to peer "
                                "%u, link %d: it did not prove it holds the peer's key",
                                peer->id, conn->link);
        peer_fail(verbs, peer, conn, "the accepting process did not prove it holds the peer's "
                  "key (another process at its address?)", -EACCES);
        return;
    }
    if (accept.eager_limit != verbs->config.eager_limit) {
        char what[128];

        snprintf(what, sizeof(what), "the peer's eager_limit is %u bytes, this one's %zu",
                 accept.eager_limit, verbs->config.eager_limit);
        peer_fail(verbs, peer, conn, what, -EPROTO);
        return;
    }
    if (0 == accept.receives) {
        protocol_error(verbs, conn, "the peer's accept grants no receive for the proof");
        return;
    }
    memcpy(conn->nonce, accept.nonce, sizeof(conn->nonce));
    rc = qp_move(conn, IBV_QPS_RTR, false);
    if (0 == rc) {
        rc = qp_move(conn, IBV_QPS_RTS, false);
    }
    if (0 == rc && 0 != rdma_establish(conn->id)) {
        rc = -errno;
    }
    if (0 != rc) {
        peer_fail(verbs, peer, conn, "move the queue pair to RTS", rc);
        return;
    }
    conn->credits = (int) (accept.receives < RECEIVES ? accept.receives : RECEIVES);
    conn->state = CONN_ESTABLISHED;
    conn_settle(verbs, conn);
    send_proof(verbs, conn);
}

/* Accepting */

static void reject(struct rdma_cm_id *id, enum coll_async_verbs_reject reason)
{
    uint8_t data[COLL_ASYNC_VERBS_REJECT_BYTES];

    coll_async_verbs_reject_encode(reason, data);
    (void) rdma_reject(id, data, sizeof(data));
    rdma_destroy_id(id);
}

/* The QP (up to RTS, taking no RDMA write) with the handshake's receives posted,
 * then the accept, with this side's nonce and ACCEPT. */
static int accept_conn(struct coll_async_verbs *verbs, struct conn *conn)
{
    uint8_t data[COLL_ASYNC_VERBS_ACCEPT_BYTES];
    struct coll_async_verbs_accept accept = {
        .receives = HANDSHAKE_RECEIVES, .eager_limit = (uint32_t) verbs->config.eager_limit,
    };
    struct rdma_conn_param param = {
        .private_data = data, .private_data_len = sizeof(data),
        .retry_count = TRANSPORT_RETRIES, .rnr_retry_count = RNR_RETRIES,
    };
    int rc = conn_works(conn, HANDSHAKE_RECEIVES + RECEIVES);

    if (0 == rc) {
        rc = conn_region(verbs, conn, 0, 0, HANDSHAKE_RECEIVES);
    }
    if (0 == rc) {
        rc = conn_qp(verbs, conn);
    }
    for (int i = 0; 0 == rc && i < HANDSHAKE_RECEIVES; ++i) {
        conn->works[i].retire = true;
        rc = post_receive(verbs, conn, &conn->works[i]);
    }
    if (0 == rc) {
        rc = qp_move(conn, IBV_QPS_RTR, false);
    }
    if (0 == rc) {
        rc = qp_move(conn, IBV_QPS_RTS, false);
    }
    if (0 == rc) {
        rc = coll_async_random(conn->nonce, sizeof(conn->nonce));
    }
    if (0 != rc) {
        return rc;
    }
    memcpy(accept.nonce, conn->nonce, sizeof(accept.nonce));
    accept.tag = coll_async_verbs_accept_tag(&verbs->config.key, &conn->request, conn->nonce);
    coll_async_verbs_accept_encode(&accept, data);
    param.qp_num = conn->qp->qp_num;
    return 0 == rdma_accept(conn->id, &param) ? 0 : -errno;
}

/* Why request cannot be accepted, as a reject reason (and *why in words), or 0. */
static int request_refusal(struct coll_async_verbs *verbs,
                           const struct coll_async_verbs_request *request, const char **why)
{
    struct coll_async_verbs_peer *peer;

    if (request->to != verbs->config.self || request->from >= verbs->config.nprocs
        || request->from == verbs->config.self || request->link >= COLL_ASYNC_VERBS_MAX_PORTS) {
        *why = "a request not meant for this process";
        return COLL_ASYNC_VERBS_REJECT_PROTOCOL;
    }
    if (request->eager_limit != verbs->config.eager_limit) {
        *why = "its eager_limit differs";
        return COLL_ASYNC_VERBS_REJECT_EAGER_LIMIT;
    }
    if (verbs->unproven >= verbs->config.max_unproven) {
        *why = "too many connections have not proved themselves yet";
        return COLL_ASYNC_VERBS_REJECT_BUSY;
    }
    peer = peer_get(verbs, request->from);
    if (NULL == peer) {
        *why = "out of memory";
        return COLL_ASYNC_VERBS_REJECT_RESOURCES;
    }
    if (0 != peer->error || NULL != peer->links[request->link].in) {
        *why = "the process it names has failed here, or has connected this link already";
        return COLL_ASYNC_VERBS_REJECT_PEER;
    }
    return 0;
}

/* Accepts a connection, to be proved, or rejects it; either way no peer changes. */
static void connect_request(struct coll_async_verbs *verbs, struct port *port,
                            struct rdma_cm_id *id, const uint8_t *data, size_t length)
{
    struct sockaddr *remote = rdma_get_peer_addr(id);
    struct coll_async_verbs_request request;
    const char *why = "not a coll/async connection request (or another version)";
    bool readable = 0 == coll_async_verbs_request_decode(data, length, &request);
    int reason = readable ? request_refusal(verbs, &request, &why)
                          : COLL_ASYNC_VERBS_REJECT_PROTOCOL;
    struct conn *conn;
    char what[128];
    int rc;

    if (0 == reason && NULL == (conn = conn_new(verbs, verbs->peers[request.from], port,
                                                request.link, false))) {
        why = "out of memory";
        reason = COLL_ASYNC_VERBS_REJECT_RESOURCES;
    }
    if (0 != reason) {
        report_refusal(verbs, port,
                       NULL != remote && AF_INET == remote->sa_family
                           ? (const struct sockaddr_in *) remote : NULL,
                       readable ? &request : NULL, why);
        reject(id, reason);
        return;
    }
    conn->id = id;
    id->context = conn;
    if (NULL != remote && AF_INET == remote->sa_family) {
        memcpy(&conn->remote, remote, sizeof(conn->remote));
    }
    conn->request = request;
    conn->state = CONN_ACCEPTING;
    ++verbs->unproven;
    conn_arm(verbs, conn);
    rc = accept_conn(verbs, conn);
    if (0 != rc) {
        (void) rdma_reject(id, NULL, 0);
        snprintf(what, sizeof(what), "could not accept it: %s", strerror(-rc));
        refuse(verbs, conn, what);
    }
}

/* rdma_cm events */

static int status_errno(int status)
{
    return status < 0 ? status : 0 == status ? -ECONNREFUSED : -EHOSTUNREACH;
}

/* An accepted connection not proven yet: whatever ends it ends only it. */
static void unproven_event(struct coll_async_verbs *verbs, struct conn *conn,
                           enum rdma_cm_event_type type)
{
    char what[96];

    switch (type) {
    case RDMA_CM_EVENT_ESTABLISHED: /* the proof decides, not the RTU */
    case RDMA_CM_EVENT_TIMEWAIT_EXIT:
    case RDMA_CM_EVENT_ADDR_CHANGE:
        return;
    default:
        snprintf(what, sizeof(what), "%s before it proved itself", rdma_event_str(type));
        refuse(verbs, conn, what);
        return;
    }
}

static void conn_event(struct coll_async_verbs *verbs, struct conn *conn,
                       enum rdma_cm_event_type type, int status, const uint8_t *data,
                       size_t length)
{
    struct coll_async_verbs_peer *peer = conn->peer;
    char what[128];

    if (CONN_CLOSED == conn->state) {
        return;
    }
    if (CONN_ACCEPTING == conn->state) {
        unproven_event(verbs, conn, type);
        return;
    }
    switch (type) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
        if (conn->id->verbs != conn->port->device->context) {
            snprintf(what, sizeof(what), "rdma_cm resolved the address to device %s",
                     NULL != conn->id->verbs ? ibv_get_device_name(conn->id->verbs->device) : "?");
            peer_fail(verbs, peer, conn, what, -EHOSTUNREACH);
        } else if (0 != rdma_resolve_route(conn->id, verbs->config.connect_timeout_ms)) {
            peer_fail(verbs, peer, conn, "rdma_resolve_route", -errno);
        } else {
            conn->state = CONN_RESOLVING_ROUTE;
        }
        return;
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
        send_connect(verbs, conn);
        return;
    case RDMA_CM_EVENT_CONNECT_RESPONSE: /* our own QP: rdma_cm leaves it to us */
        if (conn->outbound && CONN_CONNECTING == conn->state) {
            connected(verbs, conn, data, length);
        }
        return;
    case RDMA_CM_EVENT_ADDR_ERROR:
        peer_fail(verbs, peer, conn, "address resolution", status_errno(status));
        return;
    case RDMA_CM_EVENT_ROUTE_ERROR:
        peer_fail(verbs, peer, conn, "route resolution", status_errno(status));
        return;
    case RDMA_CM_EVENT_UNREACHABLE:
        peer_fail(verbs, peer, conn, "peer unreachable", -EHOSTUNREACH);
        return;
    case RDMA_CM_EVENT_CONNECT_ERROR:
        peer_fail(verbs, peer, conn, "connect", status_errno(status));
        return;
    case RDMA_CM_EVENT_REJECTED:
        peer_fail(verbs, peer, conn,
                  coll_async_verbs_reject_text(coll_async_verbs_reject_decode(data, length)),
                  -ECONNREFUSED);
        return;
    case RDMA_CM_EVENT_DISCONNECTED:
        peer_fail(verbs, peer, conn, "disconnected by the peer", -ECONNRESET);
        return;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
        peer_fail(verbs, peer, conn, "device removed", -ENODEV);
        return;
    default:
        return; /* ESTABLISHED (the proof settled it), TIMEWAIT_EXIT, ADDR_CHANGE */
    }
}

static void kick(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer);

static bool is_listener(const struct coll_async_verbs *verbs, const struct rdma_cm_id *id)
{
    for (int p = 0; p < verbs->nports; ++p) {
        if (verbs->ports[p].listener == id) {
            return true;
        }
    }
    return false;
}

/* Takes one event; the event is acknowledged before it is acted on, since
 * destroying an id waits for its events' acknowledgements. */
static bool cm_event(struct coll_async_verbs *verbs)
{
    struct rdma_cm_event *event;
    enum rdma_cm_event_type type;
    struct rdma_cm_id *id, *listen_id;
    uint8_t data[256];
    size_t length = 0;
    int status;

    if (0 != rdma_get_cm_event(verbs->cm, &event)) {
        return false;
    }
    type = event->event;
    id = event->id;
    listen_id = event->listen_id;
    status = event->status;
    if (NULL != event->param.conn.private_data) {
        length = event->param.conn.private_data_len; /* uint8_t: fits data */
        memcpy(data, event->param.conn.private_data, length);
    }
    rdma_ack_cm_event(event);

    if (RDMA_CM_EVENT_CONNECT_REQUEST == type) {
        connect_request(verbs, listen_id->context, id, data, length);
    } else if (NULL != id->context && !is_listener(verbs, id)) {
        struct conn *conn = id->context;

        conn_event(verbs, conn, type, status, data, length);
        kick(verbs, conn->peer);
    }
    return true;
}

/* Sending: the outbox on link 0, credits on every link, chunks over the links */

static struct ready *take_ready(struct coll_async_verbs_peer *peer, uint64_t tag)
{
    for (struct ready **p = &peer->readies; NULL != *p; p = &(*p)->next) {
        if ((*p)->tag == tag) {
            struct ready *ready = *p;

            *p = ready->next;
            return ready;
        }
    }
    return NULL;
}

/* A SMALL, or a REJECT when a READY already says it does not fit. */
static void send_small(struct coll_async_verbs *verbs, struct conn *conn,
                       struct coll_async_transfer *op)
{
    struct coll_async_verbs_peer *peer = conn->peer;
    struct ready *ready = take_ready(peer, op_of(op)->tag);
    struct small_note *note;

    op_of(op)->stage = STAGE_SENT;
    if (NULL != ready) {
        uint64_t capacity = ready->capacity;
        uint32_t id = ready->id;

        free(ready);
        if (op_of(op)->length > capacity) {
            op_set_error(op, -EMSGSIZE, too_long);
            (void) send_control(verbs, conn, MSG_REJECT, op_of(op)->tag, op_of(op)->length, id,
                                EMSGSIZE);
            return;
        }
    } else {
        note = malloc(sizeof(*note));
        if (NULL == note) {
            peer_fail(verbs, peer, conn, "send", -ENOMEM);
            return;
        }
        note->tag = op_of(op)->tag;
        note->seq = peer->sent0;
        note->next = peer->notes;
        peer->notes = note;
    }
    (void) send_payload(verbs, conn, MSG_SMALL, op);
}

/* Posts what op waits for on link 0. A receive's READY needs nothing more; a
 * send completes once its sends complete (at once for control messages), or
 * with the peer's error when posting failed it. */
static void send_next(struct coll_async_verbs *verbs, struct conn *conn,
                      struct coll_async_transfer *op)
{
    struct coll_async_verbs_peer *peer = conn->peer;

    switch (op_of(op)->stage) {
    case STAGE_READY:
        op_of(op)->stage = STAGE_POSTED;
        (void) send_ready(verbs, conn, op);
        return; /* on failure, the peer's failure ended it */
    case STAGE_SMALL:
        send_small(verbs, conn, op);
        break;
    case STAGE_START:
        op_of(op)->stage = STAGE_SENT;
        if (0
            == send_control(verbs, conn, MSG_START, op_of(op)->tag, op_of(op)->length,
                            op_of(op)->id, 0)) {
            op_of(op)->stage = STAGE_WRITING;
            op_of(op)->queued = true;
            coll_async_transfer_push(&peer->writing, op);
        }
        break;
    case STAGE_REJECT:
        op_of(op)->stage = STAGE_SENT;
        (void) send_control(verbs, conn, MSG_REJECT, op_of(op)->tag, op_of(op)->length,
                            op_of(op)->id, (uint32_t) -op->result);
        break;
    default:
        return;
    }
    if (0 != peer->error) {
        op_set_error(op, peer->error, peer->message);
    }
    send_try_done(verbs, op);
}

static void pump_outbox(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer)
{
    struct conn *conn;

    if (NULL == peer->outbox.head || !link_usable(verbs, peer, 0)) {
        return;
    }
    conn = peer->links[0].out;
    while (0 == peer->error && NULL != peer->outbox.head && conn_room(conn, false)) {
        struct coll_async_transfer *op = coll_async_transfer_pop(&peer->outbox);

        op_of(op)->queued = false;
        send_next(verbs, conn, op);
    }
}

/* Returns credits alone on links where half the receives are owed. */
static void pump_credits(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer)
{
    for (int l = 0; l < COLL_ASYNC_VERBS_MAX_PORTS && 0 == peer->error; ++l) {
        struct conn *in = peer->links[l].in;

        if (NULL == in || in->owed < CREDIT_THRESHOLD) {
            continue;
        }
        /* Before add_peer, credits wait for it (it kicks the peer). */
        if (link_usable(verbs, peer, l) && conn_room(peer->links[l].out, true)) {
            struct work *work = slot_take(peer->links[l].out);

            (void) message_start(peer->links[l].out, work, MSG_CREDIT, 0, 0);
            (void) post_message(verbs, peer->links[l].out, work, HEADER, NULL);
        }
    }
}

/* Hands chunks of the bulk sends to the links round-robin, each link taking one
 * while it has credits, a free slot and fewer than CHUNKS_PER_LINK in flight. */
static void pump_chunks(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer)
{
    struct coll_async_transfer *op;

    while (0 == peer->error && NULL != (op = peer->writing.head)) {
        const struct ready *ready = op_of(op)->ready;
        int nlinks = peer->nlinks < ready->nkeys ? peer->nlinks : ready->nkeys;
        bool posted = false;

        for (int i = 0; i < nlinks && !posted; ++i) {
            int l = (peer->next_link + i) % nlinks;
            struct conn *conn;
            size_t left = op_of(op)->length - op_of(op)->offset, chunk;

            if (!link_usable(verbs, peer, l)) {
                continue;
            }
            conn = peer->links[l].out;
            if (!conn_room(conn, false) || conn->chunks >= CHUNKS_PER_LINK) {
                continue;
            }
            chunk = left < verbs->config.chunk_size ? left : verbs->config.chunk_size;
            if (0 != post_chunk(verbs, conn, op, chunk)) {
                return;
            }
            if (op_of(op)->offset == op_of(op)->length) {
                (void) coll_async_transfer_pop(&peer->writing);
                op_of(op)->queued = false;
                op_of(op)->stage = STAGE_SENT;
            }
            peer->next_link = (l + 1) % nlinks;
            posted = true;
        }
        if (!posted) {
            return;
        }
    }
}

static void kick(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer)
{
    if (0 != peer->error) {
        return;
    }
    pump_credits(verbs, peer);
    pump_outbox(verbs, peer);
    pump_chunks(verbs, peer);
}

/* Bulk sends: starting once the READY is there */

static void start_bulk(struct coll_async_verbs *verbs, struct coll_async_transfer *op,
                       struct ready *ready)
{
    struct coll_async_verbs_peer *peer = op_of(op)->peer;
    int rc;

    op_of(op)->id = ready->id;
    op_of(op)->stage = STAGE_REJECT;
    if (op_of(op)->length > ready->capacity || 0 == ready->nkeys) {
        op_set_error(op, -EMSGSIZE, too_long);
        free(ready);
    } else if (0
               != (rc = coll_async_verbs_cache_acquire(
                       verbs->cache, op_of(op)->buffer, op_of(op)->length,
                       (struct coll_async_verbs_cache_entry **) &op_of(op)->registration))) {
        op_set_error(op, rc, "verbs: could not register the buffer of a bulk send");
        free(ready);
    } else {
        op_of(op)->ready = ready;
        op_of(op)->stage = STAGE_START;
    }
    op_of(op)->queued = true;
    coll_async_transfer_push(&peer->outbox, op);
}

/* Receiving */

static void stage_unexpected(struct coll_async_verbs *verbs, struct conn *conn, uint64_t tag,
                             const uint8_t *data, size_t length)
{
    struct unexpected *u = malloc(sizeof(*u) + length);

    if (NULL == u) {
        peer_fail(verbs, conn->peer, conn, "stage a bulk transfer", -ENOMEM);
        return;
    }
    u->tag = tag;
    u->length = length;
    memcpy(u->data, data, length);
    u->next = conn->peer->unexpected;
    conn->peer->unexpected = u;
}

static void small_arrived(struct coll_async_verbs *verbs, struct conn *conn,
                          const struct header *header, const uint8_t *data)
{
    struct coll_async_transfer *op = receive_by_tag(conn->peer, header->tag);

    if (NULL == op) {
        stage_unexpected(verbs, conn, header->tag, data, header->length);
        return;
    }
    op->bytes = header->length;
    if (header->length > op_of(op)->length) {
        op_set_error(op, -EMSGSIZE, too_long);
    } else if (header->length > 0) {
        memcpy(op_of(op)->buffer, data, header->length);
    }
    receive_end(verbs, op);
}

/* A READY is stale when the peer sent it before processing a SMALL of ours with
 * its tag that took no READY: that SMALL completes the receive it announces. */
static bool ready_is_stale(struct coll_async_verbs_peer *peer, uint64_t tag, uint32_t seen)
{
    for (struct small_note **p = &peer->notes; NULL != *p; p = &(*p)->next) {
        if ((*p)->tag == tag && (int32_t) ((*p)->seq - seen) >= 0) {
            struct small_note *note = *p;

            *p = note->next;
            free(note);
            return true;
        }
    }
    return false;
}

/* Forgets the SMALLs the peer has processed: no READY sent after that is stale. */
static void notes_seen(struct coll_async_verbs_peer *peer, uint32_t seen)
{
    struct small_note **p = &peer->notes;

    while (NULL != *p) {
        if ((int32_t) ((*p)->seq - seen) < 0) {
            struct small_note *note = *p;

            *p = note->next;
            free(note);
        } else {
            p = &(*p)->next;
        }
    }
}

static void ready_arrived(struct coll_async_verbs *verbs, struct conn *conn,
                          const struct header *header, const uint8_t *body, size_t body_length)
{
    struct coll_async_verbs_peer *peer = conn->peer;
    struct ready *ready;
    struct coll_async_transfer *op;
    uint32_t nkeys;

    if (body_length < 16 || (nkeys = coll_async_get_be32(body + 4)) > COLL_ASYNC_VERBS_MAX_PORTS
        || body_length < 16 + 4 * (size_t) nkeys) {
        protocol_error(verbs, conn, "a malformed READY");
        return;
    }
    if (ready_is_stale(peer, header->tag, header->seen)) {
        return;
    }
    ready = calloc(1, sizeof(*ready));
    if (NULL == ready) {
        peer_fail(verbs, peer, conn, "receive READY", -ENOMEM);
        return;
    }
    ready->tag = header->tag;
    ready->capacity = header->length;
    ready->id = coll_async_get_be32(body);
    ready->nkeys = (int) nkeys;
    ready->address = coll_async_get_be64(body + 8);
    for (uint32_t l = 0; l < nkeys; ++l) {
        ready->rkeys[l] = coll_async_get_be32(body + 16 + 4 * l);
    }
    for (op = peer->awaiting.head; NULL != op && op_of(op)->tag != header->tag; op = op->next) {
    }
    if (NULL == op) {
        ready->next = peer->readies;
        peer->readies = ready;
        return;
    }
    coll_async_transfer_remove(&peer->awaiting, op);
    start_bulk(verbs, op, ready);
}

static void start_arrived(struct coll_async_verbs *verbs, struct conn *conn,
                          const struct header *header, const uint8_t *body, size_t body_length,
                          bool rejected)
{
    struct coll_async_transfer *op =
        body_length >= 8 ? receive_by_id(conn->peer, coll_async_get_be32(body)) : NULL;

    if (NULL == op || op_of(op)->has_total
        || (!rejected
            && (header->length > op_of(op)->length
                || header->length <= verbs->config.eager_limit))) {
        protocol_error(verbs, conn, rejected ? "a REJECT for no posted receive"
                                             : "a START for no posted receive, longer than it, "
                                               "or not above the eager limit");
        return;
    }
    op->bytes = header->length;
    if (rejected) {
        uint32_t err = coll_async_get_be32(body + 4);

        op_set_error(op, 0 != err ? -(int) err : -EPROTO,
                     EMSGSIZE == err ? too_long : sender_failed);
        receive_end(verbs, op);
        return;
    }
    op_of(op)->has_total = true;
    if (op_of(op)->acked > op->bytes) {
        protocol_error(verbs, conn, "more bytes written than the START announced");
        return;
    }
    receive_try_done(verbs, op);
}

static void write_arrived(struct coll_async_verbs *verbs, struct conn *conn, uint32_t id,
                          uint32_t bytes)
{
    struct coll_async_transfer *op = receive_by_id(conn->peer, id);

    if (NULL == op) {
        protocol_error(verbs, conn, "an RDMA write for no posted receive");
        return;
    }
    if (bytes > op_of(op)->length - op_of(op)->acked) {
        protocol_error(verbs, conn, "more bytes written than the receive holds");
        return;
    }
    op_of(op)->acked += bytes;
    if (op_of(op)->has_total && op_of(op)->acked > op->bytes) {
        protocol_error(verbs, conn, "more bytes written than the START announced");
        return;
    }
    receive_try_done(verbs, op);
}

static void message_arrived(struct coll_async_verbs *verbs, struct conn *conn,
                            const uint8_t *data, size_t length)
{
    struct coll_async_verbs_peer *peer = conn->peer;
    struct conn *out = peer->links[conn->link].out;
    struct header header;
    size_t body_length;

    if (length < HEADER) {
        protocol_error(verbs, conn, "a message shorter than its header");
        return;
    }
    body_length = length - HEADER;
    decode_header(data, &header);
    if (NULL != out) {
        if (out->credits + header.credits > RECEIVES + HANDSHAKE_RECEIVES) {
            protocol_error(verbs, conn, "more credits returned than receives were posted");
            return;
        }
        out->credits += header.credits;
    }
    if (0 == conn->link) {
        ++peer->received0;
        notes_seen(peer, header.seen);
    }
    if (MSG_SMALL == header.type
        && (header.length != body_length || header.length > verbs->config.eager_limit)) {
        protocol_error(verbs, conn, "a message whose length is not what came, or above the "
                       "eager limit");
        return;
    }
    switch (header.type) {
    case MSG_SMALL:
        small_arrived(verbs, conn, &header, data + HEADER);
        return;
    case MSG_READY:
        ready_arrived(verbs, conn, &header, data + HEADER, body_length);
        return;
    case MSG_START:
    case MSG_REJECT:
        start_arrived(verbs, conn, &header, data + HEADER, body_length, MSG_REJECT == header.type);
        return;
    case MSG_CREDIT:
        return;
    default:
        protocol_error(verbs, conn, "a message of unknown type");
        return;
    }
}

/* Completions */

static int wc_errno(enum ibv_wc_status status)
{
    switch (status) {
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
        return -ETIMEDOUT;
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_LOC_PROT_ERR:
        return -EACCES;
    case IBV_WC_WR_FLUSH_ERR:
        return -ECONNRESET;
    default:
        return -EIO;
    }
}

/* conn's connector has proved itself: the conn becomes its peer's link, takes
 * RDMA writes, and grants the connector its receives (beyond the handshake's,
 * which are not reposted). */
static void conn_proven(struct coll_async_verbs *verbs, struct conn *conn)
{
    struct coll_async_verbs_peer *peer = conn->peer;
    char what[96];
    int rc;

    if (0 != peer->error || NULL != peer->links[conn->link].in) {
        refuse(verbs, conn, "the process it proved to be has failed here, or has connected "
               "this link already");
        return;
    }
    rc = conn_region(verbs, conn, 1, HANDSHAKE_RECEIVES, RECEIVES);
    for (int i = HANDSHAKE_RECEIVES; 0 == rc && i < conn->nworks; ++i) {
        rc = post_receive(verbs, conn, &conn->works[i]);
    }
    if (0 == rc) {
        rc = qp_allow_writes(conn);
    }
    if (0 != rc) {
        snprintf(what, sizeof(what), "proven, but its receives could not be posted: %s",
                 strerror(-rc));
        refuse(verbs, conn, what);
        return;
    }
    --verbs->unproven;
    conn->state = CONN_ESTABLISHED;
    conn_settle(verbs, conn);
    peer->links[conn->link].in = conn;
    conn->owed += RECEIVES;
    kick(verbs, peer);
}

/* The first completion on an inbound QP: its connector's proof, or its end. */
static void unproven_completion(struct coll_async_verbs *verbs, struct conn *conn,
                                const struct work *work, const struct ibv_wc *wc)
{
    const uint8_t *data = (const uint8_t *) work->buffer;
    struct header header;
    char what[128];

    if (IBV_WC_SUCCESS != wc->status) {
        snprintf(what, sizeof(what), "%s before it proved itself",
                 ibv_wc_status_str(wc->status));
        refuse(verbs, conn, what);
        return;
    }
    if (IBV_WC_RECV != wc->opcode || PROOF_BYTES != wc->byte_len) {
        refuse(verbs, conn, "its first message is no proof");
        return;
    }
    decode_header(data, &header);
    if (MSG_PROOF != header.type
        || !coll_async_tags_equal(coll_async_get_be64(data + HEADER),
                                        coll_async_verbs_proof_tag(&verbs->config.key,
                                                                   &conn->request, conn->nonce))) {
        refuse(verbs, conn, "a wrong proof: it does not hold this process's key, or replays "
               "another connection's");
        return;
    }
    conn_proven(verbs, conn);
}

static void receive_completed(struct coll_async_verbs *verbs, struct conn *conn,
                              struct work *work, const struct ibv_wc *wc)
{
    int rc;

    if (IBV_WC_RECV_RDMA_WITH_IMM == wc->opcode) {
        write_arrived(verbs, conn, ntohl(wc->imm_data), wc->byte_len);
    } else {
        message_arrived(verbs, conn, (const uint8_t *) work->buffer, wc->byte_len);
    }
    if (CONN_CLOSED == conn->state) {
        return; /* the peer failed meanwhile */
    }
    if (work->retire) {
        kick(verbs, conn->peer); /* a handshake receive, its credit never returned */
        return;
    }
    rc = post_receive(verbs, conn, work);
    if (0 != rc) {
        peer_fail(verbs, conn->peer, conn, "repost a receive", rc);
        return;
    }
    ++conn->owed;
    kick(verbs, conn->peer);
}

static void send_completed(struct coll_async_verbs *verbs, struct conn *conn, struct work *work)
{
    struct coll_async_transfer *op = work->op;

    if (work->write) {
        --conn->chunks;
    }
    slot_give_back(conn, work);
    if (NULL != op) {
        --op_of(op)->in_flight;
        send_try_done(verbs, op);
    }
    kick(verbs, conn->peer);
}

static void completion(struct coll_async_verbs *verbs, const struct ibv_wc *wc)
{
    struct work *work = (struct work *) (uintptr_t) wc->wr_id;
    struct conn *conn = work->conn;

    if (CONN_CLOSED == conn->state) {
        return; /* flushed, or late: the peer has failed */
    }
    if (CONN_ACCEPTING == conn->state) {
        unproven_completion(verbs, conn, work, wc);
        return;
    }
    if (IBV_WC_SUCCESS != wc->status) {
        char what[160];

        snprintf(what, sizeof(what), "%s completion: %s (vendor error 0x%x)",
                 work->receive ? "receive" : work->write ? "RDMA write" : "send",
                 ibv_wc_status_str(wc->status), wc->vendor_err);
        peer_fail(verbs, conn->peer, conn, what, wc_errno(wc->status));
        return;
    }
    if (work->receive) {
        receive_completed(verbs, conn, work, wc);
    } else {
        send_completed(verbs, conn, work);
    }
}

static int poll_port(struct coll_async_verbs *verbs, struct port *port)
{
    struct ibv_wc wc[POLL_BATCH];
    int total = 0;

    for (int round = 0; round < POLL_ROUNDS; ++round) {
        uint64_t poll = ++port->polls;
        int n = ibv_poll_cq(port->cq, POLL_BATCH, wc);

        for (int i = 0; i < n; ++i) {
            completion(verbs, &wc[i]);
        }
        total += n > 0 ? n : 0;
        if (n < POLL_BATCH) {
            port->drained = poll; /* what was in the CQ when it began is consumed */
            break;
        }
    }
    /* Nothing left: ask for an event before sleeping, then look once more for
     * what completed in between. */
    if (0 == total && !port->armed) {
        if (0 == ibv_req_notify_cq(port->cq, 0)) {
            port->armed = true;
        }
        return poll_port(verbs, port);
    }
    return total;
}

static void channel_events(struct coll_async_verbs *verbs, struct device *device)
{
    struct ibv_cq *cq;
    void *context;

    (void) verbs;
    while (0 == ibv_get_cq_event(device->channel, &cq, &context)) {
        ibv_ack_cq_events(cq, 1);
        ((struct port *) context)->armed = false;
    }
}

static int verbs_progress(struct coll_async_transport *transport)
{
    struct coll_async_verbs *verbs = (struct coll_async_verbs *) transport;
    struct epoll_event events[COLL_ASYNC_VERBS_MAX_PORTS + 2];
    int n = epoll_wait(verbs->epfd, events, COLL_ASYNC_VERBS_MAX_PORTS + 2, 0);
    int work = n > 0 ? n : 0;

    for (int i = 0; i < n; ++i) {
        uint32_t tag = events[i].data.u32;

        if (POLL_CM == tag) {
            for (int k = 0; k < CM_EVENTS_PER_PROGRESS && cm_event(verbs); ++k) {
            }
        } else if (POLL_TIMER == tag) {
            check_deadlines(verbs);
        } else {
            channel_events(verbs, &verbs->devices[tag - POLL_DEVICE]);
        }
    }
    for (int p = 0; p < verbs->nports; ++p) {
        work += poll_port(verbs, &verbs->ports[p]);
    }
    reclaim(verbs);
    coll_async_verbs_cache_collect(verbs->cache);
    return work + coll_async_transfer_complete_all(&verbs->done);
}

static int verbs_fd(const struct coll_async_transport *transport)
{
    return ((const struct coll_async_verbs *) transport)->epfd;
}

/* Posting */

/* The peer an op may be posted to, or NULL with *rc set (and op->error when it failed). */
static struct coll_async_verbs_peer *peer_for_op(struct coll_async_verbs *verbs, uint32_t id,
                                                 struct coll_async_transfer *op, int *rc)
{
    struct coll_async_verbs_peer *peer = peer_get(verbs, id);

    if (NULL == peer) {
        *rc = id >= verbs->config.nprocs || id == verbs->config.self ? -EINVAL : -ENOMEM;
        return NULL;
    }
    if (0 != peer->error) {
        op->error = peer->message;
        *rc = peer->error;
        return NULL;
    }
    if (!peer->routable) {
        *rc = -EHOSTUNREACH;
        return NULL;
    }
    return peer;
}

/* A bulk send of at most eager_limit bytes: one SMALL message. */
static int post_small(struct coll_async_verbs *verbs, uint32_t id, uint64_t tag,
                      const void *data, size_t length, struct coll_async_transfer *op)
{
    struct coll_async_verbs_peer *peer;
    int rc;

    if (NULL == (peer = peer_for_op(verbs, id, op, &rc))) {
        return rc;
    }
    op_start(op, peer, tag, data, length, STAGE_SMALL);
    op_of(op)->queued = true;
    coll_async_transfer_push(&peer->outbox, op);
    kick(verbs, peer);
    return 0;
}

static int verbs_send(struct coll_async_transport *transport, uint32_t id, uint64_t tag,
                      const void *data, size_t length, struct coll_async_transfer *op)
{
    struct coll_async_verbs *verbs = (struct coll_async_verbs *) transport;
    struct coll_async_verbs_peer *peer;
    struct ready *ready;
    int rc;

    if (length <= verbs->config.eager_limit) {
        return post_small(verbs, id, tag, data, length, op);
    }
    if (NULL == (peer = peer_for_op(verbs, id, op, &rc))) {
        return rc;
    }
    op_start(op, peer, tag, data, length, STAGE_AWAIT);
    ready = take_ready(peer, tag);
    if (NULL != ready) {
        start_bulk(verbs, op, ready);
    } else {
        op_of(op)->queued = true;
        coll_async_transfer_push(&peer->awaiting, op);
    }
    kick(verbs, peer);
    return 0;
}

static struct unexpected **find_unexpected(struct coll_async_verbs_peer *peer, uint64_t tag)
{
    struct unexpected **p = &peer->unexpected;

    while (NULL != *p && (*p)->tag != tag) {
        p = &(*p)->next;
    }
    return p;
}

/* A receive posted after its SMALL came takes the staged copy; one too small
 * leaves it for a bigger one, as TCP's does. */
static int recv_staged(struct coll_async_verbs *verbs, struct coll_async_transfer *op,
                       struct unexpected **p)
{
    struct unexpected *u = *p;

    if (u->length > op_of(op)->length) {
        return -EMSGSIZE;
    }
    *p = u->next;
    if (u->length > 0) {
        memcpy(op_of(op)->buffer, u->data, u->length);
    }
    op->bytes = u->length;
    free(u);
    op_done(verbs, op);
    return 0;
}

static int verbs_recv(struct coll_async_transport *transport, uint32_t id, uint64_t tag,
                      void *buffer, size_t length, struct coll_async_transfer *op)
{
    struct coll_async_verbs *verbs = (struct coll_async_verbs *) transport;
    struct coll_async_verbs_peer *peer;
    struct unexpected **staged;
    int rc;

    if (NULL == (peer = peer_for_op(verbs, id, op, &rc))) {
        return rc;
    }
    if (NULL != receive_by_tag(peer, tag)) {
        return -EBUSY;
    }
    op_start(op, peer, tag, buffer, length, STAGE_READY);
    if (NULL != *(staged = find_unexpected(peer, tag))) {
        return recv_staged(verbs, op, staged);
    }
    if (length > verbs->config.eager_limit) {
        struct coll_async_verbs_cache_entry *entry;

        rc = coll_async_verbs_cache_acquire(verbs->cache, buffer, length, &entry);
        if (0 != rc) {
            return rc;
        }
        if (!((struct registration *) coll_async_verbs_cache_handle(entry))->writable) {
            coll_async_verbs_cache_release(verbs->cache, entry);
            return -EFAULT;
        }
        op_of(op)->registration = entry;
    }
    rc = receive_add(peer, op);
    if (0 != rc) {
        if (NULL != op_of(op)->registration) {
            coll_async_verbs_cache_release(verbs->cache, op_of(op)->registration);
        }
        return rc;
    }
    op_of(op)->queued = true;
    coll_async_transfer_push(&peer->outbox, op);
    kick(verbs, peer);
    return 0;
}

/* Addresses */

static int verbs_address(const struct coll_async_transport *transport, void *blob, size_t size)
{
    const struct coll_async_verbs *verbs = (const struct coll_async_verbs *) transport;
    uint8_t *p = blob;
    size_t length = ADDRESS_HEADER + ADDRESS_PORT * (size_t) verbs->nports;

    if (size < length) {
        return -ENOSPC;
    }
    memset(p, 0, length);
    p[0] = ADDRESS_MAGIC0;
    p[1] = ADDRESS_MAGIC1;
    p[2] = ADDRESS_VERSION;
    p[3] = (uint8_t) verbs->nports;
    p[4] = (uint8_t) verbs->config.max_ports;
    for (int i = 0; i < verbs->nports; ++i) {
        uint8_t *entry = p + ADDRESS_HEADER + ADDRESS_PORT * i;

        memcpy(entry, &verbs->ports[i].addr.s_addr, 4);
        entry[4] = (uint8_t) (verbs->ports[i].cm_port >> 8);
        entry[5] = (uint8_t) verbs->ports[i].cm_port;
        entry[6] = verbs->ports[i].prefix;
    }
    return (int) length;
}

static int decode_address(const void *blob, size_t length, struct endpoint *endpoints,
                          int *max_links)
{
    const uint8_t *p = blob;
    int count;

    if (length < ADDRESS_HEADER || ADDRESS_MAGIC0 != p[0] || ADDRESS_MAGIC1 != p[1]
        || ADDRESS_VERSION != p[2]) {
        return -EINVAL;
    }
    count = p[3];
    *max_links = p[4];
    if (0 == count || count > COLL_ASYNC_VERBS_MAX_PORTS
        || length != ADDRESS_HEADER + ADDRESS_PORT * (size_t) count || 0 == *max_links) {
        return -EINVAL;
    }
    for (int i = 0; i < count; ++i) {
        const uint8_t *entry = p + ADDRESS_HEADER + ADDRESS_PORT * i;

        memcpy(&endpoints[i].addr.s_addr, entry, 4);
        endpoints[i].cm_port = (uint16_t) (entry[4] << 8 | entry[5]);
        endpoints[i].prefix = entry[6];
        if (0 == endpoints[i].cm_port || endpoints[i].prefix > 32) {
            return -EINVAL;
        }
    }
    return count;
}

/* Pairs ports the way both sides do alike: each of the lower id's ports, in order,
 * takes the first unused port of the higher id's on its subnet. */
static int verbs_add_peer(struct coll_async_transport *transport, uint32_t id,
                          const struct coll_async_key *key, const void *blob, size_t length)
{
    struct coll_async_verbs *verbs = (struct coll_async_verbs *) transport;
    struct endpoint theirs[COLL_ASYNC_VERBS_MAX_PORTS];
    bool used[COLL_ASYNC_VERBS_MAX_PORTS] = {false};
    struct coll_async_verbs_peer *peer;
    int max_links, count = decode_address(blob, length, theirs, &max_links), n = 0;
    bool lower = verbs->config.self < id;
    int nlo, nhi, max;

    if (count <= 0 || id >= verbs->config.nprocs || id == verbs->config.self) {
        return -EINVAL;
    }
    peer = peer_get(verbs, id);
    if (NULL == peer) {
        return -ENOMEM;
    }
    if (peer->routable) {
        return -EEXIST;
    }
    peer->key = *key;
    nlo = lower ? verbs->nports : count;
    nhi = lower ? count : verbs->nports;
    max = verbs->config.max_ports < max_links ? verbs->config.max_ports : max_links;
    for (int i = 0; i < nlo && n < max; ++i) {
        for (int j = 0; j < nhi; ++j) {
            int mine = lower ? i : j, other = lower ? j : i;
            const struct port *port = &verbs->ports[mine];

            if (used[j]
                || !coll_async_ipv4_same_subnet(port->addr, port->prefix, theirs[other].addr,
                                                theirs[other].prefix)) {
                continue;
            }
            used[j] = true;
            peer->links[n].port = mine;
            peer->links[n].remote = theirs[other];
            ++n;
            break;
        }
    }
    if (0 == n) {
        return -ENETUNREACH;
    }
    peer->nlinks = n;
    peer->max_links = max_links;
    peer->routable = true;
    kick(verbs, peer); /* credits may be owed on QPs it opened already */
    return 0;
}

/* Registration, through the cache: every port's protection domain */

static void deregister_memory(void *context, void *handle)
{
    struct coll_async_verbs *verbs = context;
    struct registration *registration = handle;

    for (int p = 0; p < verbs->nports; ++p) {
        if (NULL != registration->mrs[p]) {
            ibv_dereg_mr(registration->mrs[p]);
        }
    }
    free(registration);
}

/* Registers for remote writes, or for reading only when the memory is read-only
 * (a send buffer in a constant). */
static int register_memory(void *context, void *address, size_t length, void **handle)
{
    struct coll_async_verbs *verbs = context;
    struct registration *registration = calloc(1, sizeof(*registration));
    int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

    if (NULL == registration) {
        return -ENOMEM;
    }
    registration->writable = true;
    for (int p = 0; p < verbs->nports; ++p) {
        registration->mrs[p] = ibv_reg_mr(verbs->ports[p].pd, address, length, access);
        if (NULL != registration->mrs[p]) {
            continue;
        }
        if (0 == access || (EFAULT != errno && EACCES != errno)) {
            int rc = -errno;

            deregister_memory(verbs, registration);
            return rc;
        }
        for (int q = 0; q < p; ++q) {
            ibv_dereg_mr(registration->mrs[q]);
            registration->mrs[q] = NULL;
        }
        access = 0;
        registration->writable = false;
        p = -1;
    }
    *handle = registration;
    return 0;
}

/*
 * The heap below the program break is never cached. glibc gives its top back
 * with sbrk(-n) and takes pages again with sbrk(+n), new pages at the same
 * addresses; Open MPI's memory hooks see that only in brk, which glibc's sbrk
 * calls. A library that overrides sbrk itself goes around them: UCX's UCM,
 * which Debian's Open MPI 5 links into every process (libopen-pal), replaces
 * sbrk with its own that makes the brk system call directly, so a trimmed heap
 * reached no release hook and cached registrations kept the old pages (the NIC
 * wrote where the program no longer reads). Nothing tells this transport when
 * heap pages change, so their registrations last only while transfers hold
 * them.
 */

/* Where the heap of the program break starts: start_brk, the 47th field of
 * /proc/self/stat (Linux 3.5); 0, so that everything below the break counts as
 * heap, when it cannot be read. */
static uintptr_t heap_start(void)
{
    char text[1024], *p;
    unsigned long long start = 0;
    FILE *f = fopen("/proc/self/stat", "re");
    size_t n = NULL != f ? fread(text, 1, sizeof(text) - 1, f) : 0;

    if (NULL != f) {
        fclose(f);
    }
    text[n] = '\0';
    p = strrchr(text, ')'); /* the command name may hold spaces and parentheses */
    for (int field = 2; NULL != p && field < 47; ++field) {
        p = strchr(p + 1, ' ');
    }
    if (NULL == p || 1 != sscanf(p + 1, "%llu", &start)) {
        return 0;
    }
    return (uintptr_t) start;
}

static int registration_lasting(void *context, uintptr_t start, uintptr_t end)
{
    struct coll_async_verbs *verbs = context;
    uintptr_t brk_now;

    if (end <= verbs->heap_start) {
        return 1; /* the program's own data */
    }
    brk_now = (uintptr_t) syscall(SYS_brk, 0); /* as the kernel has it, whoever moved it */
    return start >= brk_now;
}

static void verbs_release(struct coll_async_transport *transport, const void *address,
                          size_t length)
{
    coll_async_verbs_cache_invalidate(((struct coll_async_verbs *) transport)->cache, address,
                                      length);
}

/* Set-up and teardown */

static struct port *port_of(struct coll_async_verbs *verbs, const struct rdma_cm_id *id)
{
    const char *name = ibv_get_device_name(id->verbs->device);

    for (int p = 0; p < verbs->nports; ++p) {
        if (0 == strcmp(verbs->ports[p].info.device, name)
            && verbs->ports[p].info.port == id->port_num) {
            return &verbs->ports[p];
        }
    }
    return NULL;
}

/*
 * Gives each port a listening id on an IPv4 address of its own: binding an id to
 * an address makes rdma_cm name the device and port behind it (for RoCE and
 * IPoIB alike). The first address found per port wins.
 */
static int listen_on_ports(struct coll_async_verbs *verbs)
{
    struct ifaddrs *ifs, *ifa;

    if (0 != getifaddrs(&ifs)) {
        return -errno;
    }
    for (ifa = ifs; NULL != ifa; ifa = ifa->ifa_next) {
        struct rdma_cm_id *id;
        struct port *port;

        if (NULL == ifa->ifa_addr || AF_INET != ifa->ifa_addr->sa_family
            || !(ifa->ifa_flags & IFF_UP) || (ifa->ifa_flags & IFF_LOOPBACK)
            || NULL == ifa->ifa_netmask) {
            continue;
        }
        if (0 != rdma_create_id(verbs->cm, &id, NULL, RDMA_PS_TCP)) {
            continue;
        }
        if (0 != rdma_bind_addr(id, ifa->ifa_addr) || NULL == id->verbs
            || NULL == (port = port_of(verbs, id)) || NULL != port->listener
            || 0 != rdma_listen(id, LISTEN_BACKLOG)) {
            rdma_destroy_id(id);
            continue;
        }
        id->context = port;
        port->listener = id;
        port->addr = ((const struct sockaddr_in *) ifa->ifa_addr)->sin_addr;
        port->prefix = coll_async_ipv4_prefix(ifa->ifa_netmask);
        port->cm_port = ntohs(rdma_get_src_port(id));
    }
    freeifaddrs(ifs);
    return 0;
}

/* Drops the ports that got no address, keeping the order. */
static void keep_listening_ports(struct coll_async_verbs *verbs)
{
    int kept = 0;

    for (int p = 0; p < verbs->nports; ++p) {
        if (NULL != verbs->ports[p].listener) {
            verbs->ports[kept] = verbs->ports[p];
            verbs->ports[kept].listener->context = &verbs->ports[kept];
            ++kept;
        }
    }
    verbs->nports = kept;
}

static struct device *device_of(struct coll_async_verbs *verbs, struct ibv_context *context)
{
    struct device *device;
    struct epoll_event ev = {.events = EPOLLIN};

    for (int d = 0; d < verbs->ndevices; ++d) {
        if (verbs->devices[d].context == context) {
            return &verbs->devices[d];
        }
    }
    device = &verbs->devices[verbs->ndevices];
    device->context = context;
    device->channel = ibv_create_comp_channel(context);
    if (NULL == device->channel) {
        return NULL;
    }
    ++verbs->ndevices;
    ev.data.u32 = POLL_DEVICE + (uint32_t) (device - verbs->devices);
    if (0 != fcntl(device->channel->fd, F_SETFL, O_NONBLOCK)
        || 0 != epoll_ctl(verbs->epfd, EPOLL_CTL_ADD, device->channel->fd, &ev)) {
        return NULL;
    }
    return device;
}

/* Protection domain, CQ and completion channel for each port. */
static int open_port(struct coll_async_verbs *verbs, struct port *port, char *why, size_t why_len)
{
    struct ibv_context *context = port->listener->verbs;
    struct ibv_port_attr attr;
    char name[80];

    port->device = device_of(verbs, context);
    if (NULL == port->device) {
        snprintf(why, why_len, "%s: cannot create a completion channel: %s",
                 port_name(port, name, sizeof(name)), strerror(errno));
        return -errno;
    }
    port->pd = ibv_alloc_pd(context);
    port->cq = NULL != port->pd
                   ? ibv_create_cq(context, CQ_INITIAL, port, port->device->channel, 0)
                   : NULL;
    if (NULL == port->cq || 0 != ibv_req_notify_cq(port->cq, 0)
        || 0 != ibv_query_port(context, (uint8_t) port->info.port, &attr)) {
        snprintf(why, why_len, "%s: cannot create a protection domain and a CQ: %s",
                 port_name(port, name, sizeof(name)), strerror(errno));
        return -errno;
    }
    port->armed = true;
    port->max_msg = attr.max_msg_sz;
    return 0;
}

static void config_defaults(struct coll_async_verbs_config *config)
{
    if (0 == config->eager_limit) {
        config->eager_limit = DEFAULT_EAGER_LIMIT;
    }
    if (0 == config->chunk_size) {
        config->chunk_size = DEFAULT_CHUNK;
    }
    if (config->max_ports <= 0 || config->max_ports > COLL_ASYNC_VERBS_MAX_PORTS) {
        config->max_ports = COLL_ASYNC_VERBS_MAX_PORTS;
    }
    if (config->connect_timeout_ms <= 0) {
        config->connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
    }
    if (0 == config->cache_bytes) {
        config->cache_bytes = DEFAULT_CACHE_BYTES;
    }
    if (config->max_unproven <= 0) {
        config->max_unproven = DEFAULT_MAX_UNPROVEN;
    }
    config->include = config->exclude = NULL; /* the caller's strings: only create reads them */
}

static int create_channels(struct coll_async_verbs *verbs)
{
    struct epoll_event cm = {.events = EPOLLIN, .data.u32 = POLL_CM};
    struct epoll_event timer = {.events = EPOLLIN, .data.u32 = POLL_TIMER};

    verbs->epfd = epoll_create1(EPOLL_CLOEXEC);
    verbs->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    verbs->cm = rdma_create_event_channel();
    if (verbs->epfd < 0 || verbs->timerfd < 0 || NULL == verbs->cm
        || 0 != fcntl(verbs->cm->fd, F_SETFL, O_NONBLOCK)
        || 0 != epoll_ctl(verbs->epfd, EPOLL_CTL_ADD, verbs->cm->fd, &cm)
        || 0 != epoll_ctl(verbs->epfd, EPOLL_CTL_ADD, verbs->timerfd, &timer)) {
        return -errno;
    }
    return 0;
}

static int open_all(struct coll_async_verbs *verbs, char *why, size_t why_len)
{
    static const struct coll_async_verbs_cache_ops cache_ops = {
        register_memory, deregister_memory, registration_lasting};
    int rc = create_channels(verbs);

    if (0 != rc) {
        snprintf(why, why_len, "cannot create the event channels: %s", strerror(-rc));
        return rc;
    }
    rc = listen_on_ports(verbs);
    keep_listening_ports(verbs);
    if (0 == verbs->nports) {
        snprintf(why, why_len, 0 != rc ? "getifaddrs failed"
                                        : "no active RDMA port has an IPv4 address rdma_cm can "
                                          "listen on");
        return -ENODEV;
    }
    for (int p = 0; p < verbs->nports; ++p) {
        if (0 != (rc = open_port(verbs, &verbs->ports[p], why, why_len))) {
            return rc;
        }
        if (verbs->config.chunk_size > verbs->ports[p].max_msg) {
            verbs->config.chunk_size = verbs->ports[p].max_msg;
        }
    }
    verbs->heap_start = heap_start();
    rc = coll_async_verbs_cache_create(&verbs->cache, &cache_ops, verbs,
                                       verbs->config.uncached ? 0 : verbs->config.cache_bytes);
    verbs->peers = calloc(verbs->config.nprocs, sizeof(*verbs->peers));
    if (0 != rc || NULL == verbs->peers) {
        snprintf(why, why_len, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

static void verbs_destroy(struct coll_async_transport *transport);

static const struct coll_async_transport_ops verbs_ops = {
    .name = "verbs",
    .destroy = verbs_destroy,
    .progress = verbs_progress,
    .fd = verbs_fd,
    .address = verbs_address,
    .add_peer = verbs_add_peer,
    .send = verbs_send,
    .recv = verbs_recv,
    .release = verbs_release,
};

int coll_async_verbs_create(struct coll_async_verbs **out,
                            const struct coll_async_verbs_config *config, char *why,
                            size_t why_len)
{
    struct coll_async_verbs_port_info ports[COLL_ASYNC_VERBS_MAX_PORTS];
    struct coll_async_verbs *verbs;
    int count, rc;

    *out = NULL;
    if (config->self >= config->nprocs || config->eager_limit > UINT32_MAX / 2) {
        snprintf(why, why_len, "bad configuration (self %u of %u, eager_limit %zu)", config->self,
                 config->nprocs, config->eager_limit);
        return -EINVAL;
    }
    count = coll_async_verbs_discover(config->include, config->exclude, ports,
                                      COLL_ASYNC_VERBS_MAX_PORTS, why, why_len);
    if (count <= 0) {
        return count < 0 ? count : -ENODEV;
    }
    verbs = calloc(1, sizeof(*verbs));
    if (NULL == verbs) {
        snprintf(why, why_len, "out of memory");
        return -ENOMEM;
    }
    verbs->transport.ops = &verbs_ops;
    verbs->config = *config;
    config_defaults(&verbs->config);
    verbs->refusals.say = config->on_refused;
    verbs->refusals.context = config->context;
    verbs->slot_size = (HEADER + (verbs->config.eager_limit > READY_BODY
                                      ? verbs->config.eager_limit
                                      : READY_BODY) + 63) & ~(size_t) 63;
    verbs->nports = count;
    for (int p = 0; p < count; ++p) {
        verbs->ports[p].info = ports[p];
    }
    rc = open_all(verbs, why, why_len);
    if (0 != rc) {
        verbs_destroy(&verbs->transport);
        return rc;
    }
    *out = verbs;
    return 0;
}

static void close_ports(struct coll_async_verbs *verbs)
{
    for (int p = 0; p < verbs->nports; ++p) {
        struct port *port = &verbs->ports[p];

        if (NULL != port->cq) {
            ibv_destroy_cq(port->cq);
        }
        if (NULL != port->pd) {
            ibv_dealloc_pd(port->pd);
        }
    }
    for (int d = 0; d < verbs->ndevices; ++d) {
        ibv_destroy_comp_channel(verbs->devices[d].channel);
    }
    /* Last: the listening ids keep librdmacm's device contexts open. */
    for (int p = 0; p < verbs->nports; ++p) {
        if (NULL != verbs->ports[p].listener) {
            rdma_destroy_id(verbs->ports[p].listener);
        }
    }
}

static void verbs_destroy(struct coll_async_transport *transport)
{
    struct coll_async_verbs *verbs = (struct coll_async_verbs *) transport;

    for (struct coll_async_verbs_peer *peer = verbs->all_peers; NULL != peer; peer = peer->next) {
        peer_fail(verbs, peer, NULL, "transport closed", -ECANCELED);
    }
    coll_async_transfer_complete_all(&verbs->done);
    while (NULL != verbs->conns) {
        struct conn *conn = verbs->conns;

        verbs->conns = conn->next;
        conn_close(verbs, conn); /* those no peer owns: not proven yet */
        conn_free(conn);
    }
    while (NULL != verbs->all_peers) {
        struct coll_async_verbs_peer *peer = verbs->all_peers;

        verbs->all_peers = peer->next;
        free(peer->receives);
        free(peer);
    }
    coll_async_verbs_cache_destroy(verbs->cache);
    close_ports(verbs);
    if (NULL != verbs->cm) {
        rdma_destroy_event_channel(verbs->cm);
    }
    if (verbs->timerfd >= 0) {
        close(verbs->timerfd);
    }
    if (verbs->epfd >= 0) {
        close(verbs->epfd);
    }
    free(verbs->peers);
    free(verbs);
}

/* Counters */

int coll_async_verbs_ports(const struct coll_async_verbs *verbs,
                           struct coll_async_verbs_port_info *ports, int max)
{
    int count = verbs->nports < max ? verbs->nports : max;

    for (int p = 0; p < count; ++p) {
        ports[p] = verbs->ports[p].info;
    }
    return count;
}

int coll_async_verbs_port_bytes(const struct coll_async_verbs *verbs, uint32_t id,
                                uint64_t *bytes, int max)
{
    const struct coll_async_verbs_peer *peer = id < verbs->config.nprocs ? verbs->peers[id] : NULL;
    int count = verbs->nports < max ? verbs->nports : max;

    for (int p = 0; p < count; ++p) {
        bytes[p] = 0;
    }
    for (int l = 0; NULL != peer && l < peer->nlinks; ++l) {
        if (peer->links[l].port < count) {
            bytes[peer->links[l].port] += peer->links[l].bytes;
        }
    }
    return count;
}
