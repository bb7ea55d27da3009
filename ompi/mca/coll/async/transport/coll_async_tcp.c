/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the TCP transport: endpoints, connections, framing, progress.
 * See coll_async_tcp.h.
 *
 * Every frame starts with a 32-byte header in network byte order:
 *   length (4)  payload bytes that follow
 *   type (1), 3 zero bytes
 *   tag (8)     CHUNK: the transfer's tag
 *   offset (8)  CHUNK: where the payload goes
 *   total (8)   CHUNK: the transfer's length
 * Fields a type does not use are zero. The acceptor sends CHALLENGE on accept,
 * the connector answers HELLO, the acceptor ACK (their payloads and MACs are
 * coll_async_tcp_handshake.h's), then both send CHUNK frames. A lower
 * id whose own connection on the link is under way answers a higher id's HELLO
 * with YIELD and closes: the higher id then waits for the lower id's; without
 * it, a connection closed before its ACK is a peer that went away.
 *
 * What a connection must show before it is trusted (the README's security
 * section says why): until its HELLO checks out, an accepted connection is
 * nobody's link; it holds one small buffer, a deadline (connect_timeout_ms: the
 * connector's own patience) and a place among at most max_unproven such
 * connections, the oldest closed when a new one comes; anything wrong closes
 * it and is said through on_refused, no peer disturbed. A proven peer's frames
 * are held to their bounds (frame_check); one that breaks them has broken the
 * protocol, and fails the peer. Chunks for a receive not posted yet are staged
 * up to staging_limit bytes for the whole process; past it the connection they
 * came on is not read (back-pressure) until the receive is posted or staging
 * drains.
 *
 * A read takes the rest of a payload straight into its destination and what
 * follows into a small stash: the next header and, for a small message, its
 * payload too, so that one readv usually takes a whole small message.
 */

#define _GNU_SOURCE

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
#include "coll_async_tcp.h"
#include "coll_async_tcp_handshake.h"
#include "coll_async_wire.h"

#define HEADER 32
#define ADDRESS_MAGIC0 0xca
#define ADDRESS_MAGIC1 0x54
#define ADDRESS_VERSION 1
#define DEFAULT_CHUNK (128 * 1024)
#define DEFAULT_CONNECT_TIMEOUT_MS 10000
#define DEFAULT_STAGING_LIMIT ((size_t) 64 << 20)
#define DEFAULT_MAX_UNPROVEN 64 /* fds and ~2.5 KiB each that strangers can hold */
#define MAX_TRANSFER ((uint64_t) 1 << 48) /* no buffer is larger: a bound on totals */
#define EVENTS_PER_PROGRESS 32
#define ACCEPTS_PER_EVENT 16
#define READ_BUDGET (1024 * 1024) /* bytes one connection reads per progress call */
#define STASH 2048                 /* bytes a read takes past the current payload */

enum frame_type {
    FRAME_HELLO = 1,
    FRAME_ACK,
    FRAME_CHUNK = 4, /* 3 was an eager message, gone with the API that sent it */
    FRAME_CHALLENGE,
    FRAME_YIELD /* instead of ACK: the acceptor's own connection on this link wins */
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
    char *staging;
};

/* A transfer's own fields, in its state area. */
struct tcp_op {
    struct coll_async_tcp_peer *peer;
    uint64_t tag;
    char *buffer;
    size_t length;
    size_t offset;   /* bulk send: next byte to hand to a link */
    size_t received; /* bulk receive: bytes arrived */
    char *staging;   /* bulk receive: where chunks landed before the post */
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
    struct coll_async_key key; /* the peer's, once added */
    int nlinks;  /* links in use: planned from addresses or announced by the peer */
    int routable; /* links this side can connect (addresses known) */
    struct link links[COLL_ASYNC_TCP_MAX_LINKS];
    struct coll_async_transfer_queue bulk; /* sends, in order */
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
    struct coll_async_tcp_if ifs[COLL_ASYNC_TCP_MAX_IFS];
    struct coll_async_tcp_addr self[COLL_ASYNC_TCP_MAX_IFS];
    struct listener listeners[COLL_ASYNC_TCP_MAX_IFS];
    int epfd;
    struct coll_async_tcp_peer **peers; /* [nprocs] */
    struct coll_async_tcp_peer *all_peers;
    struct conn *unproven, *graveyard; /* unproven: newest first */
    struct coll_async_transfer_queue done;
    int connections;   /* sockets to peers */
    int pending_links; /* links with a deadline */
    int nunproven;     /* accepted connections whose HELLO has not come */
    int stalled;       /* connections not read until staging has room */
    size_t staged;     /* bytes of staging buffers */
    struct coll_async_refusals refusals;
};

static void conn_challenge(struct coll_async_tcp *tcp, struct conn *conn);
static void conn_read(struct coll_async_tcp *tcp, struct conn *conn);

/* Small helpers */

static void encode_frame(uint8_t *p, const struct frame *frame)
{
    uint32_t length = htonl(frame->length);

    memcpy(p, &length, 4);
    p[4] = frame->type;
    p[5] = p[6] = p[7] = 0;
    coll_async_put_be64(p + 8, frame->tag);
    coll_async_put_be64(p + 16, frame->offset);
    coll_async_put_be64(p + 24, frame->total);
}

static void decode_frame(const uint8_t *p, struct frame *frame)
{
    uint32_t length;

    memcpy(&length, p, 4);
    frame->length = ntohl(length);
    frame->type = p[4];
    frame->reserved_set = 0 != (p[5] | p[6] | p[7]);
    frame->tag = coll_async_get_be64(p + 8);
    frame->offset = coll_async_get_be64(p + 16);
    frame->total = coll_async_get_be64(p + 24);
}

static struct sockaddr_in sockaddr_of(struct in_addr addr, uint16_t port)
{
    struct sockaddr_in sa;

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr = addr;
    sa.sin_port = htons(port);
    return sa;
}

/* Operations */

static void op_start(struct coll_async_transfer *op, struct coll_async_tcp_peer *peer, uint64_t tag,
                     const void *buffer, size_t length)
{
    op->status = COLL_ASYNC_TRANSFER_PENDING;
    op->error = NULL;
    op->bytes = 0;
    op->next = NULL;
    op->result = 0;
    *op_of(op) = (struct tcp_op){.peer = peer, .tag = tag, .buffer = (char *) buffer,
                                 .length = length};
}

/* Completes op once nothing refers to it any more: off the queues, no chunk in flight. */
static void op_release(struct coll_async_tcp *tcp, struct coll_async_transfer *op)
{
    if (!op_of(op)->queued && 0 == op_of(op)->in_flight) {
        coll_async_transfer_push(&tcp->done, op);
    }
}

static void op_fail(struct coll_async_transfer *op, const struct coll_async_tcp_peer *peer)
{
    if (0 == op->result) {
        op->result = peer->error;
        op->error = peer->message;
    }
}

/* Connections: epoll registration and teardown */

static int conn_set_events(struct coll_async_tcp *tcp, struct conn *conn, uint32_t events)
{
    struct epoll_event ev = {.data.ptr = conn};

    if (conn->stalled) {
        events &= ~(uint32_t) EPOLLIN; /* back-pressure: read on once staging has room */
    }
    ev.events = events;
    if (events == conn->events) {
        return 0;
    }
    if (0 != epoll_ctl(tcp->epfd, EPOLL_CTL_MOD, conn->fd, &ev)) {
        return -errno;
    }
    conn->events = events;
    return 0;
}

static struct conn *conn_new(struct coll_async_tcp *tcp, int fd, enum conn_state state,
                             uint32_t events)
{
    struct conn *conn = calloc(1, sizeof(*conn));
    struct epoll_event ev = {.events = events};

    if (NULL == conn) {
        return NULL;
    }
    conn->kind = POLL_CONN;
    conn->fd = fd;
    conn->state = state;
    conn->events = events;
    conn->link = -1;
    ev.data.ptr = conn;
    if (0 != epoll_ctl(tcp->epfd, EPOLL_CTL_ADD, fd, &ev)) {
        free(conn);
        return NULL;
    }
    ++tcp->connections;
    return conn;
}

static void unproven_remove(struct coll_async_tcp *tcp, struct conn *conn)
{
    for (struct conn **p = &tcp->unproven; NULL != *p; p = &(*p)->next) {
        if (*p == conn) {
            *p = conn->next;
            --tcp->nunproven;
            return;
        }
    }
}

/* Closes the socket now; the struct lives until this progress call ends, since
 * the epoll events already fetched may point to it. */
static void conn_close(struct coll_async_tcp *tcp, struct conn *conn)
{
    if (CONN_CLOSED == conn->state) {
        return;
    }
    if (CONN_ACCEPTED == conn->state) {
        unproven_remove(tcp, conn);
    }
    if (conn->stalled) {
        --tcp->stalled;
    }
    close(conn->fd);
    conn->fd = -1;
    conn->state = CONN_CLOSED;
    --tcp->connections;
    conn->next = tcp->graveyard;
    tcp->graveyard = conn;
}

static void bury(struct coll_async_tcp *tcp)
{
    while (NULL != tcp->graveyard) {
        struct conn *conn = tcp->graveyard;

        tcp->graveyard = conn->next;
        free(conn);
    }
}

static const char *if_name_of(const struct coll_async_tcp *tcp, struct in_addr addr)
{
    for (int i = 0; i < tcp->config.nifs; ++i) {
        if (tcp->ifs[i].addr.s_addr == addr.s_addr) {
            return tcp->ifs[i].name;
        }
    }
    return "?";
}

/* Unproven connections: refused, timed out, or the oldest past the cap. None
 * is a peer's link yet, so closing one disturbs no peer. */

static void refuse(struct coll_async_tcp *tcp, struct conn *conn, const char *why)
{
    char local[INET_ADDRSTRLEN] = "?", remote[INET_ADDRSTRLEN] = "?", claim[64] = "";

    inet_ntop(AF_INET, &conn->local.sin_addr, local, sizeof(local));
    inet_ntop(AF_INET, &conn->remote.sin_addr, remote, sizeof(remote));
    if (0 != conn->hello.nlinks) {
        snprintf(claim, sizeof(claim), " as process %u, link %u", conn->hello.from,
                 conn->hello.link);
    }
    coll_async_refusals_say(
        &tcp->refusals, "tcp: refused a connection on %s %s:%u from %s:%u%s: %s",
        if_name_of(tcp, conn->local.sin_addr), local, ntohs(conn->local.sin_port), remote,
        ntohs(conn->remote.sin_port), claim, why);
    conn_close(tcp, conn);
}

static void check_unproven(struct coll_async_tcp *tcp)
{
    uint64_t now = coll_async_now_ms();
    struct conn *conn = tcp->unproven;

    while (NULL != conn) {
        struct conn *next = conn->next;

        if (now >= conn->deadline_ms) {
            char why[64];

            snprintf(why, sizeof(why), "it did not prove itself within %d ms",
                     tcp->config.connect_timeout_ms);
            refuse(tcp, conn, why);
        }
        conn = next;
    }
}

/* Makes room for one more unproven connection: the oldest goes, so that strangers
 * that keep connections open cannot lock the job's own out. */
static void unproven_make_room(struct coll_async_tcp *tcp)
{
    struct conn *oldest = tcp->unproven;
    char why[80];

    if (tcp->nunproven < tcp->config.max_unproven) {
        return;
    }
    while (NULL != oldest->next) {
        oldest = oldest->next;
    }
    snprintf(why, sizeof(why), "the oldest of %d connections not proven yet, closed for a new one",
             tcp->nunproven);
    refuse(tcp, oldest, why);
}

/* Links: deadlines */

static void link_settle(struct coll_async_tcp *tcp, struct link *link)
{
    if (0 != link->deadline_ms) {
        link->deadline_ms = 0;
        --tcp->pending_links;
    }
    link->waiting = false;
}

static void link_arm(struct coll_async_tcp *tcp, struct link *link)
{
    if (0 == link->deadline_ms) {
        ++tcp->pending_links;
    }
    link->deadline_ms = coll_async_now_ms() + (uint64_t) tcp->config.connect_timeout_ms;
}

/* Peer failure */

static void describe(const struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer, int l,
                     const char *what, int err)
{
    const struct link *link = &peer->links[l];
    const struct conn *conn = link->conn;
    char local[INET_ADDRSTRLEN] = "?", remote[INET_ADDRSTRLEN] = "?";
    struct in_addr remote_addr = link->remote.addr, local_addr = tcp->ifs[link->local_if].addr;
    unsigned port = link->remote.port;

    if (NULL != conn) {
        local_addr = conn->local.sin_addr;
        remote_addr = conn->remote.sin_addr;
        port = ntohs(conn->remote.sin_port);
    }
    inet_ntop(AF_INET, &local_addr, local, sizeof(local));
    inet_ntop(AF_INET, &remote_addr, remote, sizeof(remote));
    snprintf(peer->message, sizeof(peer->message),
             "tcp: peer %u, link %d (%s %s -> %s:%u): %s: %s", peer->id, l,
             if_name_of(tcp, local_addr), local, remote, port, what, strerror(-err));
}

static void fail_queue(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer,
                       struct coll_async_transfer_queue *queue)
{
    struct coll_async_transfer *op;

    while (NULL != (op = coll_async_transfer_pop(queue))) {
        op_of(op)->queued = false;
        op_fail(op, peer);
        op_release(tcp, op);
    }
}

static void fail_receives(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer)
{
    while (NULL != peer->posted) {
        struct coll_async_transfer *op = peer->posted;

        peer->posted = op->next;
        if (NULL != op_of(op)->staging) {
            tcp->staged -= op->bytes;
            free(op_of(op)->staging);
            op_of(op)->staging = NULL;
        }
        op_fail(op, peer);
        op_release(tcp, op);
    }
    while (NULL != peer->unexpected) {
        struct unexpected *u = peer->unexpected;

        peer->unexpected = u->next;
        tcp->staged -= u->total;
        free(u->staging);
        free(u);
    }
}

/*
 * Fails every operation on peer and closes its connections, for good: a process
 * that lost a connection has lost data in it. l is the link that failed, what
 * and err say how (err: -errno).
 */
static void peer_fail(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer, int l,
                      const char *what, int err)
{
    if (0 != peer->error) {
        return;
    }
    describe(tcp, peer, l, what, err);
    peer->error = err;
    for (int i = 0; i < peer->nlinks; ++i) {
        struct link *link = &peer->links[i];
        struct conn *conn = link->conn;

        link_settle(tcp, link);
        if (NULL == conn) {
            continue;
        }
        if (NULL != conn->tx_op) {
            op_fail(conn->tx_op, peer);
            --op_of(conn->tx_op)->in_flight;
            op_release(tcp, conn->tx_op);
            conn->tx_op = NULL;
        }
        conn_close(tcp, conn);
        link->conn = NULL;
    }
    fail_queue(tcp, peer, &peer->bulk);
    fail_receives(tcp, peer);
}

static void conn_fail(struct coll_async_tcp *tcp, struct conn *conn, const char *what, int err)
{
    if (NULL == conn->peer) {
        refuse(tcp, conn, what);
        return;
    }
    peer_fail(tcp, conn->peer, conn->link, what, err);
}

static void check_deadlines(struct coll_async_tcp *tcp)
{
    uint64_t now = coll_async_now_ms();

    for (struct coll_async_tcp_peer *peer = tcp->all_peers; NULL != peer; peer = peer->next) {
        for (int l = 0; l < peer->nlinks && 0 == peer->error; ++l) {
            struct link *link = &peer->links[l];

            if (0 != link->deadline_ms && now >= link->deadline_ms) {
                peer_fail(tcp, peer, l,
                          link->waiting ? "no connection from the peer in time"
                                        : "connection not established in time",
                          -ETIMEDOUT);
            }
        }
    }
}

/* Peers and the links they share with this process */

static struct coll_async_tcp_peer *peer_get(struct coll_async_tcp *tcp, uint32_t id)
{
    struct coll_async_tcp_peer *peer;

    if (id >= tcp->config.nprocs || id == tcp->config.self) {
        return NULL;
    }
    if (NULL != tcp->peers[id]) {
        return tcp->peers[id];
    }
    peer = calloc(1, sizeof(*peer));
    if (NULL == peer) {
        return NULL;
    }
    peer->id = id;
    peer->next = tcp->all_peers;
    tcp->all_peers = peer;
    tcp->peers[id] = peer;
    return peer;
}

/*
 * Pairs the lower id's endpoints (lo) with the higher id's (hi), so both sides
 * number the links alike: each lo endpoint, in order, takes the first unused hi
 * endpoint on its subnet. With no common subnet (routed networks), one link
 * between the first endpoints. Returns the number of pairs.
 */
static int plan_links(const struct coll_async_tcp_addr *lo, int nlo,
                      const struct coll_async_tcp_addr *hi, int nhi, int max, int *lo_index,
                      int *hi_index)
{
    bool used[COLL_ASYNC_TCP_MAX_IFS] = {false};
    int count = 0;

    for (int i = 0; i < nlo && count < max; ++i) {
        for (int j = 0; j < nhi; ++j) {
            if (!used[j]
                && coll_async_ipv4_same_subnet(lo[i].addr, lo[i].prefix, hi[j].addr,
                                               hi[j].prefix)) {
                used[j] = true;
                lo_index[count] = i;
                hi_index[count++] = j;
                break;
            }
        }
    }
    if (0 == count && nlo > 0 && nhi > 0) {
        lo_index[0] = hi_index[0] = 0;
        count = 1;
    }
    return count;
}

static void peer_route(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer,
                       const struct coll_async_tcp_addr *addrs, int count)
{
    int mine[COLL_ASYNC_TCP_MAX_LINKS], theirs[COLL_ASYNC_TCP_MAX_LINKS];
    int n;
    bool lower = tcp->config.self < peer->id;

    n = lower ? plan_links(tcp->self, tcp->config.nifs, addrs, count, tcp->config.max_links,
                           mine, theirs)
              : plan_links(addrs, count, tcp->self, tcp->config.nifs, tcp->config.max_links,
                           theirs, mine);
    for (int l = 0; l < n; ++l) {
        peer->links[l].local_if = mine[l];
        peer->links[l].remote = addrs[theirs[l]];
    }
    peer->routable = n;
    if (n > peer->nlinks) {
        peer->nlinks = n;
    }
}

/* Sending */

/* Takes the next chunk for conn. */
static bool conn_take_frame(struct coll_async_tcp *tcp, struct conn *conn)
{
    struct coll_async_tcp_peer *peer = conn->peer;
    struct coll_async_transfer *op;
    struct frame frame = {0};

    if (NULL != (op = peer->bulk.head)) {
        size_t left = op_of(op)->length - op_of(op)->offset;
        size_t chunk = left < tcp->config.chunk_size ? left : tcp->config.chunk_size;

        frame.type = FRAME_CHUNK;
        frame.length = (uint32_t) chunk;
        frame.offset = op_of(op)->offset;
        frame.total = op_of(op)->length;
        conn->tx_data = op_of(op)->buffer + op_of(op)->offset;
        op_of(op)->offset += chunk;
        if (op_of(op)->offset == op_of(op)->length) {
            (void) coll_async_transfer_pop(&peer->bulk); /* every chunk handed out */
        }
    } else {
        return false;
    }
    frame.tag = op_of(op)->tag;
    encode_frame(conn->tx_header, &frame);
    op_of(op)->queued = peer->bulk.head == op;
    ++op_of(op)->in_flight;
    conn->tx_op = op;
    conn->tx_length = frame.length;
    conn->tx_done = 0;
    return true;
}

/* Writes what is left of the current frame; bytes written or -errno. */
static ssize_t conn_send_frame(struct conn *conn)
{
    struct iovec iov[2];
    struct msghdr msg = {.msg_iov = iov};
    size_t done = conn->tx_done;
    ssize_t n;

    if (done < HEADER) {
        iov[msg.msg_iovlen++] = (struct iovec){conn->tx_header + done, HEADER - done};
        done = HEADER;
    }
    if (conn->tx_length > 0) {
        iov[msg.msg_iovlen++] = (struct iovec){(char *) conn->tx_data + (done - HEADER),
                                               conn->tx_length - (done - HEADER)};
    }
    do {
        n = sendmsg(conn->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (n < 0 && EINTR == errno);
    return n < 0 ? -errno : n;
}

/* Writes frames until the socket is full or about one chunk went out. */
static void conn_write(struct coll_async_tcp *tcp, struct conn *conn)
{
    size_t budget = tcp->config.chunk_size;
    struct link *link = &conn->peer->links[conn->link];

    while (CONN_ESTABLISHED == conn->state) {
        struct coll_async_transfer *op;
        ssize_t n;

        if (NULL == conn->tx_op && !conn_take_frame(tcp, conn)) {
            (void) conn_set_events(tcp, conn, EPOLLIN);
            return;
        }
        n = conn_send_frame(conn);
        if (-EAGAIN == n || -EWOULDBLOCK == n) {
            (void) conn_set_events(tcp, conn, EPOLLIN | EPOLLOUT);
            return;
        }
        if (n < 0) {
            conn_fail(tcp, conn, "send", (int) n);
            return;
        }
        link->bytes_sent += (uint64_t) n;
        conn->tx_done += (size_t) n;
        if (conn->tx_done < HEADER + conn->tx_length) {
            continue;
        }
        op = conn->tx_op;
        conn->tx_op = NULL;
        --op_of(op)->in_flight;
        op_release(tcp, op);
        if ((size_t) n >= budget) {
            (void) conn_set_events(tcp, conn, EPOLLIN | EPOLLOUT); /* come back for more */
            return;
        }
        budget -= (size_t) n;
    }
}

/* Sends a handshake frame; a fresh socket has room for it. */
static int conn_send_control(struct conn *conn, enum frame_type type, const uint8_t *payload,
                             size_t length)
{
    struct frame frame = {.type = type, .length = (uint32_t) length};
    uint8_t data[HEADER + COLL_ASYNC_TCP_HELLO_BYTES];
    ssize_t n;

    encode_frame(data, &frame);
    if (length > 0) {
        memcpy(data + HEADER, payload, length);
    }
    n = send(conn->fd, data, HEADER + length, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
        return -errno;
    }
    return HEADER + length == (size_t) n ? 0 : -EIO;
}

/* Connecting */

static int socket_nodelay(int fd)
{
    int one = 1;

    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ? -errno : 0;
}

static void conn_connected(struct coll_async_tcp *tcp, struct conn *conn)
{
    int err = 0, rc;
    socklen_t len = sizeof(err);

    if (0 != getsockopt(conn->fd, SOL_SOCKET, SO_ERROR, &err, &len)) {
        err = errno;
    }
    if (0 != err) {
        conn_fail(tcp, conn, "connect", -err);
        return;
    }
    conn->state = CONN_CONNECTED;
    rc = conn_set_events(tcp, conn, EPOLLIN);
    if (0 != rc) {
        conn_fail(tcp, conn, "connect", rc);
    }
}

/* Opens a socket bound to the link's local interface and starts connecting. */
static int link_socket(struct coll_async_tcp *tcp, struct link *link, struct sockaddr_in *local,
                       bool *done)
{
    struct sockaddr_in remote = sockaddr_of(link->remote.addr, link->remote.port);
    socklen_t len = sizeof(*local);
    int fd, rc;

    *local = sockaddr_of(tcp->ifs[link->local_if].addr, 0);
    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -errno;
    }
    if (0 != (rc = socket_nodelay(fd))) {
        goto fail;
    }
    if (0 != bind(fd, (struct sockaddr *) local, sizeof(*local))
        || 0 != getsockname(fd, (struct sockaddr *) local, &len)) {
        rc = -errno;
        goto fail;
    }
    *done = 0 == connect(fd, (struct sockaddr *) &remote, sizeof(remote));
    if (!*done && EINPROGRESS != errno) {
        rc = -errno;
        goto fail;
    }
    return fd;
fail:
    close(fd);
    return rc;
}

static void link_connect(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer, int l)
{
    struct link *link = &peer->links[l];
    struct sockaddr_in local;
    struct conn *conn;
    bool done = false;
    int fd = link_socket(tcp, link, &local, &done);

    if (fd < 0) {
        peer_fail(tcp, peer, l, "connect", fd);
        return;
    }
    conn = conn_new(tcp, fd, CONN_CONNECTING, EPOLLOUT);
    if (NULL == conn) {
        close(fd);
        peer_fail(tcp, peer, l, "connect", -ENOMEM);
        return;
    }
    conn->peer = peer;
    conn->link = l;
    conn->local = local;
    conn->remote = sockaddr_of(link->remote.addr, link->remote.port);
    link->conn = conn;
    link_arm(tcp, link);
    if (done) {
        conn_connected(tcp, conn);
    }
}

/* Connects the first want links that have none, and lets the established ones write. */
static void peer_kick(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer, int want)
{
    for (int l = 0; l < want && 0 == peer->error; ++l) {
        struct link *link = &peer->links[l];

        if (NULL == link->conn && !link->waiting && l < peer->routable) {
            link_connect(tcp, peer, l);
        } else if (NULL != link->conn && CONN_ESTABLISHED == link->conn->state) {
            conn_write(tcp, link->conn);
        }
    }
}

/* Accepting */

static void accept_some(struct coll_async_tcp *tcp, struct listener *listener)
{
    for (int i = 0; i < ACCEPTS_PER_EVENT; ++i) {
        struct sockaddr_in remote;
        socklen_t len = sizeof(remote);
        struct conn *conn;
        int fd = accept4(listener->fd, (struct sockaddr *) &remote, &len,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0) {
            return; /* EAGAIN, or a connection that died in the backlog */
        }
        unproven_make_room(tcp);
        conn = socket_nodelay(fd) ? NULL : conn_new(tcp, fd, CONN_ACCEPTED, EPOLLIN);
        if (NULL == conn) {
            close(fd);
            continue;
        }
        conn->remote = remote;
        len = sizeof(conn->local);
        (void) getsockname(fd, (struct sockaddr *) &conn->local, &len);
        conn->deadline_ms = coll_async_now_ms() + (uint64_t) tcp->config.connect_timeout_ms;
        conn->next = tcp->unproven;
        tcp->unproven = conn;
        ++tcp->nunproven;
        conn_challenge(tcp, conn);
    }
}

/*
 * The acceptor's side of the simultaneous-connect rule: a lower id's connection
 * replaces this side's own attempt; a higher id's is refused while this side's
 * own attempt is under way (the higher id then waits for this one).
 */
static bool link_takes(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer,
                       struct link *link)
{
    struct conn *mine = link->conn;

    if (NULL == mine) {
        return true;
    }
    if (CONN_ESTABLISHED == mine->state || peer->id > tcp->config.self) {
        return false;
    }
    conn_close(tcp, mine);
    link->conn = NULL;
    return true;
}

/* The acceptor's first frame: a challenge no earlier handshake answered. */
static void conn_challenge(struct coll_async_tcp *tcp, struct conn *conn)
{
    uint8_t payload[COLL_ASYNC_TCP_CHALLENGE_BYTES];
    int rc = coll_async_random(conn->challenge, sizeof(conn->challenge));

    if (0 == rc) {
        coll_async_tcp_challenge_encode(conn->challenge, payload);
        rc = conn_send_control(conn, FRAME_CHALLENGE, payload, sizeof(payload));
    }
    if (0 != rc) {
        refuse(tcp, conn, "could not send the challenge");
    }
}

/* The connector's answer: its hello, with its proof under the acceptor's key. */
static void conn_challenged(struct coll_async_tcp *tcp, struct conn *conn)
{
    struct coll_async_tcp_peer *peer = conn->peer;
    uint8_t payload[COLL_ASYNC_TCP_HELLO_BYTES];
    int rc;

    if (0 != coll_async_tcp_challenge_decode(conn->handshake, conn->challenge)) {
        conn_fail(tcp, conn, "handshake: the peer speaks another protocol version", -EPROTO);
        return;
    }
    conn->hello = (struct coll_async_tcp_hello){.from = tcp->config.self,
                                                .to = peer->id,
                                                .link = (uint8_t) conn->link,
                                                .nlinks = (uint8_t) peer->nlinks};
    rc = coll_async_random(conn->hello.nonce, sizeof(conn->hello.nonce));
    if (0 == rc) {
        conn->hello.tag = coll_async_tcp_hello_tag(&peer->key, &conn->hello, conn->challenge);
        coll_async_tcp_hello_encode(&conn->hello, payload);
        rc = conn_send_control(conn, FRAME_HELLO, payload, sizeof(payload));
    }
    if (0 != rc) {
        conn_fail(tcp, conn, "send hello", rc);
        return;
    }
    conn->state = CONN_HELLO_SENT;
}

/* The acceptor's proof, under the connector's key: the link is established. */
static void conn_send_ack(struct coll_async_tcp *tcp, struct conn *conn)
{
    uint8_t payload[COLL_ASYNC_TCP_ACK_BYTES];
    int rc;

    coll_async_put_be64(payload,
                        coll_async_tcp_ack_tag(&conn->peer->key, &conn->hello, conn->challenge));
    rc = conn_send_control(conn, FRAME_ACK, payload, sizeof(payload));
    if (0 != rc) {
        conn_fail(tcp, conn, "send ack", rc);
        return;
    }
    conn->state = CONN_ESTABLISHED;
    conn_write(tcp, conn);
}

/* Why a hello does not make its connection a peer's link; NULL when it does. */
static const char *hello_refusal(const struct coll_async_tcp *tcp, struct conn *conn)
{
    const struct coll_async_tcp_hello *hello = &conn->hello;

    if (0 != coll_async_tcp_hello_decode(conn->handshake, &conn->hello)) {
        return "not a coll/async hello of this version";
    }
    if (hello->to != tcp->config.self) {
        return "its hello is for another process";
    }
    if (hello->from >= tcp->config.nprocs || hello->from == tcp->config.self
        || hello->link >= hello->nlinks || hello->nlinks > COLL_ASYNC_TCP_MAX_LINKS) {
        return "its hello names no peer or link of this job";
    }
    if (!coll_async_tags_equal(hello->tag, coll_async_tcp_hello_tag(&tcp->config.key, hello,
                                                                      conn->challenge))) {
        return "a wrong hello: it does not hold this process's key, or replays an old handshake";
    }
    return NULL;
}

/* The acceptor checks the hello with its own key; only then is the connection
 * the peer's link. The ACK needs the peer's key: it waits for add_peer when
 * the peer connected first. */
static void conn_hello(struct coll_async_tcp *tcp, struct conn *conn)
{
    const char *why = hello_refusal(tcp, conn);
    struct coll_async_tcp_peer *peer;
    int l = conn->hello.link;

    if (NULL != why) {
        refuse(tcp, conn, why);
        return;
    }
    unproven_remove(tcp, conn);
    conn->state = CONN_PROVEN;
    peer = peer_get(tcp, conn->hello.from);
    if (NULL == peer || 0 != peer->error) {
        conn_close(tcp, conn);
        return;
    }
    if (!link_takes(tcp, peer, &peer->links[l])) {
        (void) conn_send_control(conn, FRAME_YIELD, NULL, 0);
        conn_close(tcp, conn);
        return;
    }
    if (conn->hello.nlinks > peer->nlinks) {
        peer->nlinks = conn->hello.nlinks;
    }
    conn->peer = peer;
    conn->link = l;
    peer->links[l].conn = conn;
    link_settle(tcp, &peer->links[l]);
    if (peer->has_key) {
        conn_send_ack(tcp, conn);
    }
}

/* The connector checks the ACK with its own key: whoever answered at the peer's
 * address is the peer. */
static void conn_ack(struct coll_async_tcp *tcp, struct conn *conn)
{
    uint64_t expected = coll_async_tcp_ack_tag(&tcp->config.key, &conn->hello, conn->challenge);

    if (!coll_async_tags_equal(coll_async_get_be64(conn->handshake), expected)) {
        coll_async_refusals_say(&tcp->refusals,
                                "tcp: refused the process that accepted a connection to peer "
                                "%u, link %d: it did not prove it holds this process's key",
                                conn->peer->id, conn->link);
        conn_fail(tcp, conn,
                  "handshake: the accepting process did not prove it is the peer (another "
                  "process at its address?)",
                  -EACCES);
        return;
    }
    conn->state = CONN_ESTABLISHED;
    link_settle(tcp, &conn->peer->links[conn->link]);
    conn_write(tcp, conn);
}

/* A higher id lost a simultaneous connect: it waits for the lower id's
 * connection on that link (the link's deadline still runs). */
static void conn_yielded(struct coll_async_tcp *tcp, struct conn *conn)
{
    struct link *link = &conn->peer->links[conn->link];

    if (conn->peer->id > tcp->config.self) {
        conn_fail(tcp, conn, "handshake: a higher id yielded", -EPROTO);
        return;
    }
    link->conn = NULL;
    link->waiting = true;
    conn_close(tcp, conn);
}

/* Receiving */

static struct coll_async_transfer *find_posted(struct coll_async_tcp_peer *peer, uint64_t tag)
{
    for (struct coll_async_transfer *op = peer->posted; NULL != op; op = op->next) {
        if (op_of(op)->tag == tag) {
            return op;
        }
    }
    return NULL;
}

static struct unexpected *find_unexpected(struct coll_async_tcp_peer *peer, uint64_t tag)
{
    for (struct unexpected *u = peer->unexpected; NULL != u; u = u->next) {
        if (u->tag == tag) {
            return u;
        }
    }
    return NULL;
}

static void posted_remove(struct coll_async_tcp_peer *peer, struct coll_async_transfer *op)
{
    for (struct coll_async_transfer **p = &peer->posted; NULL != *p; p = &(*p)->next) {
        if (*p == op) {
            *p = op->next;
            return;
        }
    }
}

static void recv_finish(struct coll_async_tcp *tcp, struct coll_async_transfer *op)
{
    if (NULL != op_of(op)->staging) {
        memcpy(op_of(op)->buffer, op_of(op)->staging, op->bytes);
        tcp->staged -= op->bytes;
        free(op_of(op)->staging);
        op_of(op)->staging = NULL;
    }
    op_release(tcp, op);
}

/* Staging for a chunk whose receive is not posted: NULL with -EAGAIN while the
 * transfer does not fit under staging_limit (back-pressure), -ENOMEM, or
 * -EPROTO for a total other than the transfer's first chunk said. */
static char *unexpected_target(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer,
                               const struct frame *frame, int *rc)
{
    struct unexpected *u = find_unexpected(peer, frame->tag);

    if (NULL == u) {
        if (frame->total > tcp->config.staging_limit - tcp->staged) {
            *rc = -EAGAIN;
            return NULL;
        }
        u = calloc(1, sizeof(*u));
        if (NULL == u || NULL == (u->staging = malloc(frame->total ? frame->total : 1))) {
            free(u);
            *rc = -ENOMEM;
            return NULL;
        }
        u->tag = frame->tag;
        u->total = frame->total;
        u->next = peer->unexpected;
        peer->unexpected = u;
        tcp->staged += u->total;
    }
    *rc = u->total == frame->total ? 0 : -EPROTO;
    return u->staging;
}

/* Where a chunk's payload goes: the posted buffer, or staging. 0, -EAGAIN (no
 * staging room yet), -ENOMEM or -EPROTO. */
static int chunk_target(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer,
                        const struct frame *frame, char **dst)
{
    struct coll_async_transfer *op = find_posted(peer, frame->tag);
    int rc = 0;

    if (NULL == op) {
        *dst = unexpected_target(tcp, peer, frame, &rc);
    } else if (!op_of(op)->has_total) {
        op_of(op)->has_total = true;
        op->bytes = frame->total;
        *dst = op_of(op)->buffer;
        rc = frame->total <= op_of(op)->length ? 0 : -EPROTO;
    } else {
        *dst = NULL != op_of(op)->staging ? op_of(op)->staging : op_of(op)->buffer;
        rc = frame->total == op->bytes ? 0 : -EPROTO;
    }
    if (0 == rc) {
        *dst += frame->offset;
    }
    return rc;
}

static void chunk_arrived(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer,
                          const struct frame *frame)
{
    struct coll_async_transfer *op = find_posted(peer, frame->tag);
    struct unexpected *u;

    if (NULL != op) {
        op_of(op)->received += frame->length;
        if (op_of(op)->received == op->bytes) {
            posted_remove(peer, op);
            recv_finish(tcp, op);
        }
    } else if (NULL != (u = find_unexpected(peer, frame->tag))) {
        u->received += frame->length;
    }
}

static void frame_end(struct coll_async_tcp *tcp, struct conn *conn)
{
    const struct frame *frame = &conn->rx_frame;
    struct coll_async_tcp_peer *peer = conn->peer;

    conn->rx_in_payload = false;
    if (CONN_ACCEPTED == conn->state) {
        conn_hello(tcp, conn);
    } else if (CONN_CONNECTED == conn->state) {
        conn_challenged(tcp, conn);
    } else if (CONN_HELLO_SENT == conn->state && FRAME_YIELD == frame->type) {
        conn_yielded(tcp, conn);
    } else if (CONN_HELLO_SENT == conn->state) {
        conn_ack(tcp, conn);
    } else {
        chunk_arrived(tcp, peer, frame);
    }
}

/* The handshake frame each state waits for, and its payload's length. */
static bool handshake_expects(enum conn_state state, uint8_t *type, uint32_t *length)
{
    switch (state) {
    case CONN_ACCEPTED:
        *type = FRAME_HELLO;
        *length = COLL_ASYNC_TCP_HELLO_BYTES;
        return true;
    case CONN_CONNECTED:
        *type = FRAME_CHALLENGE;
        *length = COLL_ASYNC_TCP_CHALLENGE_BYTES;
        return true;
    case CONN_HELLO_SENT:
        *type = FRAME_ACK;
        *length = COLL_ASYNC_TCP_ACK_BYTES;
        return true;
    default:
        return false;
    }
}

/* Why a frame breaks the protocol (written into why), or NULL: the header's
 * bounds, before a byte of its payload is read or any memory set aside. */
static const char *frame_check(const struct conn *conn,
                               const struct frame *frame, char *why, size_t size)
{
    uint8_t type;
    uint32_t length;

    if (CONN_HELLO_SENT == conn->state && FRAME_YIELD == frame->type) {
        type = FRAME_YIELD;
        length = 0;
    } else if (!handshake_expects(conn->state, &type, &length)) {
        type = 0;
    }
    if (0 != type) {
        if (frame->type != type || frame->length != length || frame->reserved_set
            || 0 != (frame->tag | frame->offset | frame->total)) {
            snprintf(why, size, "handshake: a frame of type %u and %u bytes where a %s was due",
                     frame->type, frame->length,
                     FRAME_HELLO == type       ? "hello"
                     : FRAME_CHALLENGE == type ? "challenge"
                                               : "ack or yield");
            return why;
        }
        return NULL;
    }
    if (CONN_PROVEN == conn->state) {
        return "receive: a frame before this process acknowledged the peer's hello";
    }
    if (frame->reserved_set) {
        return "receive: a frame whose reserved fields are not zero";
    }
    if (FRAME_CHUNK != frame->type) {
        snprintf(why, size, "receive: a frame of unknown type %u", frame->type);
        return why;
    }
    if (frame->total > MAX_TRANSFER || frame->offset > frame->total
        || frame->length > frame->total - frame->offset) {
        snprintf(why, size, "receive: a chunk of %u bytes at %llu, past its transfer's %llu bytes",
                 frame->length, (unsigned long long) frame->offset,
                 (unsigned long long) frame->total);
        return why;
    }
    return NULL;
}

static void payload_begin(struct coll_async_tcp *tcp, struct conn *conn, char *dst)
{
    conn->rx_dst = dst;
    conn->rx_in_payload = true;
    conn->rx_have = 0;
    if (0 == conn->rx_frame.length) {
        frame_end(tcp, conn);
    }
}

/* Where a data frame's payload goes, or a failure of the peer. -EAGAIN: a chunk
 * that must wait for staging room (the caller stalls the connection). */
static int data_target(struct coll_async_tcp *tcp, struct conn *conn, char **dst)
{
    const struct frame *frame = &conn->rx_frame;
    int rc = chunk_target(tcp, conn->peer, frame, dst);

    if (0 != rc && -EAGAIN != rc) {
        conn_fail(tcp, conn,
                  -EPROTO == rc ? "receive: a bulk transfer longer than the receive posted for "
                                  "its tag, or of two lengths"
                                : "receive",
                  rc);
    }
    return rc;
}

/* Acts on a complete header: checks it, then sets up where its payload goes. */
static void frame_begin(struct coll_async_tcp *tcp, struct conn *conn)
{
    struct frame *frame = &conn->rx_frame;
    char why[160], *dst = NULL;
    const char *broken;
    int rc;

    decode_frame(conn->rx_header, frame);
    conn->rx_header_have = 0;
    broken = frame_check(conn, frame, why, sizeof(why));
    if (NULL != broken) {
        conn_fail(tcp, conn, broken, -EPROTO); /* unproven: refused, no peer disturbed */
        return;
    }
    if (CONN_ESTABLISHED != conn->state) {
        payload_begin(tcp, conn, (char *) conn->handshake); /* frame_check: its length fits */
        return;
    }
    rc = data_target(tcp, conn, &dst);
    if (-EAGAIN == rc) {
        conn->stalled = true;
        ++tcp->stalled;
        (void) conn_set_events(tcp, conn, conn->events);
    } else if (0 == rc) {
        payload_begin(tcp, conn, dst);
    }
}

/* A stalled connection's chunk, once its receive is posted or staging has room. */
static bool conn_resume(struct coll_async_tcp *tcp, struct conn *conn)
{
    char *dst = NULL;
    int rc = data_target(tcp, conn, &dst);

    if (-EAGAIN == rc || CONN_CLOSED == conn->state) {
        return false;
    }
    conn->stalled = false;
    --tcp->stalled;
    (void) conn_set_events(tcp, conn, conn->events | EPOLLIN);
    payload_begin(tcp, conn, dst);
    conn_read(tcp, conn);
    return true;
}

static int resume_stalled(struct coll_async_tcp *tcp)
{
    int resumed = 0;

    for (struct coll_async_tcp_peer *peer = tcp->all_peers; NULL != peer; peer = peer->next) {
        for (int l = 0; l < peer->nlinks && 0 != tcp->stalled; ++l) {
            struct conn *conn = peer->links[l].conn;

            if (NULL != conn && conn->stalled && conn_resume(tcp, conn)) {
                ++resumed;
            }
        }
    }
    return resumed;
}

/* End of stream or an error. */
static void conn_closed(struct coll_async_tcp *tcp, struct conn *conn, int err)
{
    if (CONN_ACCEPTED == conn->state) {
        refuse(tcp, conn,
               0 == err ? "it closed before proving itself" : "it failed before proving itself");
        return;
    }
    if (0 == err) {
        conn_fail(tcp, conn, "receive: the peer closed the connection", -ECONNRESET);
        return;
    }
    conn_fail(tcp, conn, "receive", err);
}

/* One read: the rest of the payload, then up to STASH bytes of what follows into
 * the (empty) stash. *wanted: how many bytes it asked for. */
static ssize_t conn_read_once(struct conn *conn, size_t *wanted)
{
    struct iovec iov[2];
    int count = 0;
    ssize_t n;

    if (conn->rx_in_payload) {
        iov[count++] = (struct iovec){conn->rx_dst + conn->rx_have,
                                      conn->rx_frame.length - conn->rx_have};
    }
    iov[count++] = (struct iovec){conn->rx_stash, STASH};
    *wanted = iov[0].iov_len + (2 == count ? iov[1].iov_len : 0);
    do {
        n = readv(conn->fd, iov, count);
    } while (n < 0 && EINTR == errno);
    return n < 0 ? -errno : n;
}

/* n bytes read: the payload's part is in place, the rest in the stash. */
static void conn_consume(struct coll_async_tcp *tcp, struct conn *conn, size_t n)
{
    size_t taken = 0;

    if (conn->rx_in_payload) {
        size_t want = conn->rx_frame.length - conn->rx_have;

        taken = n < want ? n : want;
        conn->rx_have += taken;
    }
    conn->rx_stash_at = 0;
    conn->rx_stash_len = n - taken;
    if (conn->rx_in_payload && conn->rx_have == conn->rx_frame.length) {
        frame_end(tcp, conn);
    }
}

/* Moves stashed bytes into the payload or the header. */
static void conn_unstash(struct coll_async_tcp *tcp, struct conn *conn)
{
    size_t have = conn->rx_stash_len - conn->rx_stash_at, n;
    const uint8_t *from = conn->rx_stash + conn->rx_stash_at;

    if (conn->rx_in_payload) {
        n = conn->rx_frame.length - conn->rx_have;
        n = have < n ? have : n;
        memcpy(conn->rx_dst + conn->rx_have, from, n);
        conn->rx_have += n;
    } else {
        n = HEADER - conn->rx_header_have;
        n = have < n ? have : n;
        memcpy(conn->rx_header + conn->rx_header_have, from, n);
        conn->rx_header_have += n;
    }
    conn->rx_stash_at += n;
    if (conn->rx_in_payload && conn->rx_have == conn->rx_frame.length) {
        frame_end(tcp, conn);
    }
}

/* Reads until the socket is drained or the budget spent; stashed bytes are always
 * taken before returning, since epoll cannot say they are there. */
static void conn_read(struct coll_async_tcp *tcp, struct conn *conn)
{
    size_t budget = READ_BUDGET;
    bool drained = false;

    while (CONN_CLOSED != conn->state && !conn->stalled) {
        size_t wanted;
        ssize_t n;

        if (!conn->rx_in_payload && HEADER == conn->rx_header_have) {
            frame_begin(tcp, conn);
            continue;
        }
        if (conn->rx_stash_at < conn->rx_stash_len) {
            conn_unstash(tcp, conn);
            continue;
        }
        if (drained || 0 == budget) {
            return; /* drained: epoll (level-triggered) says when more comes */
        }
        n = conn_read_once(conn, &wanted);
        if (-EAGAIN == n || -EWOULDBLOCK == n) {
            return;
        }
        if (n <= 0) {
            conn_closed(tcp, conn, (int) n);
            return;
        }
        if (NULL != conn->peer && conn->link >= 0) {
            conn->peer->links[conn->link].bytes_received += (uint64_t) n;
        }
        drained = (size_t) n < wanted;
        conn_consume(tcp, conn, (size_t) n);
        budget -= (size_t) n < budget ? (size_t) n : budget;
    }
}

/* Progress */

static void dispatch(struct coll_async_tcp *tcp, const struct epoll_event *ev)
{
    enum pollable *kind = ev->data.ptr;
    struct conn *conn = (struct conn *) kind;

    if (POLL_LISTENER == *kind) {
        accept_some(tcp, (struct listener *) kind);
        return;
    }
    if (CONN_CLOSED == conn->state) {
        return; /* closed by an earlier event of this call */
    }
    if (CONN_CONNECTING == conn->state) {
        conn_connected(tcp, conn);
        return;
    }
    if (ev->events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        conn_read(tcp, conn);
    }
    if ((ev->events & EPOLLOUT) && CONN_ESTABLISHED == conn->state) {
        conn_write(tcp, conn);
    }
}

static int tcp_progress(struct coll_async_transport *transport)
{
    struct coll_async_tcp *tcp = (struct coll_async_tcp *) transport;
    struct epoll_event events[EVENTS_PER_PROGRESS];
    int n = epoll_wait(tcp->epfd, events, EVENTS_PER_PROGRESS, 0);

    int resumed = 0;

    for (int i = 0; i < n; ++i) {
        dispatch(tcp, &events[i]);
    }
    if (0 != tcp->stalled) {
        resumed = resume_stalled(tcp);
    }
    if (0 != tcp->pending_links) {
        check_deadlines(tcp);
    }
    if (0 != tcp->nunproven) {
        check_unproven(tcp);
    }
    bury(tcp);
    return (n > 0 ? n : 0) + resumed + coll_async_transfer_complete_all(&tcp->done);
}

static int tcp_fd(const struct coll_async_transport *transport)
{
    return ((const struct coll_async_tcp *) transport)->epfd;
}

/* Posting */

/* The peer an op may be posted to, or NULL with *rc set (and op->error when it failed). */
static struct coll_async_tcp_peer *peer_for_op(struct coll_async_tcp *tcp, uint32_t id,
                                               struct coll_async_transfer *op, int *rc)
{
    struct coll_async_tcp_peer *peer = peer_get(tcp, id);

    *rc = NULL == peer ? (id >= tcp->config.nprocs || id == tcp->config.self ? -EINVAL : -ENOMEM)
                       : peer->error;
    if (NULL != peer && 0 != peer->error) {
        op->error = peer->message;
        return NULL;
    }
    return peer;
}

/* Queues a bulk send: its chunks go over every link. */
static int tcp_send(struct coll_async_transport *transport, uint32_t id, uint64_t tag,
                    const void *data, size_t length, struct coll_async_transfer *op)
{
    struct coll_async_tcp *tcp = (struct coll_async_tcp *) transport;
    struct coll_async_tcp_peer *peer;
    int rc;

    if (NULL == (peer = peer_for_op(tcp, id, op, &rc))) {
        return rc;
    }
    if (0 == peer->routable && NULL == peer->links[0].conn) {
        return -EHOSTUNREACH;
    }
    op_start(op, peer, tag, data, length);
    op_of(op)->queued = true;
    coll_async_transfer_push(&peer->bulk, op);
    peer_kick(tcp, peer, peer->nlinks);
    return 0;
}

/* A receive posted after its transfer began takes over the staging buffer. */
static int recv_adopt(struct coll_async_tcp_peer *peer, struct coll_async_transfer *op)
{
    struct unexpected **p = &peer->unexpected, *u;

    while (NULL != *p && (*p)->tag != op_of(op)->tag) {
        p = &(*p)->next;
    }
    if (NULL == (u = *p)) {
        return 0;
    }
    if (u->total > op_of(op)->length) {
        return -EMSGSIZE;
    }
    *p = u->next;
    op_of(op)->has_total = true;
    op->bytes = u->total;
    op_of(op)->received = u->received;
    op_of(op)->staging = u->staging;
    free(u);
    return 0;
}

static int tcp_recv(struct coll_async_transport *transport, uint32_t id, uint64_t tag,
                    void *buffer, size_t length, struct coll_async_transfer *op)
{
    struct coll_async_tcp *tcp = (struct coll_async_tcp *) transport;
    struct coll_async_tcp_peer *peer;
    int rc;

    if (NULL == (peer = peer_for_op(tcp, id, op, &rc))) {
        return rc;
    }
    if (NULL != find_posted(peer, tag)) {
        return -EBUSY;
    }
    op_start(op, peer, tag, buffer, length);
    if (0 != (rc = recv_adopt(peer, op))) {
        return rc;
    }
    if (op_of(op)->has_total && op_of(op)->received == op->bytes) {
        recv_finish(tcp, op);
        return 0;
    }
    op->next = peer->posted;
    peer->posted = op;
    /* A receiver connects too: a sender that dies before it connects then
     * fails the receive (refused, reset) instead of leaving it waiting. */
    peer_kick(tcp, peer, 1);
    return 0;
}

/* Addresses */

int coll_async_tcp_address_encode(const struct coll_async_tcp_addr *addrs, int count, void *blob,
                                  size_t size)
{
    uint8_t *p = blob;

    if (count < 0 || count > COLL_ASYNC_TCP_MAX_IFS) {
        return -EINVAL;
    }
    if (size < 4 + 8 * (size_t) count) {
        return -ENOSPC;
    }
    p[0] = ADDRESS_MAGIC0;
    p[1] = ADDRESS_MAGIC1;
    p[2] = ADDRESS_VERSION;
    p[3] = (uint8_t) count;
    for (int i = 0; i < count; ++i, p += 8) {
        memcpy(p + 4, &addrs[i].addr.s_addr, 4); /* already network order */
        p[8] = (uint8_t) (addrs[i].port >> 8);
        p[9] = (uint8_t) addrs[i].port;
        p[10] = addrs[i].prefix;
        p[11] = 0;
    }
    return 4 + 8 * count;
}

int coll_async_tcp_address_decode(const void *blob, size_t length,
                                  struct coll_async_tcp_addr *addrs, int max)
{
    const uint8_t *p = blob;
    int count;

    if (length < 4 || ADDRESS_MAGIC0 != p[0] || ADDRESS_MAGIC1 != p[1]
        || ADDRESS_VERSION != p[2]) {
        return -EINVAL;
    }
    count = p[3];
    if (count > max || length != 4 + 8 * (size_t) count) {
        return -EINVAL;
    }
    for (int i = 0; i < count; ++i, p += 8) {
        memcpy(&addrs[i].addr.s_addr, p + 4, 4);
        addrs[i].port = (uint16_t) (p[8] << 8 | p[9]);
        addrs[i].prefix = p[10];
        if (addrs[i].prefix > 32 || 0 == addrs[i].port) {
            return -EINVAL;
        }
    }
    return count;
}

static int tcp_address(const struct coll_async_transport *transport, void *blob, size_t size)
{
    const struct coll_async_tcp *tcp = (const struct coll_async_tcp *) transport;

    return coll_async_tcp_address_encode(tcp->self, tcp->config.nifs, blob, size);
}

static int tcp_add_peer(struct coll_async_transport *transport, uint32_t id,
                        const struct coll_async_key *key, const void *blob, size_t length)
{
    struct coll_async_tcp *tcp = (struct coll_async_tcp *) transport;
    struct coll_async_tcp_addr addrs[COLL_ASYNC_TCP_MAX_IFS];
    struct coll_async_tcp_peer *peer;
    int count = coll_async_tcp_address_decode(blob, length, addrs, COLL_ASYNC_TCP_MAX_IFS);

    if (count <= 0 || id >= tcp->config.nprocs || id == tcp->config.self) {
        return -EINVAL;
    }
    peer = peer_get(tcp, id);
    if (NULL == peer) {
        return -ENOMEM;
    }
    if (0 != peer->routable) {
        return -EEXIST;
    }
    peer->key = *key;
    peer->has_key = true;
    peer_route(tcp, peer, addrs, count);
    for (int l = 0; l < peer->nlinks; ++l) {
        struct conn *conn = peer->links[l].conn;

        if (NULL != conn && CONN_PROVEN == conn->state) {
            conn_send_ack(tcp, conn); /* it connected before this process knew its key */
        }
    }
    return 0;
}

/* Set-up and teardown */

static int listen_on(struct coll_async_tcp *tcp, int i)
{
    struct sockaddr_in sa = sockaddr_of(tcp->ifs[i].addr, 0);
    socklen_t len = sizeof(sa);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &tcp->listeners[i]};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        return -errno;
    }
    tcp->listeners[i].kind = POLL_LISTENER;
    tcp->listeners[i].fd = fd;
    if (0 != bind(fd, (struct sockaddr *) &sa, sizeof(sa)) || 0 != listen(fd, SOMAXCONN)
        || 0 != getsockname(fd, (struct sockaddr *) &sa, &len)
        || 0 != epoll_ctl(tcp->epfd, EPOLL_CTL_ADD, fd, &ev)) {
        return -errno;
    }
    tcp->self[i].addr = tcp->ifs[i].addr;
    tcp->self[i].port = ntohs(sa.sin_port);
    tcp->self[i].prefix = tcp->ifs[i].prefix;
    return 0;
}

