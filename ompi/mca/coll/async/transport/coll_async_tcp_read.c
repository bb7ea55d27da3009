/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the TCP transport: receiving: chunks matched to receives or
 * staged, frame checks, reading (see coll_async_tcp_internal.h).
 */

#define _GNU_SOURCE

#include "coll_async_tcp_internal.h"

/* Receiving */

/* The transfer of tag in the list that starts at first (linked through next). */
static struct coll_async_transfer *find_tagged(struct coll_async_transfer *first, uint64_t tag)
{
    for (struct coll_async_transfer *op = first; NULL != op; op = op->next) {
        if (op_of(op)->tag == tag) {
            return op;
        }
    }
    return NULL;
}

struct coll_async_transfer *tcp_find_posted(struct coll_async_tcp_peer *peer, uint64_t tag)
{
    return find_tagged(peer->posted, tag);
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

void tcp_recv_finish(struct coll_async_tcp *tcp, struct coll_async_transfer *op)
{
    if (NULL != op_of(op)->staging) { /* its bytes were copied out as its chunks ended */
        tcp->staged -= op->bytes;
        coll_async_scratch_give(op_of(op)->staging);
        op_of(op)->staging = NULL;
    }
    tcp_op_release(tcp, op);
}

/* Staging for a chunk whose receive is not posted: NULL with -EAGAIN while the
 * transfer does not fit under staging_limit (back-pressure), -ENOMEM, -EPROTO
 * for a total other than the transfer's first chunk said, or -ENOMSG for a
 * chunk of an announced transfer (its sender waits for the CTS). */
static char *unexpected_target(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer,
                               const struct frame *frame, int *rc)
{
    struct unexpected *u = find_unexpected(peer, frame->tag);

    if (NULL != u && u->announced) {
        *rc = -ENOMSG;
        return NULL;
    }
    if (NULL == u) {
        if (frame->total > tcp->config.staging_limit - tcp->staged) {
            *rc = -EAGAIN;
            return NULL;
        }
        u = calloc(1, sizeof(*u));
        if (NULL == u || NULL == (u->staging = coll_async_scratch_take(frame->total))) {
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
    if (0 == *rc && frame->offset + frame->length > u->end) {
        u->end = frame->offset + frame->length; /* frame_check: within total */
    }
    return u->staging;
}

/* Where a chunk's payload goes: the posted buffer, or staging. 0, -EAGAIN (no
 * staging room yet), -ENOMEM, -EPROTO or -ENOMSG (unexpected_target's). */
static int chunk_target(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer,
                        const struct frame *frame, char **dst)
{
    struct coll_async_transfer *op = tcp_find_posted(peer, frame->tag);
    int rc = 0;

    if (NULL == op) {
        *dst = unexpected_target(tcp, peer, frame, &rc);
    } else if (!op_of(op)->has_total) {
        op_of(op)->has_total = true;
        op->bytes = frame->total;
        *dst = op_of(op)->buffer;
        rc = frame->total <= op_of(op)->length ? 0 : -EPROTO;
    } else {
        *dst = op_of(op)->buffer;
        rc = frame->total == op->bytes ? 0 : -EPROTO;
    }
    if (0 == rc) {
        *dst += frame->offset;
    }
    return rc;
}

/* A chunk's payload is in, at landed (its offset in the buffer or staging). */
static void chunk_arrived(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer,
                          const struct frame *frame, const char *landed)
{
    struct coll_async_transfer *op = tcp_find_posted(peer, frame->tag);
    struct unexpected *u;

    if (NULL != op) {
        if (NULL != op_of(op)->staging && landed == op_of(op)->staging + frame->offset) {
            /* Begun before the post, ended after it: the post's copy took part of it. */
            memcpy(op_of(op)->buffer + frame->offset, landed, frame->length);
            tcp->staging_copied += frame->length;
        }
        op_of(op)->received += frame->length;
        if (op_of(op)->received == op->bytes) {
            posted_remove(peer, op);
            tcp_recv_finish(tcp, op);
        }
    } else if (NULL != (u = find_unexpected(peer, frame->tag))) {
        u->received += frame->length;
    }
}

/* An announced transfer: its receive gets a CTS now or when it is posted. */
static void rts_arrived(struct coll_async_tcp *tcp, struct conn *conn, const struct frame *frame)
{
    struct coll_async_tcp_peer *peer = conn->peer;
    struct coll_async_transfer *op = tcp_find_posted(peer, frame->tag);
    struct unexpected *u;

    if (NULL != op) {
        if (op_of(op)->has_total || frame->total > op_of(op)->length) {
            tcp_conn_fail(tcp, conn,
                          "receive: an RTS longer than its receive, or for a transfer under way",
                          -EPROTO);
            return;
        }
        op_of(op)->has_total = true;
        op->bytes = frame->total;
        if (0 != tcp_queue_cts(peer, frame->tag)) {
            tcp_conn_fail(tcp, conn, "receive", -ENOMEM);
            return;
        }
        tcp_peer_kick(tcp, peer, peer->nlinks); /* whichever link is free first */
        return;
    }
    if (NULL != find_unexpected(peer, frame->tag)) {
        tcp_conn_fail(tcp, conn, "receive: an RTS for a transfer already under way", -EPROTO);
        return;
    }
    if (peer->nannounced >= MAX_ANNOUNCED) {
        tcp_conn_fail(tcp, conn, "receive: an RTS past the most announced transfers a peer may "
                                 "have waiting for their receives", -EPROTO);
        return;
    }
    if (NULL == (u = calloc(1, sizeof(*u)))) {
        tcp_conn_fail(tcp, conn, "receive", -ENOMEM);
        return;
    }
    u->tag = frame->tag;
    u->total = frame->total;
    u->announced = true;
    u->next = peer->unexpected;
    peer->unexpected = u;
    ++peer->nannounced;
}

/* The receiver posted: an announced send's chunks may go. */
static void cts_arrived(struct coll_async_tcp *tcp, struct conn *conn, const struct frame *frame)
{
    struct coll_async_tcp_peer *peer = conn->peer;
    struct coll_async_transfer *op = find_tagged(peer->awaiting.head, frame->tag);

    if (NULL == op) {
        tcp_conn_fail(tcp, conn, "receive: a CTS for no transfer announced", -EPROTO);
        return;
    }
    coll_async_transfer_remove(&peer->awaiting, op);
    coll_async_transfer_push(&peer->bulk, op);
    tcp_peer_kick(tcp, peer, peer->nlinks);
}

static void frame_end(struct coll_async_tcp *tcp, struct conn *conn)
{
    const struct frame *frame = &conn->rx_frame;
    struct coll_async_tcp_peer *peer = conn->peer;

    conn->rx_in_payload = false;
    if (CONN_ACCEPTED == conn->state) {
        tcp_conn_hello(tcp, conn);
    } else if (CONN_CONNECTED == conn->state) {
        tcp_conn_challenged(tcp, conn);
    } else if (CONN_HELLO_SENT == conn->state && FRAME_YIELD == frame->type) {
        tcp_conn_yielded(tcp, conn);
    } else if (CONN_HELLO_SENT == conn->state) {
        tcp_conn_ack(tcp, conn);
    } else if (FRAME_RTS == frame->type) {
        rts_arrived(tcp, conn, frame);
    } else if (FRAME_CTS == frame->type) {
        cts_arrived(tcp, conn, frame);
    } else {
        chunk_arrived(tcp, peer, frame, conn->rx_dst);
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
    if (FRAME_RTS == frame->type) {
        if (0 != frame->length || 0 != frame->offset || 0 == frame->total
            || frame->total > MAX_TRANSFER) {
            return "receive: an RTS with a payload, an offset, or a total of 0 or past the "
                   "largest transfer";
        }
        return NULL;
    }
    if (FRAME_CTS == frame->type) {
        if (0 != (frame->length | frame->offset | frame->total)) {
            return "receive: a CTS with a payload, an offset or a total";
        }
        return NULL;
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

    if (-ENOMSG == rc) {
        tcp_conn_fail(tcp, conn, "receive: a chunk of an announced transfer before its CTS",
                      -EPROTO);
    } else if (0 != rc && -EAGAIN != rc) {
        tcp_conn_fail(tcp, conn,
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

    tcp_decode_frame(conn->rx_header, frame);
    conn->rx_header_have = 0;
    broken = frame_check(conn, frame, why, sizeof(why));
    if (NULL != broken) {
        tcp_conn_fail(tcp, conn, broken, -EPROTO); /* unproven: refused, no peer disturbed */
        return;
    }
    if (CONN_ESTABLISHED != conn->state) {
        payload_begin(tcp, conn, (char *) conn->handshake); /* frame_check: its length fits */
        return;
    }
    if (FRAME_CHUNK != frame->type) {
        payload_begin(tcp, conn, NULL); /* no payload: frame_end at once */
        return;
    }
    rc = data_target(tcp, conn, &dst);
    if (-EAGAIN == rc) {
        conn->stalled = true;
        ++tcp->stalled;
        (void) tcp_conn_set_events(tcp, conn, conn->events);
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
    (void) tcp_conn_set_events(tcp, conn, conn->events | EPOLLIN);
    payload_begin(tcp, conn, dst);
    tcp_conn_read(tcp, conn);
    return true;
}

int tcp_resume_stalled(struct coll_async_tcp *tcp)
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
        tcp_refuse(tcp, conn,
                   0 == err ? "it closed before proving itself"
                            : "it failed before proving itself");
        return;
    }
    if (0 == err) {
        tcp_conn_fail(tcp, conn, "receive: the peer closed the connection", -ECONNRESET);
        return;
    }
    tcp_conn_fail(tcp, conn, "receive", err);
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
void tcp_conn_read(struct coll_async_tcp *tcp, struct conn *conn)
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
