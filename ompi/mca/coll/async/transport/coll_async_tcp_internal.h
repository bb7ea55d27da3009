/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the TCP transport's internals, shared by its files (the
 * interface is coll_async_tcp.h): its structs, and how it works.
 *
 * Every frame starts with a 32-byte header in network byte order:
 *   length (4)  payload bytes that follow
 *   type (1), 3 zero bytes
 *   tag (8)     CHUNK, RTS, CTS: the transfer's tag
 *   offset (8)  CHUNK: where the payload goes
 *   total (8)   CHUNK, RTS: the transfer's length
 * Fields a type does not use are zero. The acceptor sends CHALLENGE on accept,
 * the connector answers HELLO, the acceptor ACK (their payloads and MACs are
 * coll_async_tcp_handshake.h's), then both send CHUNK, RTS and CTS frames. A
 * transfer of rendezvous_bytes or more is announced (RTS) and its chunks wait
 * for the receiver's CTS, which it sends once the receive is posted: a late
 * receiver stages none of it. RTS and CTS frames go ahead of the next chunk. A lower
 * id whose own connection on the link is under way answers a higher id's HELLO
 * with YIELD and closes: the higher id then waits for the lower id's; without
 * it, a connection closed before its ACK is a peer that went away.
 *
 * What a connection must show before it is trusted (docs/security.md
 * says why): until its HELLO checks out, an accepted connection is
 * nobody's link; it holds one small buffer, a deadline (connect_timeout_ms: the
 * connector's own patience) and a place among at most max_unproven such
 * connections, the oldest closed when a new one comes; anything wrong closes
 * it and is said through on_refused, no peer disturbed. A proven peer's frames
 * are held to their bounds (frame_check); one that breaks them has broken the
 * protocol, and fails the peer. Chunks for a receive not posted yet are staged
 * up to staging_limit bytes for the whole process; past it the connection they
 * came on is not read (back-pressure) until the receive is posted or staging
 * drains. A receive posted while its transfer is under way copies what was
 * staged so far, and the chunks after land in its buffer: a late post costs
 * the copy of what came before it, not of the whole transfer. An RTS that
 * comes before its receive costs a small record, at most MAX_ANNOUNCED a peer.
 *
 * A read takes the rest of a payload straight into its destination and what
 * follows into a small stash: the next header and, for a small message, its
 * payload too, so that one readv usually takes a whole small message.
 */

#ifndef MCA_COLL_ASYNC_TCP_INTERNAL_H
#define MCA_COLL_ASYNC_TCP_INTERNAL_H

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "coll_async_clock.h"
#include "coll_async_ipv4.h"
#include "coll_async_refusals.h"
#include "coll_async_scratch.h"
#include "coll_async_tcp.h"
#include "coll_async_tcp_handshake.h"
#include "coll_async_wire.h"

#define HEADER 32
#define ADDRESS_MAGIC0 0xca
#define ADDRESS_MAGIC1 0x54
#define ADDRESS_VERSION 1
#define DEFAULT_CHUNK (512 * 1024)
#define DEFAULT_CONNECT_TIMEOUT_MS 10000
#define DEFAULT_STAGING_LIMIT ((size_t) 64 << 20)
#define DEFAULT_MAX_UNPROVEN 64 /* fds and ~2.5 KiB each that strangers can hold */
#define MAX_TRANSFER ((uint64_t) 1 << 48) /* no buffer is larger: a bound on totals */
#define EVENTS_PER_PROGRESS 32
/* How often a pass with no connection looks at the listeners (idle_pass). */
#define IDLE_POLL_PASSES 256u
#define ACCEPTS_PER_EVENT 16
#define READ_BUDGET (1024 * 1024) /* bytes one connection reads per progress call */
#define STASH 2048                 /* bytes a read takes past the current payload */
#define MAX_ANNOUNCED 4096 /* RTS a peer may have waiting for their receives */

enum frame_type {
    FRAME_HELLO = 1,
    FRAME_ACK,
    FRAME_CHUNK = 4, /* 3 was an eager message, gone with the API that sent it */
    FRAME_CHALLENGE,
    FRAME_YIELD, /* instead of ACK: the acceptor's own connection on this link wins */
    FRAME_RTS,   /* a large transfer's announcement (tag, total): its data waits for a CTS */
    FRAME_CTS    /* the receive of an announced transfer is posted: send its data */
};

struct frame {
    uint32_t length;
    uint8_t type;
    bool reserved_set; /* the 3 bytes after the type are not zero */
    uint64_t tag, offset, total;
};

enum pollable { POLL_LISTENER, POLL_CONN };

enum conn_state {
    CONN_CONNECTING, /* connector: nonblocking connect under way */
    CONN_CONNECTED,  /* connector: waiting for the CHALLENGE */
    CONN_HELLO_SENT, /* connector: waiting for the ACK */
    CONN_ACCEPTED,   /* acceptor: CHALLENGE sent, waiting for the HELLO; unproven, no peer */
    CONN_PROVEN,     /* acceptor: HELLO checked; the ACK waits for the peer's key */
    CONN_ESTABLISHED,
    CONN_CLOSED      /* fd closed, freed at the end of this progress call */
};

struct listener {
    enum pollable kind; /* first: epoll hands back a pointer to it */
    int fd;
};

struct conn {
    enum pollable kind;
    int fd;
    enum conn_state state;
    uint32_t events; /* registered with epoll */
    struct coll_async_tcp_peer *peer;
    int link;
    struct sockaddr_in local, remote;
    struct conn *next; /* on the unproven list or the graveyard */

    /* The handshake: the acceptor's challenge, the connector's hello. */
    uint8_t challenge[COLL_ASYNC_TCP_NONCE_BYTES];
    struct coll_async_tcp_hello hello;
    uint8_t handshake[COLL_ASYNC_TCP_HELLO_BYTES]; /* a handshake frame's payload */
    uint64_t deadline_ms; /* unproven: when it is closed */
    bool stalled;         /* a chunk's header read, its payload waits for staging room */
    bool tx_control;      /* the frame being written is an RTS or a CTS, of no op's data */

    uint8_t rx_header[HEADER];
    size_t rx_header_have;
    struct frame rx_frame;
    bool rx_in_payload;
    char *rx_dst;
    size_t rx_have;
    uint8_t rx_stash[STASH]; /* read, not yet taken: [rx_stash_at, rx_stash_len) */
    size_t rx_stash_at, rx_stash_len;

    struct coll_async_transfer *tx_op; /* the frame being written, from this op */
    uint8_t tx_header[HEADER];
    const char *tx_data;
    size_t tx_length, tx_done; /* payload bytes; bytes written, header included */
};

struct link {
    struct conn *conn;
    int local_if;                      /* index in the transport's interfaces */
    struct coll_async_tcp_addr remote; /* where to connect */
    uint64_t deadline_ms;              /* nonzero while not established */
    bool waiting;                      /* lost a simultaneous connect: the peer's comes */
    uint64_t bytes_sent, bytes_received;
};

/* Chunks of a bulk transfer whose receive is not posted yet. */
struct unexpected {
    struct unexpected *next;
    uint64_t tag;
    size_t total, received;
    size_t end; /* past the furthest chunk begun in staging */
    char *staging;
    bool announced; /* an RTS: nothing staged, its sender waits for the CTS */
};

/* A transfer's own fields, in its state area. */
struct tcp_op {
    struct coll_async_tcp_peer *peer;
    uint64_t tag;
    char *buffer;
    size_t length;
    size_t offset;   /* bulk send: next byte to hand to a link */
    size_t received; /* bulk receive: bytes arrived */
    char *staging;   /* bulk receive: where chunks begun before the post land */
    int in_flight;   /* chunks a link is writing */
    bool queued;     /* on the peer's send queue: chunks left to hand out */
    bool has_total;  /* bulk receive: bytes is known */
};
coll_async_transfer_state_fits(struct tcp_op);

static inline struct tcp_op *op_of(const struct coll_async_transfer *transfer)
{
    return (struct tcp_op *) transfer->state;
}

struct coll_async_tcp_peer {
    uint32_t id;
    uint64_t name; /* on the wire */
    struct coll_async_key key; /* the peer's, once added */
    int nlinks;  /* links in use: planned from addresses or announced by the peer */
    int routable; /* links this side can connect (addresses known) */
    struct link links[COLL_ASYNC_TCP_MAX_LINKS];
    struct coll_async_transfer_queue bulk; /* sends, in order */
    struct coll_async_transfer_queue announce; /* large sends whose RTS is not written yet */
    struct coll_async_transfer_queue awaiting; /* large sends whose RTS went, waiting for CTS */
    uint64_t *cts;                     /* tags to answer with a CTS */
    int ncts, cts_capacity, nannounced;
    struct coll_async_transfer *posted;  /* bulk receives */
    struct unexpected *unexpected;
    struct coll_async_tcp_peer *next;  /* every peer record, for deadlines and destroy */
    bool has_key;                      /* added: its proven connections can be answered */
    int error;
    char message[256];
};

struct coll_async_tcp {
    struct coll_async_transport transport; /* first: what the mapper holds */
    struct coll_async_tcp_config config;
    uint64_t name; /* this process's, on the wire */
    struct coll_async_tcp_if ifs[COLL_ASYNC_TCP_MAX_IFS];
    struct coll_async_tcp_addr self[COLL_ASYNC_TCP_MAX_IFS];
    struct listener listeners[COLL_ASYNC_TCP_MAX_IFS];
    int epfd;
    struct coll_async_tcp_peer **peers; /* [nprocs] */
    struct coll_async_tcp_peer *all_peers;
    struct conn *unproven, *graveyard; /* unproven: newest first */
    struct coll_async_transfer_queue done;
    int connections;   /* sockets to peers */
    unsigned idle_passes; /* passes while there were none */
    int pending_links; /* links with a deadline */
    int nunproven;     /* accepted connections whose HELLO has not come */
    int stalled;       /* connections not read until staging has room */
    size_t staged;     /* bytes of staging buffers */
    uint64_t staging_copied; /* bytes copied from staging to late receives */
    struct coll_async_refusals refusals;
};

/* Whether this process's connection wins a simultaneous connect with peer's. */
static inline bool tcp_self_lower(const struct coll_async_tcp *tcp,
                                  const struct coll_async_tcp_peer *peer)
{
    return tcp->name < peer->name;
}

/* coll_async_tcp_peer.c: frames, transfers, connections' teardown, unproven connections, peer
 * failure, peers and their links. */

void tcp_encode_frame(uint8_t *p, const struct frame *frame);
void tcp_decode_frame(const uint8_t *p, struct frame *frame);
struct sockaddr_in tcp_sockaddr_of(struct in_addr addr, uint16_t port);
void tcp_op_start(struct coll_async_transfer *op, struct coll_async_tcp_peer *peer, uint64_t tag,
                  const void *buffer, size_t length);
void tcp_op_release(struct coll_async_tcp *tcp, struct coll_async_transfer *op);
int tcp_conn_set_events(struct coll_async_tcp *tcp, struct conn *conn, uint32_t events);
struct conn *tcp_conn_new(struct coll_async_tcp *tcp, int fd, enum conn_state state,
                          uint32_t events);
void tcp_unproven_remove(struct coll_async_tcp *tcp, struct conn *conn);
void tcp_conn_close(struct coll_async_tcp *tcp, struct conn *conn);
void tcp_bury(struct coll_async_tcp *tcp);
void tcp_refuse(struct coll_async_tcp *tcp, struct conn *conn, const char *why);
void tcp_check_unproven(struct coll_async_tcp *tcp);
void tcp_unproven_make_room(struct coll_async_tcp *tcp);
void tcp_link_settle(struct coll_async_tcp *tcp, struct link *link);
void tcp_link_arm(struct coll_async_tcp *tcp, struct link *link);
void tcp_peer_fail(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer, int l,
                   const char *what, int err);
void tcp_conn_fail(struct coll_async_tcp *tcp, struct conn *conn, const char *what, int err);
void tcp_check_deadlines(struct coll_async_tcp *tcp);
uint64_t tcp_name_of(const struct coll_async_tcp *tcp, uint32_t id);
int tcp_id_of(const struct coll_async_tcp *tcp, uint64_t name, uint32_t *id);
struct coll_async_tcp_peer *tcp_peer_get(struct coll_async_tcp *tcp, uint32_t id);
void tcp_peer_route(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer,
                    const struct coll_async_tcp_addr *addrs, int count);

/* coll_async_tcp_connect.c: sending frames, connecting, accepting, the handshake. */

void tcp_conn_write(struct coll_async_tcp *tcp, struct conn *conn);
void tcp_conn_connected(struct coll_async_tcp *tcp, struct conn *conn);
void tcp_peer_kick(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer, int want);
void tcp_accept_some(struct coll_async_tcp *tcp, struct listener *listener);
void tcp_conn_challenged(struct coll_async_tcp *tcp, struct conn *conn);
void tcp_conn_send_ack(struct coll_async_tcp *tcp, struct conn *conn);
void tcp_conn_hello(struct coll_async_tcp *tcp, struct conn *conn);
void tcp_conn_ack(struct coll_async_tcp *tcp, struct conn *conn);
void tcp_conn_yielded(struct coll_async_tcp *tcp, struct conn *conn);
int tcp_queue_cts(struct coll_async_tcp_peer *peer, uint64_t tag);

/* coll_async_tcp_read.c: receiving: chunks matched to receives or staged, frame checks, reading. */

struct coll_async_transfer *tcp_find_posted(struct coll_async_tcp_peer *peer, uint64_t tag);
void tcp_recv_finish(struct coll_async_tcp *tcp, struct coll_async_transfer *op);
int tcp_resume_stalled(struct coll_async_tcp *tcp);
void tcp_conn_read(struct coll_async_tcp *tcp, struct conn *conn);

#endif /* MCA_COLL_ASYNC_TCP_INTERNAL_H */