static void config_defaults(struct coll_async_tcp_config *config)
{
    if (0 == config->chunk_size) {
        config->chunk_size = DEFAULT_CHUNK;
    }
    if (config->max_links <= 0 || config->max_links > COLL_ASYNC_TCP_MAX_LINKS) {
        config->max_links = COLL_ASYNC_TCP_MAX_LINKS;
    }
    if (config->connect_timeout_ms <= 0) {
        config->connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
    }
    if (0 == config->staging_limit) {
        config->staging_limit = DEFAULT_STAGING_LIMIT;
    }
    if (config->max_unproven <= 0) {
        config->max_unproven = DEFAULT_MAX_UNPROVEN;
    }
    if (config->chunk_size > UINT32_MAX) {
        config->chunk_size = 0; /* frame lengths are 32-bit */
    }
}

static void tcp_destroy(struct coll_async_transport *transport);

static const struct coll_async_transport_ops tcp_ops = {
    .name = "tcp",
    .destroy = tcp_destroy,
    .progress = tcp_progress,
    .fd = tcp_fd,
    .address = tcp_address,
    .add_peer = tcp_add_peer,
    .send = tcp_send,
    .recv = tcp_recv,
};

int coll_async_tcp_create(struct coll_async_tcp **out, const struct coll_async_tcp_config *config)
{
    struct coll_async_tcp *tcp;
    int rc = -ENOMEM;

    *out = NULL;
    if (config->nifs < 1 || config->nifs > COLL_ASYNC_TCP_MAX_IFS
        || config->self >= config->nprocs) {
        return -EINVAL;
    }
    tcp = calloc(1, sizeof(*tcp));
    if (NULL == tcp) {
        return -ENOMEM;
    }
    tcp->transport.ops = &tcp_ops;
    tcp->config = *config;
    config_defaults(&tcp->config);
    memcpy(tcp->ifs, config->ifs, sizeof(tcp->ifs[0]) * (size_t) config->nifs);
    tcp->config.ifs = tcp->ifs;
    tcp->refusals.say = config->on_refused;
    tcp->refusals.context = config->context;
    for (int i = 0; i < COLL_ASYNC_TCP_MAX_IFS; ++i) {
        tcp->listeners[i].fd = -1;
    }
    tcp->peers = calloc(config->nprocs, sizeof(*tcp->peers));
    tcp->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (NULL == tcp->peers || tcp->epfd < 0 || 0 == tcp->config.chunk_size) {
        rc = NULL == tcp->peers ? -ENOMEM : tcp->epfd < 0 ? -errno : -EINVAL;
        goto fail;
    }
    for (int i = 0; i < config->nifs; ++i) {
        if (0 != (rc = listen_on(tcp, i))) {
            goto fail;
        }
    }
    *out = tcp;
    return 0;
fail:
    tcp_destroy(&tcp->transport);
    return rc;
}

