/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the verbs RC transport: transfers, receive ids, peer failure,
 * peers, deadlines, queue pairs and their buffers, posting sends (see
 * coll_async_verbs_internal.h).
 */

#define _GNU_SOURCE

#include "coll_async_verbs_internal.h"

/* Small helpers */

void verbs_encode_header(uint8_t *p, const struct header *header)
{
    p[0] = header->type;
    p[1] = 0;
    p[2] = (uint8_t) (header->credits >> 8);
    p[3] = (uint8_t) header->credits;
    coll_async_put_be32(p + 4, header->seen);
    coll_async_put_be64(p + 8, header->tag);
    coll_async_put_be64(p + 16, header->length);
}

void verbs_decode_header(const uint8_t *p, struct header *header)
{
    header->type = p[0];
    header->credits = (uint16_t) (p[2] << 8 | p[3]);
    header->seen = coll_async_get_be32(p + 4);
    header->tag = coll_async_get_be64(p + 8);
    header->length = coll_async_get_be64(p + 16);
}

/* Operations */

void verbs_op_start(struct coll_async_transfer *op, struct coll_async_verbs_peer *peer,
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

void verbs_op_set_error(struct coll_async_transfer *op, int result, const char *error)
{
    if (0 == op->result) {
        op->result = result;
        op->error = error;
    }
}

/* Hands op to the done queue: it completes at the end of this progress call. */
void verbs_op_done(struct coll_async_verbs *verbs, struct coll_async_transfer *op)
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
void verbs_send_try_done(struct coll_async_verbs *verbs, struct coll_async_transfer *op)
{
    if (!op_of(op)->queued && 0 == op_of(op)->in_flight && STAGE_SENT == op_of(op)->stage) {
        verbs_op_done(verbs, op);
    }
}

/* Receive ids: an index into the peer's table, and a generation above it. */

int verbs_receive_add(struct coll_async_verbs_peer *peer, struct coll_async_transfer *op)
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

struct coll_async_transfer *verbs_receive_by_id(struct coll_async_verbs_peer *peer, uint32_t id)
{
    uint32_t index = id & 0xffff;

    if (index < peer->nreceives && NULL != peer->receives[index]
        && op_of(peer->receives[index])->id == id) {
        return peer->receives[index];
    }
    return NULL;
}

struct coll_async_transfer *verbs_receive_by_tag(struct coll_async_verbs_peer *peer,
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
void verbs_receive_end(struct coll_async_verbs *verbs, struct coll_async_transfer *op)
{
    struct coll_async_verbs_peer *peer = op_of(op)->peer;

    peer->receives[op_of(op)->id & 0xffff] = NULL;
    if (op_of(op)->queued) {
        coll_async_transfer_remove(&peer->outbox, op);
        op_of(op)->queued = false;
    }
    verbs_op_done(verbs, op);
}

void verbs_receive_try_done(struct coll_async_verbs *verbs, struct coll_async_transfer *op)
{
    if (op_of(op)->has_total && op_of(op)->acked == op->bytes) {
        verbs_receive_end(verbs, op);
    }
}

/* Peer failure */

const char *verbs_port_name(const struct port *port, char *name, size_t size)
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
             verbs_port_name(conn->port, name, sizeof(name)), local,
             conn->outbound ? "connected" : "accepted", remote, ntohs(conn->remote.sin_port),
             conn->outbound ? "sending" : "receiving", what, strerror(-err));
}

void verbs_conn_settle(struct coll_async_verbs *verbs, struct conn *conn)
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
void verbs_conn_close(struct coll_async_verbs *verbs, struct conn *conn)
{
    struct coll_async_verbs_peer *peer = conn->peer;

    if (CONN_CLOSED == conn->state) {
        return;
    }
    verbs_conn_settle(verbs, conn);
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
            verbs_op_set_error(op, peer->error, peer->message);
            --op_of(op)->in_flight;
            verbs_send_try_done(verbs, op);
        }
    }
    region_free(&conn->regions[0]);
    region_free(&conn->regions[1]);
    conn->closed_at = conn->port->polls;
    conn->state = CONN_CLOSED;
}

