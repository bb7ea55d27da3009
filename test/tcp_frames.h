/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Tests: TCP frame headers by hand (coll_async_tcp.c's layout), for the peers
 * and strangers that test_tcp and tcp_attack play.
 */

#ifndef COLL_ASYNC_TEST_TCP_FRAMES_H
#define COLL_ASYNC_TEST_TCP_FRAMES_H

#include <stdint.h>
#include <string.h>

#include "../ompi/mca/coll/async/transport/coll_async_wire.h"

#define TEST_FRAME_HEADER 32

enum test_frame_type {
    TEST_FRAME_HELLO = 1,
    TEST_FRAME_ACK,
    TEST_FRAME_EAGER,
    TEST_FRAME_CHUNK,
    TEST_FRAME_CHALLENGE,
    TEST_FRAME_YIELD,
    TEST_FRAME_RTS,
    TEST_FRAME_CTS
};

static inline void test_frame_header(uint8_t *p, enum test_frame_type type, uint32_t length,
                                     uint64_t tag, uint64_t offset, uint64_t total)
{
    memset(p, 0, TEST_FRAME_HEADER);
    coll_async_put_be32(p, length);
    p[4] = (uint8_t) type;
    coll_async_put_be64(p + 8, tag);
    coll_async_put_be64(p + 16, offset);
    coll_async_put_be64(p + 24, total);
}

#endif /* COLL_ASYNC_TEST_TCP_FRAMES_H */
