/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the TCP transport: progress, posting, addresses, set-up and
 * teardown, counters. See coll_async_tcp.h, and coll_async_tcp_internal.h for
 * how it works inside.
 */

#define _GNU_SOURCE

#include "coll_async_tcp_internal.h"

/* Progress */

static void dispatch(struct coll_async_tcp *tcp, const struct epoll_event *ev)
{
    enum pollable *kind = ev->data.ptr;
    struct conn *conn = (struct conn *) kind;

    if (POLL_LISTENER == *kind) {
        tcp_accept_some(tcp, (struct listener *) kind);
        return;
    }
    if (CONN_CLOSED == conn->state) {
        return; /* closed by an earlier event of this call */
    }
    if (CONN_CONNECTING == conn->state) {
        tcp_conn_connected(tcp, conn);
        return;
    }
    if (ev->events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        tcp_conn_read(tcp, conn);
    }
    if ((ev->events & EPOLLOUT) && CONN_ESTABLISHED == conn->state) {
        tcp_conn_write(tcp, conn);
    }
}

/* Whether this pass may skip the epoll_wait: with no connection, only a listener
 * can have news, and a peer's connect waits in the backlog a few passes longer. A
 * job on one node, whose collectives never use TCP, then makes a system call
 * every IDLE_POLL_PASSES passes instead of each (2 us a call in a virtual
 * machine, more than a small collective's own time); counting passes costs less
 * than reading a clock. */
static bool idle_pass(struct coll_async_tcp *tcp)
{
    return 0 == tcp->connections && 0 != ++tcp->idle_passes % IDLE_POLL_PASSES;
}

static int tcp_progress(struct coll_async_transport *transport)
{
    struct coll_async_tcp *tcp = (struct coll_async_tcp *) transport;
    struct epoll_event events[EVENTS_PER_PROGRESS];
    int n = idle_pass(tcp) ? 0 : epoll_wait(tcp->epfd, events, EVENTS_PER_PROGRESS, 0);
    int resumed = 0;

    for (int i = 0; i < n; ++i) {
        dispatch(tcp, &events[i]);
    }
    if (0 != tcp->stalled) {
        resumed = tcp_resume_stalled(tcp);
    }
    if (0 != tcp->pending_links) {
        tcp_check_deadlines(tcp);
    }
    if (0 != tcp->nunproven) {
        tcp_check_unproven(tcp);
    }
    tcp_bury(tcp);
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
    struct coll_async_tcp_peer *peer = tcp_peer_get(tcp, id);

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
    tcp_op_start(op, peer, tag, data, length);
    op_of(op)->queued = true;
    if (0 != tcp->config.rendezvous_bytes && length >= tcp->config.rendezvous_bytes) {
        coll_async_transfer_push(&peer->announce, op); /* the data waits for the CTS */
    } else {
        coll_async_transfer_push(&peer->bulk, op);
    }
    tcp_peer_kick(tcp, peer, peer->nlinks);
    return 0;
}

/* A receive posted after its transfer began copies what was staged so far (and
 * whatever a chunk under way has put there: chunk_arrived copies that chunk
 * again when it ends); the chunks after land in its buffer. It keeps the staging
 * buffer for the chunks under way, until it finishes. */
static int recv_adopt(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer,
                      struct coll_async_transfer *op)
{
    struct unexpected **p = &peer->unexpected, *u;

    while (NULL != *p && (*p)->tag != op_of(op)->tag) {
        p = &(*p)->next;
    }
    if (NULL == (u = *p)) {
        return 0;
    }
    if (u->total > op_of(op)->length) {
        if (u->announced) { /* else its sender would wait for a CTS for good */
            tcp_peer_fail(tcp, peer, 0, "receive: an announced transfer longer than its receive",
                          -EMSGSIZE);
        }
        return -EMSGSIZE;
    }
    *p = u->next;
    op_of(op)->has_total = true;
    op->bytes = u->total;
    if (u->announced) { /* nothing staged: the sender waits for this CTS */
        --peer->nannounced;
        free(u);
        if (0 != tcp_queue_cts(peer, op_of(op)->tag)) {
            tcp_peer_fail(tcp, peer, 0, "receive", -ENOMEM); /* else the sender waits for good */
            return -ENOMEM;
        }
        return 0;
    }
    memcpy(op_of(op)->buffer, u->staging, u->end);
    tcp->staging_copied += u->end;
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
    if (NULL != tcp_find_posted(peer, tag)) {
        return -EBUSY;
    }
    tcp_op_start(op, peer, tag, buffer, length);
    if (0 != (rc = recv_adopt(tcp, peer, op))) {
        return rc;
    }
    if (op_of(op)->has_total && op_of(op)->received == op->bytes) {
        tcp_recv_finish(tcp, op);
        return 0;
    }
    op->next = peer->posted;
    peer->posted = op;
    /* A receiver connects too: a sender that dies before it connects then
     * fails the receive (refused, reset) instead of leaving it waiting. Kicked
     * once the receive is posted: a CTS that fails to go fails it too. */
    tcp_peer_kick(tcp, peer, peer->ncts > 0 ? peer->nlinks : 1);
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
    peer = tcp_peer_get(tcp, id);
    if (NULL == peer) {
        return -ENOMEM;
    }
    if (0 != peer->routable) {
        return -EEXIST;
    }
    peer->key = *key;
    peer->has_key = true;
    tcp_peer_route(tcp, peer, addrs, count);
    for (int l = 0; l < peer->nlinks; ++l) {
        struct conn *conn = peer->links[l].conn;

        if (NULL != conn && CONN_PROVEN == conn->state) {
            tcp_conn_send_ack(tcp, conn); /* it connected before this process knew its key */
        }
    }
    return 0;
}

/* Set-up and teardown */

static int listen_on(struct coll_async_tcp *tcp, int i)
{
    struct sockaddr_in sa = tcp_sockaddr_of(tcp->ifs[i].addr, 0);
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
    tcp->name = tcp_name_of(tcp, config->self);
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
        tcp_peer_fail(tcp, peer, 0, "transport closed", -ECANCELED);
    }
    coll_async_transfer_complete_all(&tcp->done);
    while (NULL != tcp->unproven) {
        tcp_conn_close(tcp, tcp->unproven);
    }
    tcp_bury(tcp);
    while (NULL != tcp->all_peers) {
        struct coll_async_tcp_peer *peer = tcp->all_peers;

        tcp->all_peers = peer->next;
        free(peer->cts);
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
    stats->staging_copied = tcp->staging_copied;
    stats->announced = 0;
    for (const struct coll_async_tcp_peer *peer = tcp->all_peers; NULL != peer; peer = peer->next) {
        stats->announced += peer->nannounced;
    }
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
