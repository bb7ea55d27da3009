/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the verbs RC transport's connection handshake: what rdma_cm's
 * private data and the first message on a new queue pair carry, and the MACs
 * (coll_async_auth.h) that make a connection the job's.
 *
 * Every connection is set up by its sender, the connector, to the process it
 * sends to, the acceptor, and both prove they hold the acceptor's key (its card
 * key, which only the job's processes read from the modex), without the key
 * crossing the wire and with a fresh nonce from each side:
 *
 *   request  connect private data, connector -> acceptor (36 of rdma_cm's 56
 *            bytes): the version, the connector's id, the acceptor's id as the
 *            connector knows it, the link, the eager limit, the connector's
 *            nonce;
 *   accept   accept private data, acceptor -> connector (40 of 196 bytes): the
 *            version, the receives the connector may use before it has proved
 *            itself, the eager limit, the acceptor's nonce (the challenge), and
 *            ACCEPT = MAC(acceptor's key, "accept", request, both nonces);
 *   proof    the connector's first SEND on the queue pair, before anything else:
 *            PROOF = MAC(acceptor's key, "proof", request, both nonces).
 *
 * The connector checks ACCEPT before its queue pair leaves INIT: a process
 * that took over the acceptor's address gets nothing. The acceptor checks
 * PROOF with its own key only, so it can accept a job peer it has not added
 * yet; until PROOF has come, nothing from the queue pair is delivered, its
 * queue pair takes no RDMA write, and the connector holds only the credits the
 * proof needs (coll_async_verbs_internal.h). A recorded handshake is of no use again:
 * the acceptor's nonce is new on every connection, and both tags cover it. The
 * labels keep one tag from standing for the other.
 *
 * Pure C with no Open MPI or rdma-core dependency: the transport and the tests
 * that forge handshakes both use it.
 */

#ifndef MCA_COLL_ASYNC_VERBS_HANDSHAKE_H
#define MCA_COLL_ASYNC_VERBS_HANDSHAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll_async_auth.h"

#define COLL_ASYNC_VERBS_NONCE_BYTES 16
#define COLL_ASYNC_VERBS_REQUEST_BYTES 36
#define COLL_ASYNC_VERBS_ACCEPT_BYTES 40
#define COLL_ASYNC_VERBS_REJECT_BYTES 8

/* The connect request's private data. */
struct coll_async_verbs_request {
    uint32_t from;        /* the connector's id */
    uint32_t to;          /* the acceptor's id, as the connector knows it */
    uint8_t link;
    uint32_t eager_limit;
    uint8_t nonce[COLL_ASYNC_VERBS_NONCE_BYTES];
};

/* The accept's private data. */
struct coll_async_verbs_accept {
    uint32_t receives;    /* the connector's credits until it has proved itself */
    uint32_t eager_limit;
    uint8_t nonce[COLL_ASYNC_VERBS_NONCE_BYTES];
    uint64_t tag;         /* ACCEPT */
};

/* Why an acceptor rejected a request (the reject's private data). */
enum coll_async_verbs_reject {
    COLL_ASYNC_VERBS_REJECT_PROTOCOL = 1, /* not a coll/async request, or not for us */
    COLL_ASYNC_VERBS_REJECT_EAGER_LIMIT,
    COLL_ASYNC_VERBS_REJECT_PEER,         /* failed already, or the link is connected */
    COLL_ASYNC_VERBS_REJECT_RESOURCES,
    COLL_ASYNC_VERBS_REJECT_BUSY          /* too many connections not proved yet */
};

/* Encoders write exactly their _BYTES; decoders take what rdma_cm delivered
 * (padded with zeros on InfiniBand and RoCE) and return 0, or -EPROTO when it
 * is too short or of another protocol or version. */
void coll_async_verbs_request_encode(const struct coll_async_verbs_request *request,
                                     uint8_t *data);
int coll_async_verbs_request_decode(const uint8_t *data, size_t length,
                                    struct coll_async_verbs_request *request);
void coll_async_verbs_accept_encode(const struct coll_async_verbs_accept *accept, uint8_t *data);
int coll_async_verbs_accept_decode(const uint8_t *data, size_t length,
                                   struct coll_async_verbs_accept *accept);
void coll_async_verbs_reject_encode(enum coll_async_verbs_reject reason, uint8_t *data);

/* The reason a reject carries, 0 when it is no coll/async reject (no
 * listener, or the peer is gone), and what it means in words. */
int coll_async_verbs_reject_decode(const uint8_t *data, size_t length);
const char *coll_async_verbs_reject_text(int reason);

/* ACCEPT and PROOF for request and the acceptor's nonce, under the acceptor's key. */
uint64_t coll_async_verbs_accept_tag(const struct coll_async_key *key,
                                     const struct coll_async_verbs_request *request,
                                     const uint8_t *acceptor_nonce);
uint64_t coll_async_verbs_proof_tag(const struct coll_async_key *key,
                                    const struct coll_async_verbs_request *request,
                                    const uint8_t *acceptor_nonce);

#endif /* MCA_COLL_ASYNC_VERBS_HANDSHAKE_H */