void verbs_conn_free(struct conn *conn)
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
        verbs_op_set_error(op, peer->error, peer->message);
        op_of(op)->stage = STAGE_SENT;
        verbs_send_try_done(verbs, op);
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
void verbs_peer_fail(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer,
                     const struct conn *conn, const char *what, int err)
{
    if (0 != peer->error) {
        return;
    }
    describe(peer, conn, what, err);
    peer->error = err;
    for (int l = 0; l < COLL_ASYNC_VERBS_MAX_PORTS; ++l) {
        if (NULL != peer->links[l].out) {
            verbs_conn_close(verbs, peer->links[l].out);
        }
        if (NULL != peer->links[l].in) {
            verbs_conn_close(verbs, peer->links[l].in);
        }
    }
    fail_queue(verbs, peer, &peer->outbox);
    fail_queue(verbs, peer, &peer->awaiting);
    fail_queue(verbs, peer, &peer->writing);
    for (uint32_t i = 0; i < peer->nreceives; ++i) {
        struct coll_async_transfer *op = peer->receives[i];

        if (NULL != op) {
            verbs_op_set_error(op, peer->error, peer->message);
            verbs_receive_end(verbs, op);
        }
    }
    peer_drop_state(peer);
}

/* Fails peer for a protocol violation seen on conn. */
void verbs_protocol_error(struct coll_async_verbs *verbs, struct conn *conn, const char *what)
{
    verbs_peer_fail(verbs, conn->peer, conn, what, -EPROTO);
}

/* Says that a connection to port from remote was refused; request, when it could
 * be read, names who it claimed to be. */
void verbs_report_refusal(struct coll_async_verbs *verbs, const struct port *port,
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
                            verbs_port_name(port, name, sizeof(name)), local, from,
                            NULL != remote ? ntohs(remote->sin_port) : 0, claim, why);
}

/* Closes an inbound connection that has not proved itself and says why; the peer
 * it claimed to be is untouched. Freed once its CQ has drained (reclaim). */
void verbs_refuse(struct coll_async_verbs *verbs, struct conn *conn, const char *why)
{
    verbs_report_refusal(verbs, conn->port, &conn->remote, &conn->request, why);
    verbs_conn_close(verbs, conn);
    conn->refused = true;
    ++verbs->refused;
}

/* Frees the refused conns that no completion can point to any more: a poll that
 * began after their QP was destroyed found the CQ empty. Strangers may connect
 * and fail without end; what they leave must not grow. */
void verbs_reclaim(struct coll_async_verbs *verbs)
{
    struct conn **p = &verbs->conns;

    while (verbs->refused > 0 && NULL != *p) {
        struct conn *conn = *p;

        if (conn->refused && conn->port->drained > conn->closed_at) {
            *p = conn->next;
            verbs_conn_free(conn);
            --verbs->refused;
        } else {
            p = &conn->next;
        }
    }
}

/* Peers */

struct coll_async_verbs_peer *verbs_peer_get(struct coll_async_verbs *verbs, uint32_t id)
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

void verbs_conn_arm(struct coll_async_verbs *verbs, struct conn *conn)
{
    if (0 == conn->deadline_ms) {
        ++verbs->pending;
    }
    conn->deadline_ms = coll_async_now_ms() + (uint64_t) verbs->config.connect_timeout_ms;
    arm_timer(verbs);
}

void verbs_check_deadlines(struct coll_async_verbs *verbs)
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
            verbs_refuse(verbs, conn, why);
        } else {
            verbs_peer_fail(verbs, conn->peer, conn, "connection not established in time",
                            -ETIMEDOUT);
        }
    }
    arm_timer(verbs);
}

/* Queue pairs and their buffers */

