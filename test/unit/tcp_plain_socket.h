/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The TCP transport's unit tests (test_tcp.c, test_tcp_jobs.c): a transport in
 * this process made to progress, and a plain socket that plays a peer or a
 * stranger against it (the frames it writes: test/tcp_frames.h).
 */

#ifndef TEST_TCP_PLAIN_SOCKET_H
#define TEST_TCP_PLAIN_SOCKET_H

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "../../ompi/mca/coll/async/transport/coll_async_tcp.h"
#include "../../ompi/mca/coll/async/transport/coll_async_tcp_handshake.h"
#include "../tcp_frames.h"

/* One progress call; sleeps on the transport's fd when it found nothing to do. */
static inline void step(struct coll_async_tcp *tcp)
{
    struct coll_async_transport *t = coll_async_tcp_transport(tcp);
    struct pollfd pfd = {.fd = t->ops->fd(t), .events = POLLIN};

    if (0 == t->ops->progress(t)) {
        (void) poll(&pfd, 1, 1);
    }
}

/* A plain socket connected to tcp's first listener. */
static inline int connect_to(struct coll_async_tcp *tcp)
{
    struct coll_async_transport *t = coll_async_tcp_transport(tcp);
    uint8_t blob[COLL_ASYNC_TCP_ADDRESS_MAX];
    struct coll_async_tcp_addr addr;
    struct sockaddr_in sa = {.sin_family = AF_INET};
    int length = t->ops->address(t, blob, sizeof(blob));
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_int_equal(coll_async_tcp_address_decode(blob, (size_t) length, &addr, 1), 1);
    sa.sin_addr = addr.addr;
    sa.sin_port = htons(addr.port);
    assert_int_equal(connect(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
    return fd;
}

/* Reads length bytes on the plain socket while the transport makes progress. */
static inline void fake_read(struct coll_async_tcp *tcp, int fd, uint8_t *buffer, size_t length)
{
    size_t have = 0;

    while (have < length) {
        ssize_t n = recv(fd, buffer + have, length - have, MSG_DONTWAIT);

        if (n > 0) {
            have += (size_t) n;
        } else {
            assert_true(n < 0 && EAGAIN == errno);
            step(tcp);
        }
    }
}

/* Progresses tcp until the plain socket reads end of stream (it was closed),
 * within seconds. */
static inline void wait_closed(struct coll_async_tcp *tcp, int fd, double seconds)
{
    struct timespec start, now;
    uint8_t byte;

    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        ssize_t n = recv(fd, &byte, 1, MSG_DONTWAIT);

        if (0 == n || (n < 0 && ECONNRESET == errno)) {
            return;
        }
        step(tcp);
        clock_gettime(CLOCK_MONOTONIC, &now);
        assert_true(now.tv_sec - start.tv_sec + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
    }
}

/* Plays a connector on fd that says it is process from (a name) to process to:
 * reads the challenge and sends a hello whose tag is made with key (the
 * acceptor's, or a wrong one). */
static inline void fake_hello(struct coll_async_tcp *tcp, int fd, uint64_t from, uint64_t to,
                              const struct coll_async_key *key, struct coll_async_tcp_hello *hello,
                              uint8_t *challenge)
{
    uint8_t frame[32 + COLL_ASYNC_TCP_HELLO_BYTES];

    fake_read(tcp, fd, frame, 32 + COLL_ASYNC_TCP_CHALLENGE_BYTES);
    assert_int_equal(frame[4], TEST_FRAME_CHALLENGE);
    assert_int_equal(coll_async_tcp_challenge_decode(frame + 32, challenge), 0);
    *hello = (struct coll_async_tcp_hello){.from = from, .to = to, .link = 0, .nlinks = 1};
    memset(hello->nonce, 0x42, sizeof(hello->nonce));
    hello->tag = coll_async_tcp_hello_tag(key, hello, challenge);
    test_frame_header(frame, TEST_FRAME_HELLO, COLL_ASYNC_TCP_HELLO_BYTES, 0, 0, 0);
    coll_async_tcp_hello_encode(hello, frame + 32);
    assert_int_equal(send(fd, frame, sizeof(frame), MSG_NOSIGNAL), (ssize_t) sizeof(frame));
}

#endif /* TEST_TCP_PLAIN_SOCKET_H */
