/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the verbs RC transport: connecting, accepting, the handshake,
 * rdma_cm events (see coll_async_verbs_internal.h).
 */

#define _GNU_SOURCE

#include "coll_async_verbs_internal.h"

/* Connecting */

static void link_connect(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer, int l)
{
    struct link *link = &peer->links[l];
    struct port *port = &verbs->ports[link->port];
    struct sockaddr_in src = {.sin_family = AF_INET, .sin_addr = port->addr};
    struct conn *conn = verbs_conn_new(verbs, peer, port, l, true);

    if (NULL == conn) {
        verbs_peer_fail(verbs, peer, NULL, "connect", -ENOMEM);
        return;
    }
    link->out = conn;
    conn->remote.sin_family = AF_INET;
    conn->remote.sin_addr = link->remote.addr;
    conn->remote.sin_port = htons(link->remote.cm_port);
    conn->state = CONN_RESOLVING_ADDR;
    if (0 != rdma_create_id(verbs->cm, &conn->id, conn, RDMA_PS_TCP)) {
        conn->id = NULL;
        verbs_peer_fail(verbs, peer, conn, "rdma_create_id", -errno);
        return;
    }
    verbs_conn_arm(verbs, conn);
    if (0 != rdma_resolve_addr(conn->id, (struct sockaddr *) &src,
                               (struct sockaddr *) &conn->remote,
                               verbs->config.connect_timeout_ms)) {
        verbs_peer_fail(verbs, peer, conn, "rdma_resolve_addr", -errno);
    }
}

/* True when link l can take sends now; opens its QP on first use. */
bool verbs_link_usable(struct coll_async_verbs *verbs, struct coll_async_verbs_peer *peer, int l)
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
    int rc = verbs_conn_works(conn, SEND_SLOTS);

    if (0 == rc) {
        rc = verbs_conn_region(verbs, conn, 0, 0, SEND_SLOTS);
    }
    if (0 == rc) {
        rc = verbs_conn_qp(verbs, conn);
    }
    if (0 == rc) {
        rc = coll_async_random(conn->request.nonce, sizeof(conn->request.nonce));
    }
    if (0 != rc) {
        verbs_peer_fail(verbs, conn->peer, conn, "set up the queue pair", rc);
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
        verbs_peer_fail(verbs, conn->peer, conn, "rdma_connect", -errno);
    }
}

