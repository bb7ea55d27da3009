/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the TCP transport: frames, transfers, connections' teardown,
 * unproven connections, peer failure, peers and their links (see
 * coll_async_tcp_internal.h).
 */

#define _GNU_SOURCE

#include "coll_async_tcp_internal.h"

/* Small helpers */

void tcp_encode_frame(uint8_t *p, const struct frame *frame)
{
    uint32_t length = htonl(frame->length);

    memcpy(p, &length, 4);
    p[4] = frame->type;
    p[5] = p[6] = p[7] = 0;
    coll_async_put_be64(p + 8, frame->tag);
    coll_async_put_be64(p + 16, frame->offset);
    coll_async_put_be64(p + 24, frame->total);
}

void tcp_decode_frame(const uint8_t *p, struct frame *frame)
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

struct sockaddr_in tcp_sockaddr_of(struct in_addr addr, uint16_t port)
{
    struct sockaddr_in sa;

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr = addr;
    sa.sin_port = htons(port);
    return sa;
}

/* Operations */

void tcp_op_start(struct coll_async_transfer *op, struct coll_async_tcp_peer *peer, uint64_t tag,
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
void tcp_op_release(struct coll_async_tcp *tcp, struct coll_async_transfer *op)
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

int tcp_conn_set_events(struct coll_async_tcp *tcp, struct conn *conn, uint32_t events)
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

struct conn *tcp_conn_new(struct coll_async_tcp *tcp, int fd, enum conn_state state,
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

void tcp_unproven_remove(struct coll_async_tcp *tcp, struct conn *conn)
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
void tcp_conn_close(struct coll_async_tcp *tcp, struct conn *conn)
{
    if (CONN_CLOSED == conn->state) {
        return;
    }
    if (CONN_ACCEPTED == conn->state) {
        tcp_unproven_remove(tcp, conn);
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

void tcp_bury(struct coll_async_tcp *tcp)
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

void tcp_refuse(struct coll_async_tcp *tcp, struct conn *conn, const char *why)
{
    char local[INET_ADDRSTRLEN] = "?", remote[INET_ADDRSTRLEN] = "?", claim[64] = "";

    inet_ntop(AF_INET, &conn->local.sin_addr, local, sizeof(local));
    inet_ntop(AF_INET, &conn->remote.sin_addr, remote, sizeof(remote));
    if (0 != conn->hello.nlinks && 0 == conn->hello.from >> 32) {
        snprintf(claim, sizeof(claim), " as process %u, link %u", (unsigned) conn->hello.from,
                 conn->hello.link);
    } else if (0 != conn->hello.nlinks) {
        snprintf(claim, sizeof(claim), " as process %u of job %u, link %u",
                 (unsigned) conn->hello.from, (unsigned) (conn->hello.from >> 32),
                 conn->hello.link);
    }
    coll_async_refusals_say(
        &tcp->refusals, "tcp: refused a connection on %s %s:%u from %s:%u%s: %s",
        if_name_of(tcp, conn->local.sin_addr), local, ntohs(conn->local.sin_port), remote,
        ntohs(conn->remote.sin_port), claim, why);
    tcp_conn_close(tcp, conn);
}

void tcp_check_unproven(struct coll_async_tcp *tcp)
{
    uint64_t now = coll_async_now_ms();
    struct conn *conn = tcp->unproven;

    while (NULL != conn) {
        struct conn *next = conn->next;

        if (now >= conn->deadline_ms) {
            char why[64];

            snprintf(why, sizeof(why), "it did not prove itself within %d ms",
                     tcp->config.connect_timeout_ms);
            tcp_refuse(tcp, conn, why);
        }
        conn = next;
    }
}

/* Makes room for one more unproven connection: the oldest goes, so that strangers
 * that keep connections open cannot lock the job's own out. */
void tcp_unproven_make_room(struct coll_async_tcp *tcp)
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
    tcp_refuse(tcp, oldest, why);
}

/* Links: deadlines */

void tcp_link_settle(struct coll_async_tcp *tcp, struct link *link)
{
    if (0 != link->deadline_ms) {
        link->deadline_ms = 0;
        --tcp->pending_links;
    }
    link->waiting = false;
}

void tcp_link_arm(struct coll_async_tcp *tcp, struct link *link)
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
        tcp_op_release(tcp, op);
    }
}

static void fail_receives(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer)
{
    while (NULL != peer->posted) {
        struct coll_async_transfer *op = peer->posted;

        peer->posted = op->next;
        if (NULL != op_of(op)->staging) {
            tcp->staged -= op->bytes;
            coll_async_scratch_give(op_of(op)->staging);
            op_of(op)->staging = NULL;
        }
        op_fail(op, peer);
        tcp_op_release(tcp, op);
    }
    while (NULL != peer->unexpected) {
        struct unexpected *u = peer->unexpected;

        peer->unexpected = u->next;
        if (u->announced) {
            --peer->nannounced;
        } else {
            tcp->staged -= u->total;
        }
        coll_async_scratch_give(u->staging);
        free(u);
    }
}

/*
 * Fails every operation on peer and closes its connections, for good: a process
 * that lost a connection has lost data in it. l is the link that failed, what
 * and err say how (err: -errno).
 */
void tcp_peer_fail(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer, int l,
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

        tcp_link_settle(tcp, link);
        if (NULL == conn) {
            continue;
        }
        if (NULL != conn->tx_op) {
            op_fail(conn->tx_op, peer);
            --op_of(conn->tx_op)->in_flight;
            tcp_op_release(tcp, conn->tx_op);
            conn->tx_op = NULL;
        }
        tcp_conn_close(tcp, conn);
        link->conn = NULL;
    }
    fail_queue(tcp, peer, &peer->bulk);
    fail_queue(tcp, peer, &peer->announce);
    fail_queue(tcp, peer, &peer->awaiting);
    peer->ncts = 0;
    fail_receives(tcp, peer);
}

