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
 * transport it puts behind a peer (the first, in order of preference, that
 * takes it), what it refuses, and that a transfer completes through it with the
 * carrying transport's status, length and callback. Two mappers in one process,
 * each over a made-up transport ("near": it reaches only peers whose blob says
 * so) and its own TCP transport on loopback, stand in for two nodes. An eventfd
 * behind a made-up transport stands in for an attached one (a multicast group).
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
#include "../../ompi/mca/coll/async/transport/coll_async_tcp.h"

#define BYTES ((1 << 20) + 3)

/* The made-up preferred transport: takes a peer whose blob is "near", refuses
 * any other with -ENETUNREACH, carries nothing; counts releases. Its fd is an
 * eventfd never written. */
struct near {
    struct coll_async_transport transport;
    int fd, released;
    bool destroyed;
};

static void near_destroy(struct coll_async_transport *t)
{
    struct near *near = (struct near *) t;

    close(near->fd);
    near->destroyed = true;
}

static int near_fd(const struct coll_async_transport *t)
{
    return ((const struct near *) t)->fd;
}

static int near_progress(struct coll_async_transport *t)
{
    (void) t;
    return 0;
}

static int near_add_peer(struct coll_async_transport *t, uint32_t peer,
                         const struct coll_async_key *key, const void *blob, size_t length)
{
    (void) t;
    (void) peer;
    (void) key;
    return 4 == length && 0 == memcmp(blob, "near", 4) ? 0 : -ENETUNREACH;
}

static int near_send(struct coll_async_transport *t, uint32_t peer, uint64_t tag,
                     const void *data, size_t length, struct coll_async_transfer *transfer)
{
    (void) t;
    (void) peer;
    (void) tag;
    (void) data;
    (void) length;
    transfer->error = "near carries nothing";
    return -ENOTSUP;
}

static void near_release(struct coll_async_transport *t, const void *address, size_t length)
{
    (void) address;
    (void) length;
    ++((struct near *) t)->released;
}

static const struct coll_async_transport_ops near_ops = {.name = "near",
                                                         .destroy = near_destroy,
                                                         .progress = near_progress,
                                                         .fd = near_fd,
                                                         .add_peer = near_add_peer,
                                                         .send = near_send,
                                                         .release = near_release};

struct node {
    struct coll_async_net *net;
    struct near near;
    uint8_t blob[COLL_ASYNC_TCP_ADDRESS_MAX]; /* TCP's */
    size_t blob_length;
};

/* A mapper over near, then TCP. */
static void open_node(struct node *node, uint32_t self, uint32_t nprocs)
{
    struct coll_async_tcp_if lo = {"lo", {0}, 8, true};
    struct coll_async_tcp_config config = {.ifs = &lo, .nifs = 1, .self = self,
                                           .nprocs = nprocs, .key = test_key(self)};
    struct coll_async_transport *transports[2];
    struct coll_async_tcp *tcp;
    int length;

    inet_pton(AF_INET, "127.0.0.1", &lo.addr);
    assert_int_equal(0, coll_async_tcp_create(&tcp, &config));
    transports[1] = coll_async_tcp_transport(tcp);
    length = transports[1]->ops->address(transports[1], node->blob, sizeof(node->blob));
    assert_true(length > 0);
    node->blob_length = (size_t) length;
    node->near = (struct near){{&near_ops}, eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), 0, false};
    assert_true(node->near.fd >= 0);
    transports[0] = &node->near.transport;
    assert_int_equal(0, coll_async_net_create(&node->net, nprocs, transports, 2));
}

static void test_choice(void **state)
{
    static struct node a, b;
    struct coll_async_net_blob none[2] = {{NULL, 0}, {NULL, 0}};
    struct coll_async_net_blob far[2] = {{"far!", 4}, {NULL, 0}};
    struct coll_async_net_blob near_blob[2] = {{"near", 4}, {NULL, 0}};
    struct coll_async_net *nothing;

    (void) state;
    assert_int_equal(-EINVAL, coll_async_net_create(&nothing, 2, NULL, 0));
    open_node(&a, 0, 3);
    open_node(&b, 1, 3);
    far[1] = (struct coll_async_net_blob){b.blob, b.blob_length};
    near_blob[1] = far[1];
    assert_string_equal("", coll_async_net_peer_via(a.net, 1));
    /* Nothing published: no transport reaches the peer. */
    assert_int_equal(-ENETUNREACH, coll_async_net_add_peer(a.net, 1, test_key_of(1), none));
    assert_int_equal(-EINVAL, coll_async_net_add_peer(a.net, 3, test_key_of(3), far));
    /* The preferred transport refuses it: the next one takes it. */
    assert_int_equal(0, coll_async_net_add_peer(a.net, 1, test_key_of(1), far));
    assert_string_equal("tcp", coll_async_net_peer_via(a.net, 1));
    assert_int_equal(-EEXIST, coll_async_net_add_peer(a.net, 1, test_key_of(1), far));
    /* Where the preferred one reaches the peer, it carries it. */
    assert_int_equal(0, coll_async_net_add_peer(a.net, 2, test_key_of(2), near_blob));
    assert_string_equal("near", coll_async_net_peer_via(a.net, 2));
    /* A transfer goes to the carrying transport, which says why it failed. */
    {
        struct coll_async_transfer send = {0};

        assert_int_equal(-ENOTSUP, coll_async_net_send_bulk(a.net, 2, 1, "x", 1, &send));
        assert_int_equal(-ENOTSUP, send.status);
        assert_string_equal("near carries nothing", send.error);
    }
    /* Released memory reaches every transport that keeps some. */
    coll_async_net_release(a.net, &a, sizeof(a));
    assert_int_equal(1, a.near.released);
    coll_async_net_destroy(a.net);
    coll_async_net_destroy(b.net);
    assert_true(a.near.destroyed);
    assert_true(b.near.destroyed);
}

