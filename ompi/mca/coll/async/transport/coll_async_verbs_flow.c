/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the verbs RC transport: what flows once connected: the outbox,
 * credits, chunks, arriving messages, completions, progress (see
 * coll_async_verbs_internal.h).
 */

#define _GNU_SOURCE

#include "coll_async_verbs_internal.h"

/* Sending: the outbox on link 0, credits on every link, chunks over the links */

struct ready *verbs_take_ready(struct coll_async_verbs_peer *peer, uint64_t tag)
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
    struct ready *ready = verbs_take_ready(peer, op_of(op)->tag);
    struct small_note *note;

    op_of(op)->stage = STAGE_SENT;
    if (NULL != ready) {
        uint64_t capacity = ready->capacity;
        uint32_t id = ready->id;

        free(ready);
        if (op_of(op)->length > capacity) {
            verbs_op_set_error(op, -EMSGSIZE, too_long);
            (void) verbs_send_control(verbs, conn, MSG_REJECT, op_of(op)->tag, op_of(op)->length,
                                      id, EMSGSIZE);
            return;
        }
    } else {
        note = malloc(sizeof(*note));
        if (NULL == note) {
            verbs_peer_fail(verbs, peer, conn, "send", -ENOMEM);
            return;
        }
        note->tag = op_of(op)->tag;
        note->seq = peer->sent0;
        note->next = peer->notes;
        peer->notes = note;
    }
    (void) verbs_send_payload(verbs, conn, MSG_SMALL, op);
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
        (void) verbs_send_ready(verbs, conn, op);
        return; /* on failure, the peer's failure ended it */
    case STAGE_SMALL:
        send_small(verbs, conn, op);
        break;
    case STAGE_START:
        op_of(op)->stage = STAGE_SENT;
        if (0
            == verbs_send_control(verbs, conn, MSG_START, op_of(op)->tag, op_of(op)->length,
                                  op_of(op)->id, 0)) {
            op_of(op)->stage = STAGE_WRITING;
            op_of(op)->queued = true;
            coll_async_transfer_push(&peer->writing, op);
        }
        break;
    case STAGE_REJECT:
        op_of(op)->stage = STAGE_SENT;
        (void) verbs_send_control(verbs, conn, MSG_REJECT, op_of(op)->tag, op_of(op)->length,
                                  op_of(op)->id, (uint32_t) -op->result);
        break;
    default:
        return;
    }
    if (0 != peer->error) {
        verbs_op_set_error(op, peer->error, peer->message);
    }
    verbs_send_try_done(verbs, op);
}

