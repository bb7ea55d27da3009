/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: integers on the wire, in network byte order, at any alignment:
 * the handshakes', frames' and multicast packets' encoders and decoders share these.
 */

#ifndef MCA_COLL_ASYNC_WIRE_H
#define MCA_COLL_ASYNC_WIRE_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline void coll_async_put_be32(uint8_t *p, uint32_t value)
{
    value = htobe32(value);
    memcpy(p, &value, 4);
}

static inline uint32_t coll_async_get_be32(const uint8_t *p)
{
    uint32_t value;

    memcpy(&value, p, 4);
    return be32toh(value);
}

static inline void coll_async_put_be64(uint8_t *p, uint64_t value)
{
    value = htobe64(value);
    memcpy(p, &value, 8);
}

static inline uint64_t coll_async_get_be64(const uint8_t *p)
{
    uint64_t value;

    memcpy(&value, p, 8);
    return be64toh(value);
}

#endif /* MCA_COLL_ASYNC_WIRE_H */