/* The connection's first SEND: PROOF, with one of the two credits of the accept. */
static void send_proof(struct coll_async_verbs *verbs, struct conn *conn)
{
    struct work *work = verbs_slot_take(conn);
    struct header header = {.type = MSG_PROOF, .length = 8};

    verbs_encode_header((uint8_t *) work->buffer, &header);
    coll_async_put_be64((uint8_t *) work->buffer + HEADER,
          coll_async_verbs_proof_tag(&conn->peer->key, &conn->request, conn->nonce));
    (void) verbs_post_send(verbs, conn, work, PROOF_BYTES);
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
        verbs_protocol_error(verbs, conn, "the peer's accept carries no coll/async protocol data");
        return;
    }
    if (!coll_async_tags_equal(accept.tag, coll_async_verbs_accept_tag(
                                                     &peer->key, &conn->request, accept.nonce))) {
        coll_async_refusals_say(&verbs->refusals,
                                "verbs: refused the process that accepted a connection to peer "
                                "%u, link %d: it did not prove it holds the peer's key",
                                peer->id, conn->link);
        verbs_peer_fail(verbs, peer, conn,
                        "the accepting process did not prove it holds the peer's "
                        "key (another process at its address?)",
                        -EACCES);
        return;
    }
    if (accept.eager_limit != verbs->config.eager_limit) {
        char what[128];

        snprintf(what, sizeof(what), "the peer's eager_limit is %u bytes, this one's %zu",
                 accept.eager_limit, verbs->config.eager_limit);
        verbs_peer_fail(verbs, peer, conn, what, -EPROTO);
        return;
    }
    if (0 == accept.receives) {
        verbs_protocol_error(verbs, conn, "the peer's accept grants no receive for the proof");
        return;
    }
    memcpy(conn->nonce, accept.nonce, sizeof(conn->nonce));
    rc = verbs_qp_move(conn, IBV_QPS_RTR, false);
    if (0 == rc) {
        rc = verbs_qp_move(conn, IBV_QPS_RTS, false);
    }
    if (0 == rc && 0 != rdma_establish(conn->id)) {
        rc = -errno;
    }
    if (0 != rc) {
        verbs_peer_fail(verbs, peer, conn, "move the queue pair to RTS", rc);
        return;
    }
    conn->credits = (int) (accept.receives < RECEIVES ? accept.receives : RECEIVES);
    conn->state = CONN_ESTABLISHED;
    verbs_conn_settle(verbs, conn);
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
    int rc = verbs_conn_works(conn, HANDSHAKE_RECEIVES + RECEIVES);

    if (0 == rc) {
        rc = verbs_conn_region(verbs, conn, 0, 0, HANDSHAKE_RECEIVES);
    }
    if (0 == rc) {
        rc = verbs_conn_qp(verbs, conn);
    }
    for (int i = 0; 0 == rc && i < HANDSHAKE_RECEIVES; ++i) {
        conn->works[i].retire = true;
        rc = verbs_post_receive(verbs, conn, &conn->works[i]);
    }
    if (0 == rc) {
        rc = verbs_qp_move(conn, IBV_QPS_RTR, false);
    }
    if (0 == rc) {
        rc = verbs_qp_move(conn, IBV_QPS_RTS, false);
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
    peer = verbs_peer_get(verbs, request->from);
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

    if (0 == reason
        && NULL
               == (conn = verbs_conn_new(verbs, verbs->peers[request.from], port, request.link,
                                         false))) {
        why = "out of memory";
        reason = COLL_ASYNC_VERBS_REJECT_RESOURCES;
    }
    if (0 != reason) {
        verbs_report_refusal(verbs, port,
                             NULL != remote && AF_INET == remote->sa_family
                                 ? (const struct sockaddr_in *) remote
                                 : NULL,
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
    verbs_conn_arm(verbs, conn);
    rc = accept_conn(verbs, conn);
    if (0 != rc) {
        (void) rdma_reject(id, NULL, 0);
        snprintf(what, sizeof(what), "could not accept it: %s", strerror(-rc));
        verbs_refuse(verbs, conn, what);
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
        verbs_refuse(verbs, conn, what);
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
            verbs_peer_fail(verbs, peer, conn, what, -EHOSTUNREACH);
        } else if (0 != rdma_resolve_route(conn->id, verbs->config.connect_timeout_ms)) {
            verbs_peer_fail(verbs, peer, conn, "rdma_resolve_route", -errno);
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
        verbs_peer_fail(verbs, peer, conn, "address resolution", status_errno(status));
        return;
    case RDMA_CM_EVENT_ROUTE_ERROR:
        verbs_peer_fail(verbs, peer, conn, "route resolution", status_errno(status));
        return;
    case RDMA_CM_EVENT_UNREACHABLE:
        verbs_peer_fail(verbs, peer, conn, "peer unreachable", -EHOSTUNREACH);
        return;
    case RDMA_CM_EVENT_CONNECT_ERROR:
        verbs_peer_fail(verbs, peer, conn, "connect", status_errno(status));
        return;
    case RDMA_CM_EVENT_REJECTED:
        verbs_peer_fail(verbs, peer, conn,
                        coll_async_verbs_reject_text(coll_async_verbs_reject_decode(data, length)),
                        -ECONNREFUSED);
        return;
    case RDMA_CM_EVENT_DISCONNECTED:
        verbs_peer_fail(verbs, peer, conn, "disconnected by the peer", -ECONNRESET);
        return;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
        verbs_peer_fail(verbs, peer, conn, "device removed", -ENODEV);
        return;
    default:
        return; /* ESTABLISHED (the proof settled it), TIMEWAIT_EXIT, ADDR_CHANGE */
    }
}

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
bool verbs_cm_event(struct coll_async_verbs *verbs)
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
        verbs_kick(verbs, conn->peer);
    }
    return true;
}