static void pump_outbox(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer)
{
    struct conn *conn;

    if (NULL == peer->outbox.head || !verbs_link_usable(verbs, peer, 0)) {
        return;
    }
    conn = peer->links[0].out;
    while (0 == peer->error && NULL != peer->outbox.head && verbs_conn_room(conn, false)) {
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
        if (verbs_link_usable(verbs, peer, l) && verbs_conn_room(peer->links[l].out, true)) {
            struct work *work = verbs_slot_take(peer->links[l].out);

            (void) verbs_message_start(peer->links[l].out, work, MSG_CREDIT, 0, 0);
            (void) verbs_post_message(verbs, peer->links[l].out, work, HEADER, NULL);
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

            if (!verbs_link_usable(verbs, peer, l)) {
                continue;
            }
            conn = peer->links[l].out;
            if (!verbs_conn_room(conn, false) || conn->chunks >= CHUNKS_PER_LINK) {
                continue;
            }
            chunk = left < verbs->config.chunk_size ? left : verbs->config.chunk_size;
            if (0 != verbs_post_chunk(verbs, conn, op, chunk)) {
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

void verbs_kick(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer)
{
    if (0 != peer->error) {
        return;
    }
    pump_credits(verbs, peer);
    pump_outbox(verbs, peer);
    pump_chunks(verbs, peer);
}

/* Bulk sends: starting once the READY is there */

void verbs_start_bulk(struct coll_async_verbs *verbs, struct coll_async_transfer *op,
                      struct ready *ready)
{
    struct coll_async_verbs_peer *peer = op_of(op)->peer;
    int rc;

    op_of(op)->id = ready->id;
    op_of(op)->stage = STAGE_REJECT;
    if (op_of(op)->length > ready->capacity || 0 == ready->nkeys) {
        verbs_op_set_error(op, -EMSGSIZE, too_long);
        free(ready);
    } else if (0
               != (rc = coll_async_verbs_cache_acquire(
                       verbs->cache, op_of(op)->buffer, op_of(op)->length,
                       (struct coll_async_verbs_cache_entry **) &op_of(op)->registration))) {
        verbs_op_set_error(op, rc, "verbs: could not register the buffer of a bulk send");
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
        verbs_peer_fail(verbs, conn->peer, conn, "stage a bulk transfer", -ENOMEM);
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
    struct coll_async_transfer *op = verbs_receive_by_tag(conn->peer, header->tag);

    if (NULL == op) {
        stage_unexpected(verbs, conn, header->tag, data, header->length);
        return;
    }
    op->bytes = header->length;
    if (header->length > op_of(op)->length) {
        verbs_op_set_error(op, -EMSGSIZE, too_long);
    } else if (header->length > 0) {
        memcpy(op_of(op)->buffer, data, header->length);
    }
    verbs_receive_end(verbs, op);
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
        verbs_protocol_error(verbs, conn, "a malformed READY");
        return;
    }
    if (ready_is_stale(peer, header->tag, header->seen)) {
        return;
    }
    ready = calloc(1, sizeof(*ready));
    if (NULL == ready) {
        verbs_peer_fail(verbs, peer, conn, "receive READY", -ENOMEM);
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
    verbs_start_bulk(verbs, op, ready);
}

static void start_arrived(struct coll_async_verbs *verbs, struct conn *conn,
                          const struct header *header, const uint8_t *body, size_t body_length,
                          bool rejected)
{
    struct coll_async_transfer *op =
        body_length >= 8 ? verbs_receive_by_id(conn->peer, coll_async_get_be32(body)) : NULL;

    if (NULL == op || op_of(op)->has_total
        || (!rejected
            && (header->length > op_of(op)->length
                || header->length <= verbs->config.eager_limit))) {
        verbs_protocol_error(verbs, conn,
                             rejected ? "a REJECT for no posted receive"
                                      : "a START for no posted receive, longer than it, "
                                        "or not above the eager limit");
        return;
    }
    op->bytes = header->length;
    if (rejected) {
        uint32_t err = coll_async_get_be32(body + 4);

        verbs_op_set_error(op, 0 != err ? -(int) err : -EPROTO,
                           EMSGSIZE == err ? too_long : sender_failed);
        verbs_receive_end(verbs, op);
        return;
    }
    op_of(op)->has_total = true;
    if (op_of(op)->acked > op->bytes) {
        verbs_protocol_error(verbs, conn, "more bytes written than the START announced");
        return;
    }
    verbs_receive_try_done(verbs, op);
}

static void write_arrived(struct coll_async_verbs *verbs, struct conn *conn, uint32_t id,
                          uint32_t bytes)
{
    struct coll_async_transfer *op = verbs_receive_by_id(conn->peer, id);

    if (NULL == op) {
        verbs_protocol_error(verbs, conn, "an RDMA write for no posted receive");
        return;
    }
    if (bytes > op_of(op)->length - op_of(op)->acked) {
        verbs_protocol_error(verbs, conn, "more bytes written than the receive holds");
        return;
    }
    op_of(op)->acked += bytes;
    if (op_of(op)->has_total && op_of(op)->acked > op->bytes) {
        verbs_protocol_error(verbs, conn, "more bytes written than the START announced");
        return;
    }
    verbs_receive_try_done(verbs, op);
}

static void message_arrived(struct coll_async_verbs *verbs, struct conn *conn,
                            const uint8_t *data, size_t length)
{
    struct coll_async_verbs_peer *peer = conn->peer;
    struct conn *out = peer->links[conn->link].out;
    struct header header;
    size_t body_length;

    if (length < HEADER) {
        verbs_protocol_error(verbs, conn, "a message shorter than its header");
        return;
    }
    body_length = length - HEADER;
    verbs_decode_header(data, &header);
    if (NULL != out) {
        if (out->credits + header.credits > RECEIVES + HANDSHAKE_RECEIVES) {
            verbs_protocol_error(verbs, conn, "more credits returned than receives were posted");
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
        verbs_protocol_error(verbs, conn,
                             "a message whose length is not what came, or above the "
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
        verbs_protocol_error(verbs, conn, "a message of unknown type");
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
        verbs_refuse(verbs, conn,
                     "the process it proved to be has failed here, or has connected "
                     "this link already");
        return;
    }
    rc = verbs_conn_region(verbs, conn, 1, HANDSHAKE_RECEIVES, RECEIVES);
    for (int i = HANDSHAKE_RECEIVES; 0 == rc && i < conn->nworks; ++i) {
        rc = verbs_post_receive(verbs, conn, &conn->works[i]);
    }
    if (0 == rc) {
        rc = verbs_qp_allow_writes(conn);
    }
    if (0 != rc) {
        snprintf(what, sizeof(what), "proven, but its receives could not be posted: %s",
                 strerror(-rc));
        verbs_refuse(verbs, conn, what);
        return;
    }
    --verbs->unproven;
    conn->state = CONN_ESTABLISHED;
    verbs_conn_settle(verbs, conn);
    peer->links[conn->link].in = conn;
    conn->owed += RECEIVES;
    verbs_kick(verbs, peer);
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
        verbs_refuse(verbs, conn, what);
        return;
    }
    if (IBV_WC_RECV != wc->opcode || PROOF_BYTES != wc->byte_len) {
        verbs_refuse(verbs, conn, "its first message is no proof");
        return;
    }
    verbs_decode_header(data, &header);
    if (MSG_PROOF != header.type
        || !coll_async_tags_equal(coll_async_get_be64(data + HEADER),
                                        coll_async_verbs_proof_tag(&verbs->config.key,
                                                                   &conn->request, conn->nonce))) {
        verbs_refuse(verbs, conn,
                     "a wrong proof: it does not hold this process's key, or replays "
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
        verbs_kick(verbs, conn->peer); /* a handshake receive, its credit never returned */
        return;
    }
    rc = verbs_post_receive(verbs, conn, work);
    if (0 != rc) {
        verbs_peer_fail(verbs, conn->peer, conn, "repost a receive", rc);
        return;
    }
    ++conn->owed;
    verbs_kick(verbs, conn->peer);
}

static void send_completed(struct coll_async_verbs *verbs, struct conn *conn, struct work *work)
{
    struct coll_async_transfer *op = work->op;

    if (work->write) {
        --conn->chunks;
    }
    verbs_slot_give_back(conn, work);
    if (NULL != op) {
        --op_of(op)->in_flight;
        verbs_send_try_done(verbs, op);
    }
    verbs_kick(verbs, conn->peer);
}

void verbs_completion(struct coll_async_verbs *verbs, const struct ibv_wc *wc)
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
        verbs_peer_fail(verbs, conn->peer, conn, what, wc_errno(wc->status));
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
            verbs_completion(verbs, &wc[i]);
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

int verbs_progress(struct coll_async_transport *transport)
{
    struct coll_async_verbs *verbs = (struct coll_async_verbs *) transport;
    struct epoll_event events[COLL_ASYNC_VERBS_MAX_PORTS + 2];
    int n = epoll_wait(verbs->epfd, events, COLL_ASYNC_VERBS_MAX_PORTS + 2, 0);
    int work = n > 0 ? n : 0;

    for (int i = 0; i < n; ++i) {
        uint32_t tag = events[i].data.u32;

        if (POLL_CM == tag) {
            for (int k = 0; k < CM_EVENTS_PER_PROGRESS && verbs_cm_event(verbs); ++k) {
            }
        } else if (POLL_TIMER == tag) {
            verbs_check_deadlines(verbs);
        } else {
            channel_events(verbs, &verbs->devices[tag - POLL_DEVICE]);
        }
    }
    for (int p = 0; p < verbs->nports; ++p) {
        work += poll_port(verbs, &verbs->ports[p]);
    }
    verbs_reclaim(verbs);
    coll_async_verbs_cache_collect(verbs->cache);
    return work + coll_async_transfer_complete_all(&verbs->done);
}

int verbs_fd(const struct coll_async_transport *transport)
{
    return ((const struct coll_async_verbs *) transport)->epfd;
}
