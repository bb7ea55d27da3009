/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the TCP transport: sending frames, connecting, accepting, the
 * handshake (see coll_async_tcp_internal.h).
 */

#define _GNU_SOURCE

#include "coll_async_tcp_internal.h"

static void conn_challenge(struct coll_async_tcp *tcp, struct conn *conn);

/* Sending */

/* A CTS or an RTS for conn, ahead of any chunk: false if none is due. */
static bool conn_take_control(struct coll_async_tcp_peer *peer, struct conn *conn)
{
    struct coll_async_transfer *op;
    struct frame frame = {0};

    if (peer->ncts > 0) {
        frame.type = FRAME_CTS;
        frame.tag = peer->cts[0];
        memmove(peer->cts, peer->cts + 1, (size_t) --peer->ncts * sizeof(*peer->cts));
    } else if (NULL != (op = coll_async_transfer_pop(&peer->announce))) {
        frame.type = FRAME_RTS;
        frame.tag = op_of(op)->tag;
        frame.total = op_of(op)->length;
        coll_async_transfer_push(&peer->awaiting, op);
    } else {
        return false;
    }
    tcp_encode_frame(conn->tx_header, &frame);
    conn->tx_control = true;
    conn->tx_length = 0;
    conn->tx_done = 0;
    return true;
}

/* Queues a CTS for tag; the caller kicks the peer's links once its own state is
 * consistent (writing may fail the peer). */
int tcp_queue_cts(struct coll_async_tcp_peer *peer, uint64_t tag)
{
    if (peer->ncts == peer->cts_capacity) {
        int capacity = peer->cts_capacity ? 2 * peer->cts_capacity : 16;
        uint64_t *cts = realloc(peer->cts, (size_t) capacity * sizeof(*cts));

        if (NULL == cts) {
            return -ENOMEM;
        }
        peer->cts = cts;
        peer->cts_capacity = capacity;
    }
    peer->cts[peer->ncts++] = tag;
    return 0;
}

