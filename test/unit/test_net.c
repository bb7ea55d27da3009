/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of transport/coll_async_net.c, the mapper between nodes: which
 * transport it puts behind a peer, what it refuses, and that an op completes
 * through it with the carrying transport's status, length and callback. Two
 * mappers in one process, each over its own TCP transport on loopback, stand in
 * for two nodes. An eventfd stands in for an attached source (a multicast group).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_keys.h"

#include "../../ompi/mca/coll/async/transport/coll_async_net.h"

#define BYTES ((1 << 20) + 3)

struct node {
    struct coll_async_net *net;
    uint8_t blob[COLL_ASYNC_TCP_ADDRESS_MAX];
    size_t blob_length;
};

static void open_node(struct node *node, uint32_t self)
{
    struct coll_async_tcp_if lo = {"lo", {0}, 8, true};
    struct coll_async_tcp_config config = {.ifs = &lo, .nifs = 1, .self = self, .nprocs = 2,
                                           .key = test_key(self)};
    struct coll_async_tcp *tcp;
    int length;

    inet_pton(AF_INET, "127.0.0.1", &lo.addr);
    assert_int_equal(0, coll_async_tcp_create(&tcp, &config));
    length = coll_async_tcp_address(tcp, node->blob, sizeof(node->blob));
    assert_true(length > 0);
    node->blob_length = (size_t) length;
    assert_int_equal(0, coll_async_net_create(&node->net, 2, tcp, NULL));
}

static void test_choice(void **state)
{
    struct node a, b;
    uint8_t junk[8] = {0};
    struct coll_async_net *none;

    (void) state;
    assert_int_equal(-EINVAL, coll_async_net_create(&none, 2, NULL, NULL));
    open_node(&a, 0);
    open_node(&b, 1);
    assert_int_equal(COLL_ASYNC_NET_NONE, coll_async_net_peer_via(a.net, 1));
    /* Nothing published: no transport reaches the peer. */
    assert_int_equal(-ENETUNREACH, coll_async_net_add_peer(a.net, 1, test_key_of(1),
                                                           NULL, 0, NULL, 0));
    assert_int_equal(-EINVAL, coll_async_net_add_peer(a.net, 2, test_key_of(2),
                                                      b.blob, b.blob_length, NULL, 0));
    /* A verbs blob and no verbs transport here: TCP. */
    assert_int_equal(0, coll_async_net_add_peer(a.net, 1, test_key_of(1),
                                                b.blob, b.blob_length, junk,
                                                sizeof(junk)));
    assert_int_equal(COLL_ASYNC_NET_TCP, coll_async_net_peer_via(a.net, 1));
    assert_int_equal(-EEXIST, coll_async_net_add_peer(a.net, 1, test_key_of(1),
                                                      b.blob, b.blob_length, NULL, 0));
    assert_ptr_not_equal(NULL, coll_async_net_tcp(a.net));
    assert_ptr_equal(NULL, coll_async_net_verbs(a.net));
    coll_async_net_destroy(a.net);
    coll_async_net_destroy(b.net);
}

static void count_completion(struct coll_async_net_op *op)
{
    ++*(int *) op->context;
}

static void test_transfer(void **state)
{
    static uint8_t out[BYTES], in[BYTES + 100];
    struct node a, b;
    int completions = 0;
    struct coll_async_net_op send = {.complete = count_completion, .context = &completions};
    struct coll_async_net_op recv = {.complete = count_completion, .context = &completions};
    struct coll_async_net_op stray = {0};

    (void) state;
    for (size_t i = 0; i < BYTES; ++i) {
        out[i] = (uint8_t) (i * 7 + 1);
    }
    open_node(&a, 0);
    open_node(&b, 1);
    /* A post to a peer never added fails at once, saying why. */
    assert_int_equal(-ENETUNREACH, coll_async_net_send_bulk(a.net, 1, 5, out, 1, &stray));
    assert_non_null(stray.error);
    assert_int_equal(0, coll_async_net_add_peer(a.net, 1, test_key_of(1),
                                                b.blob, b.blob_length, NULL, 0));
    assert_int_equal(0, coll_async_net_add_peer(b.net, 0, test_key_of(0),
                                                a.blob, a.blob_length, NULL, 0));
    assert_int_equal(0, coll_async_net_send_bulk(a.net, 1, 5, out, BYTES, &send));
    assert_int_equal(0, coll_async_net_recv_bulk(b.net, 0, 5, in, sizeof(in), &recv));
    assert_int_equal(COLL_ASYNC_NET_PENDING, recv.status);
    while (COLL_ASYNC_NET_PENDING == send.status || COLL_ASYNC_NET_PENDING == recv.status) {
        coll_async_net_progress(a.net);
        coll_async_net_progress(b.net);
    }
    assert_int_equal(0, send.status);
    assert_int_equal(0, recv.status);
    assert_int_equal(2, completions);
    assert_int_equal(BYTES, recv.bytes);
    assert_memory_equal(out, in, BYTES);
    coll_async_net_destroy(a.net);
    coll_async_net_destroy(b.net);
}

/* An attached source: the eventfd's count, read by its progress. */
static int drain_eventfd(void *context)
{
    uint64_t count = 0;

    return read(*(int *) context, &count, sizeof(count)) == sizeof(count) ? (int) count : 0;
}

static bool readable(int fd)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};

    return 1 == poll(&pfd, 1, 0);
}

static void test_attached_source(void **state)
{
    static const uint64_t three = 3;
    struct node a;
    int source = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

    (void) state;
    assert_true(source >= 0);
    open_node(&a, 0);
    assert_int_equal(0, coll_async_net_attach(a.net, source, drain_eventfd, &source));
    assert_int_equal(0, coll_async_net_progress(a.net));
    assert_false(readable(coll_async_net_fd(a.net)));
    /* Work on the source wakes a sleeper on the mapper's fd; the mapper's progress does it. */
    assert_int_equal(sizeof(three), write(source, &three, sizeof(three)));
    assert_true(readable(coll_async_net_fd(a.net)));
    assert_int_equal(3, coll_async_net_progress(a.net));
    assert_false(readable(coll_async_net_fd(a.net)));
    /* Detached: neither woken nor driven. */
    coll_async_net_detach(a.net, &source);
    assert_int_equal(sizeof(three), write(source, &three, sizeof(three)));
    assert_false(readable(coll_async_net_fd(a.net)));
    assert_int_equal(0, coll_async_net_progress(a.net));
    coll_async_net_destroy(a.net);
    close(source);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_choice),
                                       cmocka_unit_test(test_transfer),
                                       cmocka_unit_test(test_attached_source)};

    return cmocka_run_group_tests(tests, NULL, NULL);
}