static void tcp_destroy(struct coll_async_transport *transport)
{
    struct coll_async_tcp *tcp = (struct coll_async_tcp *) transport;

    if (NULL == tcp) {
        return;
    }
    for (struct coll_async_tcp_peer *peer = tcp->all_peers; NULL != peer; peer = peer->next) {
        peer_fail(tcp, peer, 0, "transport closed", -ECANCELED);
    }
    coll_async_transfer_complete_all(&tcp->done);
    while (NULL != tcp->unproven) {
        conn_close(tcp, tcp->unproven);
    }
    bury(tcp);
    while (NULL != tcp->all_peers) {
        struct coll_async_tcp_peer *peer = tcp->all_peers;

        tcp->all_peers = peer->next;
        free(peer);
    }
    for (int i = 0; i < COLL_ASYNC_TCP_MAX_IFS; ++i) {
        if (tcp->listeners[i].fd >= 0) {
            close(tcp->listeners[i].fd);
        }
    }
    if (tcp->epfd >= 0) {
        close(tcp->epfd);
    }
    free(tcp->peers);
    free(tcp);
}

/* Counters */

int coll_async_tcp_connections(const struct coll_async_tcp *tcp)
{
    return tcp->connections;
}

void coll_async_tcp_guard_stats(const struct coll_async_tcp *tcp,
                                struct coll_async_tcp_guard_stats *stats)
{
    stats->unproven = tcp->nunproven;
    stats->refused = tcp->refusals.count;
    stats->stalled = tcp->stalled;
    stats->staged = tcp->staged;
}

int coll_async_tcp_link_stats(const struct coll_async_tcp *tcp, uint32_t id,
                              struct coll_async_tcp_link_stats *stats, int max)
{
    const struct coll_async_tcp_peer *peer = id < tcp->config.nprocs ? tcp->peers[id] : NULL;

    if (NULL == peer) {
        return 0;
    }
    for (int l = 0; l < peer->nlinks && l < max; ++l) {
        const struct link *link = &peer->links[l];

        stats[l].connected = NULL != link->conn;
        stats[l].established = NULL != link->conn && CONN_ESTABLISHED == link->conn->state;
        stats[l].bytes_sent = link->bytes_sent;
        stats[l].bytes_received = link->bytes_received;
    }
    return peer->nlinks;
}