static void count_completion(struct coll_async_transfer *transfer)
{
    ++*(int *) transfer->context;
}

static void test_transfer(void **state)
{
    static uint8_t out[BYTES], in[BYTES + 100];
    static struct node a, b;
    int completions = 0;
    struct coll_async_transfer send = {.complete = count_completion, .context = &completions};
    struct coll_async_transfer recv = {.complete = count_completion, .context = &completions};
    struct coll_async_transfer stray = {0};
    struct coll_async_net_blob to_b[2] = {{NULL, 0}, {NULL, 0}}, to_a[2] = {{NULL, 0}, {NULL, 0}};

    (void) state;
    for (size_t i = 0; i < BYTES; ++i) {
        out[i] = (uint8_t) (i * 7 + 1);
    }
    open_node(&a, 0, 2);
    open_node(&b, 1, 2);
    to_b[1] = (struct coll_async_net_blob){b.blob, b.blob_length};
    to_a[1] = (struct coll_async_net_blob){a.blob, a.blob_length};
    /* A post to a peer never added fails at once, saying why. */
    assert_int_equal(-ENETUNREACH, coll_async_net_send_bulk(a.net, 1, 5, out, 1, &stray));
    assert_non_null(stray.error);
    assert_int_equal(0, coll_async_net_add_peer(a.net, 1, test_key_of(1), to_b));
    assert_int_equal(0, coll_async_net_add_peer(b.net, 0, test_key_of(0), to_a));
    assert_int_equal(0, coll_async_net_send_bulk(a.net, 1, 5, out, BYTES, &send));
    assert_int_equal(0, coll_async_net_recv_bulk(b.net, 0, 5, in, sizeof(in), &recv));
    assert_int_equal(COLL_ASYNC_TRANSFER_PENDING, recv.status);
    while (COLL_ASYNC_TRANSFER_PENDING == send.status
           || COLL_ASYNC_TRANSFER_PENDING == recv.status) {
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

/* An attached transport over an eventfd: its count, read by its progress. */
struct counter {
    struct coll_async_transport transport;
    int fd;
};

static int counter_fd(const struct coll_async_transport *t)
{
    return ((const struct counter *) t)->fd;
}

static int counter_progress(struct coll_async_transport *t)
{
    uint64_t count = 0;

    return read(((struct counter *) t)->fd, &count, sizeof(count)) == sizeof(count)
               ? (int) count
               : 0;
}

static const struct coll_async_transport_ops counter_ops = {
    .name = "counter", .progress = counter_progress, .fd = counter_fd};

static bool readable(int fd)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};

    return 1 == poll(&pfd, 1, 0);
}

static void test_attached_transport(void **state)
{
    static const uint64_t three = 3;
    static struct node a;
    struct counter source = {{&counter_ops}, eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)};

    (void) state;
    assert_true(source.fd >= 0);
    open_node(&a, 0, 2);
    assert_int_equal(0, coll_async_net_attach(a.net, &source.transport));
    assert_int_equal(0, coll_async_net_progress(a.net));
    assert_false(readable(coll_async_net_fd(a.net)));
    /* Work on it wakes a sleeper on the mapper's fd; the mapper's progress does it. */
    assert_int_equal(sizeof(three), write(source.fd, &three, sizeof(three)));
    assert_true(readable(coll_async_net_fd(a.net)));
    assert_int_equal(3, coll_async_net_progress(a.net));
    assert_false(readable(coll_async_net_fd(a.net)));
    /* Detached: neither woken nor driven, nor destroyed with the mapper. */
    coll_async_net_detach(a.net, &source.transport);
    assert_int_equal(sizeof(three), write(source.fd, &three, sizeof(three)));
    assert_false(readable(coll_async_net_fd(a.net)));
    assert_int_equal(0, coll_async_net_progress(a.net));
    coll_async_net_destroy(a.net);
    assert_int_equal(3, counter_progress(&source.transport));
    close(source.fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_choice),
                                       cmocka_unit_test(test_transfer),
                                       cmocka_unit_test(test_attached_transport)};

    return cmocka_run_group_tests(tests, NULL, NULL);
}