struct conn *verbs_conn_new(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer,
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
int verbs_conn_works(struct conn *conn, int count)
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
int verbs_conn_region(struct coll_async_verbs *verbs, struct conn *conn, int r, int first,
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
int verbs_qp_move(struct conn *conn, enum ibv_qp_state state, bool writable)
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
int verbs_qp_allow_writes(struct conn *conn)
{
    struct ibv_qp_attr attr = {.qp_access_flags = IBV_ACCESS_REMOTE_WRITE};

    return -ibv_modify_qp(conn->qp, &attr, IBV_QP_ACCESS_FLAGS);
}

/* Creates the QP on conn's port, growing the port's CQ to hold its completions,
 * and moves it to INIT. Ours, not rdma_cm's: rdma_cm would open it to RDMA
 * writes on its way to RTR. */
int verbs_conn_qp(struct coll_async_verbs *verbs, struct conn *conn)
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
    return verbs_qp_move(conn, IBV_QPS_INIT, false);
}

int verbs_post_receive(struct coll_async_verbs *verbs, struct conn *conn, struct work *work)
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

bool verbs_conn_room(const struct conn *conn, bool credit_message)
{
    return CONN_ESTABLISHED == conn->state && conn->nfree > 0
           && conn->credits > (credit_message ? 0 : 1);
}

struct work *verbs_slot_take(struct conn *conn)
{
    return &conn->works[conn->free_slots[--conn->nfree]];
}

void verbs_slot_give_back(struct conn *conn, struct work *work)
{
    work->op = NULL;
    work->write = false;
    conn->free_slots[conn->nfree++] = (int) (work - conn->works);
}

/* Writes the header into work's buffer, returning owed credits and the link-0
 * sequence with it; the body's start. */
uint8_t *verbs_message_start(struct conn *conn, struct work *work, enum msg_type type,
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
    verbs_encode_header((uint8_t *) work->buffer, &header);
    return (uint8_t *) work->buffer + HEADER;
}

/* Posts a SEND of work's first bytes, taking a credit; on failure the peer fails. */
int verbs_post_send(struct coll_async_verbs *verbs, struct conn *conn, struct work *work,
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
        verbs_slot_give_back(conn, work);
        verbs_peer_fail(verbs, conn->peer, conn, "post send", -rc);
        return -rc;
    }
    --conn->credits;
    return 0;
}

/* A message of the protocol (the proof is not one: it counts in no sequence). */
int verbs_post_message(struct coll_async_verbs *verbs, struct conn *conn, struct work *work,
                       size_t bytes, struct coll_async_transfer *op)
{
    int rc = verbs_post_send(verbs, conn, work, bytes);

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

int verbs_send_control(struct coll_async_verbs *verbs, struct conn *conn, enum msg_type type,
                       uint64_t tag, uint64_t length, uint32_t id, uint32_t err)
{
    struct work *work = verbs_slot_take(conn);
    uint8_t *body = verbs_message_start(conn, work, type, tag, length);

    coll_async_put_be32(body, id);
    coll_async_put_be32(body + 4, err);
    return verbs_post_message(verbs, conn, work, HEADER + 8, NULL);
}

int verbs_send_payload(struct coll_async_verbs *verbs, struct conn *conn, enum msg_type type,
                       struct coll_async_transfer *op)
{
    struct work *work = verbs_slot_take(conn);
    uint8_t *body = verbs_message_start(conn, work, type, op_of(op)->tag, op_of(op)->length);

    if (op_of(op)->length > 0) {
        memcpy(body, op_of(op)->buffer, op_of(op)->length);
    }
    conn->peer->links[conn->link].bytes += op_of(op)->length;
    return verbs_post_message(verbs, conn, work, HEADER + op_of(op)->length, op);
}

int verbs_send_ready(struct coll_async_verbs *verbs, struct conn *conn,
                     struct coll_async_transfer *op)
{
    struct coll_async_verbs_peer *peer = conn->peer;
    struct work *work = verbs_slot_take(conn);
    uint8_t *body = verbs_message_start(conn, work, MSG_READY, op_of(op)->tag, op_of(op)->length);
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
    return verbs_post_message(verbs, conn, work, HEADER + 16 + 4 * (size_t) nkeys, NULL);
}

/* One chunk of a bulk send, written with the receive's id as the immediate. */
int verbs_post_chunk(struct coll_async_verbs *verbs, struct conn *conn,
                     struct coll_async_transfer *op, size_t length)
{
    const struct ready *ready = op_of(op)->ready;
    struct registration *registration = coll_async_verbs_cache_handle(op_of(op)->registration);
    struct work *work = verbs_slot_take(conn);
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
        verbs_slot_give_back(conn, work);
        verbs_peer_fail(verbs, conn->peer, conn, "post RDMA write", -rc);
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
