/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the TCP transport's connection handshake: what the first frames
 * on a new connection carry, and the MACs (coll_async_auth.h) that make a
 * connection the job's.
 *
 * Both sides prove they belong, each under the other's key (its card key,
 * which only the job's processes read from the modex), without a key crossing
 * the wire and with a fresh nonce from each side:
 *
 *   challenge  acceptor -> connector, sent on accept: the version and the
 *              acceptor's nonce (the challenge);
 *   hello      connector -> acceptor: the version, the connector's name, the
 *              acceptor's name as the connector knows it, the link and the
 *              number of links, the connector's nonce, and
 *              HELLO = MAC(acceptor's key, "hello", version, challenge, nonce,
 *                          both names, link, links);
 *   ack        acceptor -> connector: ACK = MAC(connector's key, "ack", the same).
 *
 * The acceptor checks HELLO with its own key only, so a stranger that knows
 * the protocol but not the key is refused before it is anybody's link. The
 * connector checks ACK with its own key: a process that took over the
 * peer's address gets nothing. A recorded handshake is of no use again: the
 * challenge is new on every connection and both tags cover it; the labels keep
 * one tag from standing for the other.
 *
 * A process is named on the wire by what every job agrees on (Open MPI's
 * 64-bit process name, jobid << 32 | vpid: coll_async_tcp.h's names), not
 * by the id the transport's caller gives it, which is its own numbering.
 *
 * Pure C with no Open MPI dependency: the transport and the tests that forge
 * handshakes both use it.
 */

#ifndef MCA_COLL_ASYNC_TCP_HANDSHAKE_H
#define MCA_COLL_ASYNC_TCP_HANDSHAKE_H

#include <stddef.h>
#include <stdint.h>

#include "coll_async_auth.h"

#define COLL_ASYNC_TCP_VERSION 3 /* 2 named processes by 32-bit ids of one job;
                                  * 1 took any hello that named a peer */
#define COLL_ASYNC_TCP_NONCE_BYTES 16
#define COLL_ASYNC_TCP_CHALLENGE_BYTES (4 + COLL_ASYNC_TCP_NONCE_BYTES)
#define COLL_ASYNC_TCP_HELLO_BYTES (4 + 8 + 8 + 4 + COLL_ASYNC_TCP_NONCE_BYTES + 8)
#define COLL_ASYNC_TCP_ACK_BYTES 8

/* What the connector's hello says, and what both tags cover with the challenge. */
struct coll_async_tcp_hello {
    uint64_t from;   /* the connector's name */
    uint64_t to;     /* the acceptor's name, as the connector knows it */
    uint8_t link;
    uint8_t nlinks;  /* links the connector plans with the acceptor */
    uint8_t nonce[COLL_ASYNC_TCP_NONCE_BYTES];
    uint64_t tag;    /* HELLO */
};

/* Encoders write exactly their _BYTES; decoders take exactly that many and
 * return 0, or -EPROTO for another version or nonzero reserved bytes. */
void coll_async_tcp_challenge_encode(const uint8_t *challenge, uint8_t *data);
int coll_async_tcp_challenge_decode(const uint8_t *data, uint8_t *challenge);
void coll_async_tcp_hello_encode(const struct coll_async_tcp_hello *hello, uint8_t *data);
int coll_async_tcp_hello_decode(const uint8_t *data, struct coll_async_tcp_hello *hello);

/* HELLO under the acceptor's key, ACK under the connector's. */
uint64_t coll_async_tcp_hello_tag(const struct coll_async_key *acceptor_key,
                                  const struct coll_async_tcp_hello *hello,
                                  const uint8_t *challenge);
uint64_t coll_async_tcp_ack_tag(const struct coll_async_key *connector_key,
                                const struct coll_async_tcp_hello *hello,
                                const uint8_t *challenge);

#endif /* MCA_COLL_ASYNC_TCP_HANDSHAKE_H */