/* Takes the next frame for conn: a control frame, else a chunk. */
static bool conn_take_frame(struct coll_async_tcp *tcp, struct conn *conn)
{
    struct coll_async_tcp_peer *peer = conn->peer;
    struct coll_async_transfer *op;
    struct frame frame = {0};

    if (conn_take_control(peer, conn)) {
        return true;
    }
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
    tcp_encode_frame(conn->tx_header, &frame);
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
void tcp_conn_write(struct coll_async_tcp *tcp, struct conn *conn)
{
    size_t budget = tcp->config.chunk_size;
    struct link *link = &conn->peer->links[conn->link];

    while (CONN_ESTABLISHED == conn->state) {
        struct coll_async_transfer *op;
        ssize_t n;

        if (NULL == conn->tx_op && !conn->tx_control && !conn_take_frame(tcp, conn)) {
            (void) tcp_conn_set_events(tcp, conn, EPOLLIN);
            return;
        }
        n = conn_send_frame(conn);
        if (-EAGAIN == n || -EWOULDBLOCK == n) {
            (void) tcp_conn_set_events(tcp, conn, EPOLLIN | EPOLLOUT);
            return;
        }
        if (n < 0) {
            tcp_conn_fail(tcp, conn, "send", (int) n);
            return;
        }
        link->bytes_sent += (uint64_t) n;
        conn->tx_done += (size_t) n;
        if (conn->tx_done < HEADER + conn->tx_length) {
            continue;
        }
        if (conn->tx_control) {
            conn->tx_control = false;
            continue;
        }
        op = conn->tx_op;
        conn->tx_op = NULL;
        --op_of(op)->in_flight;
        tcp_op_release(tcp, op);
        if ((size_t) n >= budget) {
            (void) tcp_conn_set_events(tcp, conn, EPOLLIN | EPOLLOUT); /* come back for more */
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

    tcp_encode_frame(data, &frame);
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

void tcp_conn_connected(struct coll_async_tcp *tcp, struct conn *conn)
{
    int err = 0, rc;
    socklen_t len = sizeof(err);

    if (0 != getsockopt(conn->fd, SOL_SOCKET, SO_ERROR, &err, &len)) {
        err = errno;
    }
    if (0 != err) {
        tcp_conn_fail(tcp, conn, "connect", -err);
        return;
    }
    conn->state = CONN_CONNECTED;
    rc = tcp_conn_set_events(tcp, conn, EPOLLIN);
    if (0 != rc) {
        tcp_conn_fail(tcp, conn, "connect", rc);
    }
}

/* Opens a socket bound to the link's local interface and starts connecting. */
static int link_socket(struct coll_async_tcp *tcp, struct link *link, struct sockaddr_in *local,
                       bool *done)
{
    struct sockaddr_in remote = tcp_sockaddr_of(link->remote.addr, link->remote.port);
    socklen_t len = sizeof(*local);
    int fd, rc;

    *local = tcp_sockaddr_of(tcp->ifs[link->local_if].addr, 0);
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
        tcp_peer_fail(tcp, peer, l, "connect", fd);
        return;
    }
    conn = tcp_conn_new(tcp, fd, CONN_CONNECTING, EPOLLOUT);
    if (NULL == conn) {
        close(fd);
        tcp_peer_fail(tcp, peer, l, "connect", -ENOMEM);
        return;
    }
    conn->peer = peer;
    conn->link = l;
    conn->local = local;
    conn->remote = tcp_sockaddr_of(link->remote.addr, link->remote.port);
    link->conn = conn;
    tcp_link_arm(tcp, link);
    if (done) {
        tcp_conn_connected(tcp, conn);
    }
}

/* Connects the first want links that have none, and lets the established ones write. */
void tcp_peer_kick(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer, int want)
{
    for (int l = 0; l < want && 0 == peer->error; ++l) {
        struct link *link = &peer->links[l];

        if (NULL == link->conn && !link->waiting && l < peer->routable) {
            link_connect(tcp, peer, l);
        } else if (NULL != link->conn && CONN_ESTABLISHED == link->conn->state) {
            tcp_conn_write(tcp, link->conn);
        }
    }
}

/* Accepting */

void tcp_accept_some(struct coll_async_tcp *tcp, struct listener *listener)
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
        tcp_unproven_make_room(tcp);
        conn = socket_nodelay(fd) ? NULL : tcp_conn_new(tcp, fd, CONN_ACCEPTED, EPOLLIN);
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
    if (CONN_ESTABLISHED == mine->state || !tcp_self_lower(tcp, peer)) {
        return false;
    }
    tcp_conn_close(tcp, mine);
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
        tcp_refuse(tcp, conn, "could not send the challenge");
    }
}

/* The connector's answer: its hello, with its proof under the acceptor's key. */
void tcp_conn_challenged(struct coll_async_tcp *tcp, struct conn *conn)
{
    struct coll_async_tcp_peer *peer = conn->peer;
    uint8_t payload[COLL_ASYNC_TCP_HELLO_BYTES];
    int rc;

    if (0 != coll_async_tcp_challenge_decode(conn->handshake, conn->challenge)) {
        tcp_conn_fail(tcp, conn, "handshake: the peer speaks another protocol version", -EPROTO);
        return;
    }
    conn->hello = (struct coll_async_tcp_hello){.from = tcp->name,
                                                .to = peer->name,
                                                .link = (uint8_t) conn->link,
                                                .nlinks = (uint8_t) peer->nlinks};
    rc = coll_async_random(conn->hello.nonce, sizeof(conn->hello.nonce));
    if (0 == rc) {
        conn->hello.tag = coll_async_tcp_hello_tag(&peer->key, &conn->hello, conn->challenge);
        coll_async_tcp_hello_encode(&conn->hello, payload);
        rc = conn_send_control(conn, FRAME_HELLO, payload, sizeof(payload));
    }
    if (0 != rc) {
        tcp_conn_fail(tcp, conn, "send hello", rc);
        return;
    }
    conn->state = CONN_HELLO_SENT;
}

/* The acceptor's proof, under the connector's key: the link is established. */
void tcp_conn_send_ack(struct coll_async_tcp *tcp, struct conn *conn)
{
    uint8_t payload[COLL_ASYNC_TCP_ACK_BYTES];
    int rc;

    coll_async_put_be64(payload,
                        coll_async_tcp_ack_tag(&conn->peer->key, &conn->hello, conn->challenge));
    rc = conn_send_control(conn, FRAME_ACK, payload, sizeof(payload));
    if (0 != rc) {
        tcp_conn_fail(tcp, conn, "send ack", rc);
        return;
    }
    conn->state = CONN_ESTABLISHED;
    tcp_conn_write(tcp, conn);
}

/* Why a hello does not make its connection a peer's link, NULL when it does;
 * then *from is the connector's id. The name is mapped only once the MAC has
 * proved the connector holds this process's key: a stranger gets no id. */
static const char *hello_refusal(const struct coll_async_tcp *tcp, struct conn *conn,
                                 uint32_t *from)
{
    const struct coll_async_tcp_hello *hello = &conn->hello;

    if (0 != coll_async_tcp_hello_decode(conn->handshake, &conn->hello)) {
        return "not a coll/async hello of this version";
    }
    if (hello->to != tcp->name) {
        return "its hello is for another process";
    }
    if (hello->from == tcp->name || hello->link >= hello->nlinks
        || hello->nlinks > COLL_ASYNC_TCP_MAX_LINKS) {
        return "its hello names no peer or link";
    }
    if (!coll_async_tags_equal(hello->tag, coll_async_tcp_hello_tag(&tcp->config.key, hello,
                                                                      conn->challenge))) {
        return "a wrong hello: it does not hold this process's key, or replays an old handshake";
    }
    if (0 != tcp_id_of(tcp, hello->from, from)) {
        return "its hello names a process this one has no place for";
    }
    return NULL;
}

/* The acceptor checks the hello with its own key; only then is the connection
 * the peer's link. The ACK needs the peer's key: it waits for add_peer when
 * the peer connected first. */
void tcp_conn_hello(struct coll_async_tcp *tcp, struct conn *conn)
{
    struct coll_async_tcp_peer *peer;
    uint32_t from = 0;
    const char *why = hello_refusal(tcp, conn, &from);
    int l = conn->hello.link;

    if (NULL != why) {
        tcp_refuse(tcp, conn, why);
        return;
    }
    tcp_unproven_remove(tcp, conn);
    conn->state = CONN_PROVEN;
    peer = tcp_peer_get(tcp, from);
    if (NULL == peer || 0 != peer->error) {
        tcp_conn_close(tcp, conn);
        return;
    }
    if (!link_takes(tcp, peer, &peer->links[l])) {
        (void) conn_send_control(conn, FRAME_YIELD, NULL, 0);
        tcp_conn_close(tcp, conn);
        return;
    }
    if (conn->hello.nlinks > peer->nlinks) {
        peer->nlinks = conn->hello.nlinks;
    }
    conn->peer = peer;
    conn->link = l;
    peer->links[l].conn = conn;
    tcp_link_settle(tcp, &peer->links[l]);
    if (peer->has_key) {
        tcp_conn_send_ack(tcp, conn);
    }
}

/* The connector checks the ACK with its own key: whoever answered at the peer's
 * address is the peer. */
void tcp_conn_ack(struct coll_async_tcp *tcp, struct conn *conn)
{
    uint64_t expected = coll_async_tcp_ack_tag(&tcp->config.key, &conn->hello, conn->challenge);

    if (!coll_async_tags_equal(coll_async_get_be64(conn->handshake), expected)) {
        coll_async_refusals_say(&tcp->refusals,
                                "tcp: refused the process that accepted a connection to peer "
                                "%u, link %d: it did not prove it holds this process's key",
                                conn->peer->id, conn->link);
        tcp_conn_fail(tcp, conn,
                      "handshake: the accepting process did not prove it is the peer (another "
                      "process at its address?)",
                      -EACCES);
        return;
    }
    conn->state = CONN_ESTABLISHED;
    tcp_link_settle(tcp, &conn->peer->links[conn->link]);
    tcp_conn_write(tcp, conn);
}

/* A higher id lost a simultaneous connect: it waits for the lower id's
 * connection on that link (the link's deadline still runs). */
void tcp_conn_yielded(struct coll_async_tcp *tcp, struct conn *conn)
{
    struct link *link = &conn->peer->links[conn->link];

    if (!tcp_self_lower(tcp, conn->peer)) {
        tcp_conn_fail(tcp, conn, "handshake: a higher name yielded", -EPROTO);
        return;
    }
    link->conn = NULL;
    link->waiting = true;
    tcp_conn_close(tcp, conn);
}
