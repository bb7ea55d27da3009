/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the TCP transport's connection handshake. See
 * coll_async_tcp_handshake.h.
 *
 * Payloads, in network byte order (the frame header around them is the
 * transport's):
 *   challenge  version (4), challenge (16)
 *   hello      version (4), from (8), to (8), link (1), links (1), 0 (2),
 *              nonce (16), HELLO (8)
 *   ack        ACK (8)
 * What a tag covers: its label (8), version (4), the challenge (16), the
 * connector's nonce (16), from (8), to (8), link (1), links (1).
 */

#include <errno.h>
#include <string.h>

#include "coll_async_tcp_handshake.h"
#include "coll_async_wire.h"

#define TAG_INPUT (8 + 4 + 2 * COLL_ASYNC_TCP_NONCE_BYTES + 8 + 8 + 1 + 1)

void coll_async_tcp_challenge_encode(const uint8_t *challenge, uint8_t *data)
{
    coll_async_put_be32(data, COLL_ASYNC_TCP_VERSION);
    memcpy(data + 4, challenge, COLL_ASYNC_TCP_NONCE_BYTES);
}

int coll_async_tcp_challenge_decode(const uint8_t *data, uint8_t *challenge)
{
    if (COLL_ASYNC_TCP_VERSION != coll_async_get_be32(data)) {
        return -EPROTO;
    }
    memcpy(challenge, data + 4, COLL_ASYNC_TCP_NONCE_BYTES);
    return 0;
}

void coll_async_tcp_hello_encode(const struct coll_async_tcp_hello *hello, uint8_t *data)
{
    memset(data, 0, COLL_ASYNC_TCP_HELLO_BYTES);
    coll_async_put_be32(data, COLL_ASYNC_TCP_VERSION);
    coll_async_put_be64(data + 4, hello->from);
    coll_async_put_be64(data + 12, hello->to);
    data[20] = hello->link;
    data[21] = hello->nlinks;
    memcpy(data + 24, hello->nonce, COLL_ASYNC_TCP_NONCE_BYTES);
    coll_async_put_be64(data + 40, hello->tag);
}

int coll_async_tcp_hello_decode(const uint8_t *data, struct coll_async_tcp_hello *hello)
{
    if (COLL_ASYNC_TCP_VERSION != coll_async_get_be32(data) || 0 != data[22] || 0 != data[23]) {
        return -EPROTO;
    }
    hello->from = coll_async_get_be64(data + 4);
    hello->to = coll_async_get_be64(data + 12);
    hello->link = data[20];
    hello->nlinks = data[21];
    memcpy(hello->nonce, data + 24, COLL_ASYNC_TCP_NONCE_BYTES);
    hello->tag = coll_async_get_be64(data + 40);
    return 0;
}

static uint64_t tag_of(const struct coll_async_key *key, const char label[8],
                       const struct coll_async_tcp_hello *hello, const uint8_t *challenge)
{
    uint8_t input[TAG_INPUT], *p = input;

    memcpy(p, label, 8);
    coll_async_put_be32(p + 8, COLL_ASYNC_TCP_VERSION);
    p += 12;
    memcpy(p, challenge, COLL_ASYNC_TCP_NONCE_BYTES);
    p += COLL_ASYNC_TCP_NONCE_BYTES;
    memcpy(p, hello->nonce, COLL_ASYNC_TCP_NONCE_BYTES);
    p += COLL_ASYNC_TCP_NONCE_BYTES;
    coll_async_put_be64(p, hello->from);
    coll_async_put_be64(p + 8, hello->to);
    p[16] = hello->link;
    p[17] = hello->nlinks;
    return coll_async_mac(key, input, sizeof(input));
}

uint64_t coll_async_tcp_hello_tag(const struct coll_async_key *acceptor_key,
                                  const struct coll_async_tcp_hello *hello,
                                  const uint8_t *challenge)
{
    return tag_of(acceptor_key, "hello\0\0\0", hello, challenge);
}

uint64_t coll_async_tcp_ack_tag(const struct coll_async_key *connector_key,
                                const struct coll_async_tcp_hello *hello,
                                const uint8_t *challenge)
{
    return tag_of(connector_key, "ack\0\0\0\0\0", hello, challenge);
}