void tcp_conn_fail(struct coll_async_tcp *tcp, struct conn *conn, const char *what, int err)
{
    if (NULL == conn->peer) {
        tcp_refuse(tcp, conn, what);
        return;
    }
    tcp_peer_fail(tcp, conn->peer, conn->link, what, err);
}

void tcp_check_deadlines(struct coll_async_tcp *tcp)
{
    uint64_t now = coll_async_now_ms();

    for (struct coll_async_tcp_peer *peer = tcp->all_peers; NULL != peer; peer = peer->next) {
        for (int l = 0; l < peer->nlinks && 0 == peer->error; ++l) {
            struct link *link = &peer->links[l];

            if (0 != link->deadline_ms && now >= link->deadline_ms) {
                tcp_peer_fail(tcp, peer, l,
                              link->waiting ? "no connection from the peer in time"
                                            : "connection not established in time",
                              -ETIMEDOUT);
            }
        }
    }
}

/* Peers and the links they share with this process */

uint64_t tcp_name_of(const struct coll_async_tcp *tcp, uint32_t id)
{
    const struct coll_async_tcp_names *names = &tcp->config.names;

    return NULL != names->name_of ? names->name_of(names->context, id) : id;
}

int tcp_id_of(const struct coll_async_tcp *tcp, uint64_t name, uint32_t *id)
{
    const struct coll_async_tcp_names *names = &tcp->config.names;

    if (NULL != names->id_of) {
        return names->id_of(names->context, name, id);
    }
    if (name >= tcp->config.nprocs) {
        return -ENOENT;
    }
    *id = (uint32_t) name;
    return 0;
}

struct coll_async_tcp_peer *tcp_peer_get(struct coll_async_tcp *tcp, uint32_t id)
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
    peer->name = tcp_name_of(tcp, id);
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

void tcp_peer_route(struct coll_async_tcp *tcp, struct coll_async_tcp_peer *peer,
                    const struct coll_async_tcp_addr *addrs, int count)
{
    int mine[COLL_ASYNC_TCP_MAX_LINKS], theirs[COLL_ASYNC_TCP_MAX_LINKS];
    int n;
    bool lower = tcp_self_lower(tcp, peer);

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
