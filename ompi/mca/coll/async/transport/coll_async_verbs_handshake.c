/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the verbs RC transport's connection handshake. See
 * coll_async_verbs_handshake.h.
 *
 * Layouts, in network byte order:
 *   request  magic (4), from (4), to (4), link (1), 0 (3), eager limit (4), nonce (16)
 *   accept   magic (4), receives (4), eager limit (4), 0 (4), nonce (16), ACCEPT (8)
 *   reject   magic (4), reason (4)
 * What a tag covers: its label (8), from (4), to (4), link (1), eager limit (4),
 * the connector's nonce (16), the acceptor's nonce (16).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "coll_async_verbs_handshake.h"
#include "coll_async_wire.h"

#define MAGIC 0x63617632u /* "cav2": protocol version 2, the authenticated one */
#define TAG_INPUT (8 + 4 + 4 + 1 + 4 + 2 * COLL_ASYNC_VERBS_NONCE_BYTES)

void coll_async_verbs_request_encode(const struct coll_async_verbs_request *request,
                                     uint8_t *data)
{
    memset(data, 0, COLL_ASYNC_VERBS_REQUEST_BYTES);
    coll_async_put_be32(data, MAGIC);
    coll_async_put_be32(data + 4, request->from);
    coll_async_put_be32(data + 8, request->to);
    data[12] = request->link;
    coll_async_put_be32(data + 16, request->eager_limit);
    memcpy(data + 20, request->nonce, COLL_ASYNC_VERBS_NONCE_BYTES);
}

int coll_async_verbs_request_decode(const uint8_t *data, size_t length,
                                    struct coll_async_verbs_request *request)
{
    if (length < COLL_ASYNC_VERBS_REQUEST_BYTES || MAGIC != coll_async_get_be32(data)) {
        return -EPROTO;
    }
    request->from = coll_async_get_be32(data + 4);
    request->to = coll_async_get_be32(data + 8);
    request->link = data[12];
    request->eager_limit = coll_async_get_be32(data + 16);
    memcpy(request->nonce, data + 20, COLL_ASYNC_VERBS_NONCE_BYTES);
    return 0;
}

void coll_async_verbs_accept_encode(const struct coll_async_verbs_accept *accept, uint8_t *data)
{
    memset(data, 0, COLL_ASYNC_VERBS_ACCEPT_BYTES);
    coll_async_put_be32(data, MAGIC);
    coll_async_put_be32(data + 4, accept->receives);
    coll_async_put_be32(data + 8, accept->eager_limit);
    memcpy(data + 16, accept->nonce, COLL_ASYNC_VERBS_NONCE_BYTES);
    coll_async_put_be64(data + 32, accept->tag);
}

int coll_async_verbs_accept_decode(const uint8_t *data, size_t length,
                                   struct coll_async_verbs_accept *accept)
{
    if (length < COLL_ASYNC_VERBS_ACCEPT_BYTES || MAGIC != coll_async_get_be32(data)) {
        return -EPROTO;
    }
    accept->receives = coll_async_get_be32(data + 4);
    accept->eager_limit = coll_async_get_be32(data + 8);
    memcpy(accept->nonce, data + 16, COLL_ASYNC_VERBS_NONCE_BYTES);
    accept->tag = coll_async_get_be64(data + 32);
    return 0;
}

void coll_async_verbs_reject_encode(enum coll_async_verbs_reject reason, uint8_t *data)
{
    coll_async_put_be32(data, MAGIC);
    coll_async_put_be32(data + 4, (uint32_t) reason);
}

int coll_async_verbs_reject_decode(const uint8_t *data, size_t length)
{
    if (length < COLL_ASYNC_VERBS_REJECT_BYTES || MAGIC != coll_async_get_be32(data)) {
        return 0;
    }
    return (int) coll_async_get_be32(data + 4);
}

const char *coll_async_verbs_reject_text(int reason)
{
    switch (reason) {
    case 0:
        return "connection rejected (the peer is gone, or no coll/async listener there)";
    case COLL_ASYNC_VERBS_REJECT_EAGER_LIMIT:
        return "connection rejected: the peer's eager_limit differs";
    case COLL_ASYNC_VERBS_REJECT_PEER:
        return "connection rejected: the peer has failed this process or has a connection on "
               "this link already";
    case COLL_ASYNC_VERBS_REJECT_RESOURCES:
        return "connection rejected: the peer could not set up a queue pair";
    case COLL_ASYNC_VERBS_REJECT_BUSY:
        return "connection rejected: the peer has too many connections that have not proved "
               "themselves";
    default:
        return "connection rejected: protocol mismatch (not this process's peer, or another "
               "version)";
    }
}

static uint64_t tag_of(const struct coll_async_key *key, const char label[8],
                       const struct coll_async_verbs_request *request,
                       const uint8_t *acceptor_nonce)
{
    uint8_t input[TAG_INPUT];

    memcpy(input, label, 8);
    coll_async_put_be32(input + 8, request->from);
    coll_async_put_be32(input + 12, request->to);
    input[16] = request->link;
    coll_async_put_be32(input + 17, request->eager_limit);
    memcpy(input + 21, request->nonce, COLL_ASYNC_VERBS_NONCE_BYTES);
    memcpy(input + 21 + COLL_ASYNC_VERBS_NONCE_BYTES, acceptor_nonce,
           COLL_ASYNC_VERBS_NONCE_BYTES);
    return coll_async_mac(key, input, sizeof(input));
}

uint64_t coll_async_verbs_accept_tag(const struct coll_async_key *key,
                                     const struct coll_async_verbs_request *request,
                                     const uint8_t *acceptor_nonce)
{
    return tag_of(key, "cav2acpt", request, acceptor_nonce);
}

uint64_t coll_async_verbs_proof_tag(const struct coll_async_key *key,
                                    const struct coll_async_verbs_request *request,
                                    const uint8_t *acceptor_nonce)
{
    return tag_of(key, "cav2prof", request, acceptor_nonce);
}
