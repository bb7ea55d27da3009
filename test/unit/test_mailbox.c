/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */


/*
 * Unit tests of transport/coll_async_mailbox*.c, the shared-memory transport,
 * called through its table of functions as the mapper does: what it carries.
 * Sizes around the chunk and up to 16 MiB, staged and with CMA, receives posted
 * before and after their sends; four ranks all-to-all with many tags in flight;
 * a transfer longer than its receive; a refused CMA pull; a late receive and a
 * slow peer that must not stop the sender's others; peers added late, after
 * they sent; the transport behind the mapper. MAILBOX_BENCH=1 also prints a ping-pong of both modes.
 * test_mailbox_guard.c holds what it refuses and how it fails.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "../../ompi/mca/coll/async/transport/coll_async_net.h"
#include "mailbox_ranks.h"

/* Sizes, both ways, receives before and after their sends */

static const size_t sizes[] = {0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5,
                               64 * 1024, (1 << 20) + 3, BIG};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static void sizes_rank(int rank, int nranks)
{
    transport_t *t = open_all(rank, nranks);
    struct coll_async_transfer send[NSIZES] = {{0}}, recv[NSIZES] = {{0}};
    uint8_t *out[NSIZES], *in[NSIZES];
    struct coll_async_mailbox_stats stats;
    uint32_t peer = (uint32_t) (1 - rank);
    size_t big = 0;

    for (size_t k = 0; k < NSIZES; ++k) {
        out[k] = malloc(sizes[k] + 1);
        in[k] = calloc(1, sizes[k] + 1);
        CHECK(NULL != out[k] && NULL != in[k]);
        fill(out[k], sizes[k], rank, k);
        big += sizes[k] >= cma_min;
    }
    for (size_t k = 0; k < NSIZES; k += 2) { /* even tags: posted before the sends */
        CHECK(0 == t->ops->recv(t, peer, k, in[k], sizes[k], &recv[k]));
    }
    barrier(t);
    for (size_t k = 0; k < NSIZES; ++k) {
        CHECK(0 == t->ops->send(t, peer, k, out[k], sizes[k], &send[k]));
    }
    barrier(t); /* odd tags: after, once their first pieces are here */
    for (size_t k = 1; k < NSIZES; k += 2) {
        CHECK(0 == t->ops->recv(t, peer, k, in[k], sizes[k] + 1, &recv[k]));
    }
    for (size_t k = 0; k < NSIZES; ++k) {
        wait_op(t, &send[k]);
        wait_op(t, &recv[k]);
        if (0 != recv[k].status || 0 != send[k].status) {
            fprintf(stderr, "size %zu: %s / %s\n", sizes[k], recv[k].error, send[k].error);
        }
        CHECK(0 == send[k].status && 0 == recv[k].status);
        CHECK(sizes[k] == recv[k].bytes);
        CHECK(holds(in[k], sizes[k], 1 - rank, k) && 0 == in[k][sizes[k]]);
        free(out[k]);
        free(in[k]);
    }
    coll_async_mailbox_stats(t, &stats);
    CHECK(stats.staged_sends + stats.cma_sends == NSIZES && 0 == stats.refused);
    CHECK(stats.cma_sends == (use_cma ? big : 0) && 0 == stats.cma_fallbacks);
    barrier(t);
    t->ops->destroy(t);
}

static void test_sizes_staged(void **state)
{
    (void) state;
    run_ranks(2, sizes_rank, false);
}

static void test_sizes_cma(void **state)
{
    (void) state;
    run_ranks(2, sizes_rank, true);
}

/* Four ranks, all-to-all, many tags in flight both ways */

#define TAGS 24

static size_t a2a_length(int from, int to, int k)
{
    static const size_t lengths[] = {0, 8, 1000, CHUNK, 5 * CHUNK + 3, 200 * 1024};

    return lengths[(size_t) (from * 5 + to * 3 + k) % (sizeof(lengths) / sizeof(lengths[0]))];
}

static void all_to_all_rank(int rank, int nranks)
{
    transport_t *t = open_all(rank, nranks);
    struct coll_async_transfer (*send)[TAGS] = calloc(MAX_RANKS, sizeof(*send));
    struct coll_async_transfer (*recv)[TAGS] = calloc(MAX_RANKS, sizeof(*recv));
    uint8_t *out[MAX_RANKS][TAGS], *in[MAX_RANKS][TAGS];

    CHECK(NULL != send && NULL != recv);
    for (int k = 0; k < TAGS; ++k) {
        for (int p = 0; p < nranks; ++p) {
            if (p == rank) {
                continue;
            }
            out[p][k] = malloc(a2a_length(rank, p, k) + 1);
            in[p][k] = malloc(a2a_length(p, rank, k) + 1);
            fill(out[p][k], a2a_length(rank, p, k), rank, (uint64_t) (k * 16 + p));
            /* Half the receives before the sends, in an order of their own. */
            if ((k + rank) % 2) {
                CHECK(0 == t->ops->recv(t, (uint32_t) p, (uint64_t) k, in[p][k],
                                        a2a_length(p, rank, k), &recv[p][k]));
            }
            CHECK(0 == t->ops->send(t, (uint32_t) p, (uint64_t) k, out[p][k],
                                    a2a_length(rank, p, k), &send[p][k]));
        }
    }
    for (int k = TAGS - 1; k >= 0; --k) {
        for (int p = 0; p < nranks; ++p) {
            if (p != rank && 0 == (k + rank) % 2) {
                step(t);
                CHECK(0 == t->ops->recv(t, (uint32_t) p, (uint64_t) k, in[p][k],
                                        a2a_length(p, rank, k) + 1, &recv[p][k]));
            }
        }
    }
    for (int p = 0; p < nranks; ++p) {
        for (int k = 0; k < TAGS && p != rank; ++k) {
            wait_op(t, &send[p][k]);
            wait_op(t, &recv[p][k]);
            CHECK(0 == send[p][k].status && 0 == recv[p][k].status);
            CHECK(a2a_length(p, rank, k) == recv[p][k].bytes);
            CHECK(holds(in[p][k], a2a_length(p, rank, k), p, (uint64_t) (k * 16 + rank)));
            free(out[p][k]);
            free(in[p][k]);
        }
    }
    barrier(t);
    t->ops->destroy(t);
    free(send);
    free(recv);
}

static void test_all_to_all_staged(void **state)
{
    (void) state;
    run_ranks(4, all_to_all_rank, false);
}

static void test_all_to_all_cma(void **state)
{
    (void) state;
    run_ranks(4, all_to_all_rank, true);
}

/* A transfer longer than its receive fails on both sides; the tag then works again. */
static void too_long(bool cma, size_t length, bool posted_first)
{
    struct coll_async_transfer send = {0}, recv = {0}, send2 = {0}, recv2 = {0};
    uint8_t *out = malloc(length), *in = calloc(1, length);
    struct group g;

    open_group(&g, 2, cma);
    fill(out, length, 0, 1);
    if (posted_first) {
        assert_int_equal(g.t[1]->ops->recv(g.t[1], 0, 5, in, length / 2, &recv), 0);
    }
    assert_int_equal(g.t[0]->ops->send(g.t[0], 1, 5, out, length, &send), 0);
    group_step(&g);
    if (!posted_first) {
        assert_int_equal(g.t[1]->ops->recv(g.t[1], 0, 5, in, length / 2, &recv), 0);
    }
    group_wait(&g, &recv);
    group_wait(&g, &send);
    assert_int_equal(recv.status, -EMSGSIZE);
    assert_int_equal(send.status, -EMSGSIZE);
    assert_non_null(strstr(recv.error, "peer 0 (pid"));
    assert_non_null(strstr(recv.error, "longer than the receive"));
    assert_non_null(strstr(send.error, "peer 1 (pid"));
    assert_non_null(strstr(send.error, "shorter than the send"));
    assert_int_equal(g.t[0]->ops->send(g.t[0], 1, 5, out, length, &send2), 0);
    assert_int_equal(g.t[1]->ops->recv(g.t[1], 0, 5, in, length, &recv2), 0);
    group_wait(&g, &recv2);
    group_wait(&g, &send2);
    assert_int_equal(recv2.status, 0);
    assert_int_equal(send2.status, 0);
    assert_true(holds(in, length, 0, 1));
    close_group(&g);
    free(out);
    free(in);
}

static void test_too_long(void **state)
{
    (void) state;
    too_long(false, 5 * CHUNK + 7, true);
    too_long(false, 5 * CHUNK + 7, false);
    too_long(false, 2, false);
    too_long(true, 1 << 20, true);
    too_long(true, 1 << 20, false);
}

/* A pull the kernel refuses: the sender falls back to staged, for good. */
static void test_cma_fallback(void **state)
{
    enum { LENGTH = (1 << 20) + 9 };
    struct coll_async_transfer send = {0}, recv = {0};
    struct coll_async_mailbox_stats stats;
    uint8_t *out = malloc(LENGTH), *in = malloc(LENGTH);
    struct group g;

    (void) state;
    open_group(&g, 2, true);
    coll_async_mailbox_test_fail_cma(g.t[1], -EPERM);
    for (int round = 0; round < 2; ++round) {
        fill(out, LENGTH, 0, (uint64_t) round);
        memset(in, 0, LENGTH);
        assert_int_equal(g.t[1]->ops->recv(g.t[1], 0, 3, in, LENGTH, &recv), 0);
        assert_int_equal(g.t[0]->ops->send(g.t[0], 1, 3, out, LENGTH, &send), 0);
        group_wait(&g, &recv);
        group_wait(&g, &send);
        assert_int_equal(recv.status, 0);
        assert_int_equal(send.status, 0);
        assert_true(holds(in, LENGTH, 0, (uint64_t) round));
    }
    coll_async_mailbox_stats(g.t[0], &stats);
    assert_int_equal(stats.cma_fallbacks, 1);
    assert_int_equal(stats.staged_sends, 2);
    assert_int_equal(stats.cma_sends, 0);

    /* The other way CMA still works. */
    assert_int_equal(g.t[0]->ops->recv(g.t[0], 1, 4, in, LENGTH, &recv), 0);
    assert_int_equal(g.t[1]->ops->send(g.t[1], 0, 4, out, LENGTH, &send), 0);
    group_wait(&g, &recv);
    group_wait(&g, &send);
    assert_int_equal(recv.status, 0);
    assert_true(holds(in, LENGTH, 0, 1));
    coll_async_mailbox_stats(g.t[1], &stats);
    assert_int_equal(stats.cma_sends, 1);
    close_group(&g);
    free(out);
    free(in);
}

/* A transfer whose receive comes late must not hold the sender's chunks from
 * the others: 0 sends A to 1 and B to 2; 2 answers B with C to 1; 1 posts A's
 * receive only after C. Holding chunks until A's receive would deadlock. */
static void test_late_receive_frees_chunks(void **state)
{
    enum { A = 4 * CHUNKS * CHUNK + 3, B = 1000 };
    struct coll_async_transfer send_a = {0}, send_b = {0}, send_c = {0};
    struct coll_async_transfer recv_a = {0}, recv_b = {0}, recv_c = {0};
    uint8_t *out_a = malloc(A), *in_a = calloc(1, A), out_b[B], in_b[B], in_c[B];
    struct group g;

    (void) state;
    open_group(&g, 3, false);
    fill(out_a, A, 0, 1);
    fill(out_b, B, 0, 2);
    assert_int_equal(g.t[0]->ops->send(g.t[0], 1, 1, out_a, A, &send_a), 0);
    assert_int_equal(g.t[0]->ops->send(g.t[0], 2, 2, out_b, B, &send_b), 0);
    assert_int_equal(g.t[2]->ops->recv(g.t[2], 0, 2, in_b, B, &recv_b), 0);
    assert_int_equal(g.t[1]->ops->recv(g.t[1], 2, 3, in_c, B, &recv_c), 0);
    group_wait(&g, &recv_b);
    assert_int_equal(recv_b.status, 0);
    assert_int_equal(g.t[2]->ops->send(g.t[2], 1, 3, in_b, B, &send_c), 0);
    group_wait(&g, &recv_c);
    assert_int_equal(recv_c.status, 0);
    assert_true(holds(in_c, B, 0, 2));
    assert_int_equal(g.t[1]->ops->recv(g.t[1], 0, 1, in_a, A, &recv_a), 0);
    group_wait(&g, &recv_a);
    group_wait(&g, &send_a);
    group_wait(&g, &send_b);
    group_wait(&g, &send_c);
    assert_int_equal(recv_a.status, 0);
    assert_int_equal(send_a.status, 0);
    assert_true(holds(in_a, A, 0, 1));
    close_group(&g);
    free(out_a);
    free(in_a);
}

/* A receive posted while its transfer is under way: what came before it is
 * copied from the early buffer, the rest lands in place, and the whole arrives. */
static void test_receive_posted_midway(void **state)
{
    enum { A = 4 * CHUNKS * CHUNK + 3 };
    struct coll_async_transfer send = {0}, recv = {0};
    struct coll_async_mailbox_stats stats;
    uint8_t *out = malloc(A), *in = calloc(1, A);
    struct group g;

    (void) state;
    open_group(&g, 2, false);
    fill(out, A, 0, 5);
    assert_int_equal(g.t[0]->ops->send(g.t[0], 1, 5, out, A, &send), 0);
    for (int i = 0; i < 3; ++i) {
        group_step(&g);
    }
    assert_int_equal(g.t[1]->ops->recv(g.t[1], 0, 5, in, A, &recv), 0);
    group_wait(&g, &recv);
    group_wait(&g, &send);
    assert_int_equal(recv.status, 0);
    assert_int_equal(send.status, 0);
    assert_true(holds(in, A, 0, 5));
    coll_async_mailbox_stats(g.t[1], &stats);
    print_message("copied from the early buffer: %llu of %d bytes\n",
                  (unsigned long long) stats.early_copied, A);
    assert_true(stats.early_copied > 0 && stats.early_copied < A);
    close_group(&g);
    free(out);
    free(in);
}

/* A peer that does not progress holds at most half the sender's chunks: the
 * sender's other peers go on. */
static void test_slow_peer_takes_half(void **state)
{
    enum { BIG_SEND = 4 * CHUNKS * CHUNK, SMALL = 3 * CHUNK };
    struct coll_async_transfer to_slow = {0}, to_fast = {0}, fast_recv = {0};
    uint8_t *out = malloc(BIG_SEND), *in = malloc(SMALL);
    struct group g;

    (void) state;
    open_group(&g, 3, false);
    fill(out, BIG_SEND, 0, 4);
    assert_int_equal(g.t[0]->ops->send(g.t[0], 1, 1, out, BIG_SEND, &to_slow), 0);
    assert_int_equal(g.t[0]->ops->send(g.t[0], 2, 1, out, SMALL, &to_fast), 0);
    assert_int_equal(g.t[2]->ops->recv(g.t[2], 0, 1, in, SMALL, &fast_recv), 0);
    for (long i = 0; COLL_ASYNC_TRANSFER_PENDING == to_fast.status; ++i) {
        assert_true(i < 1000000); /* rank 1 never progresses */
        (void) g.t[0]->ops->progress(g.t[0]);
        (void) g.t[2]->ops->progress(g.t[2]);
    }
    assert_int_equal(to_fast.status, 0);
    assert_int_equal(fast_recv.status, 0);
    assert_true(holds(in, SMALL, 0, 4));
    assert_int_equal(to_slow.status, COLL_ASYNC_TRANSFER_PENDING);
    close_group(&g);
    free(out);
    free(in);
}

/* Peers added late, as a communicator's creation adds them: each process adds
 * the other group when it gets there, and the first may send at once. 0 adds 2
 * and sends while 2 has not added it; then 2 adds 0 and 1 and sends while 1
 * has not added 2; each drains its ring in between. What came before the add
 * must count once the sender is added, not be dropped (nor its sender's serials
 * after it refused as replays): the intercommunicator allreduce's hang. */
static size_t late_length;

static void late_pair(transport_t *t, int rank, uint32_t peer, uint8_t *out, uint8_t *in,
                      struct coll_async_transfer *send, struct coll_async_transfer *recv)
{
    uint64_t tag = (1ull << 39) | (uint64_t) (rank < 2 ? rank : (int) peer);

    fill(out, late_length, rank, tag);
    CHECK(0 == t->ops->recv(t, peer, tag, in, late_length, recv));
    CHECK(0 == t->ops->send(t, peer, tag, out, late_length, send));
}

static void add_late(transport_t *t, uint32_t peer)
{
    (void) t->ops->progress(t); /* takes in what the peer pushed before the add */
    CHECK(0 == t->ops->add_peer(t, peer, test_key_of(peer), shared->blob[peer],
                                shared->blob_length[peer]));
}

static void added_late_rank(int rank, int nranks)
{
    transport_t *t = open_one((uint32_t) rank, (uint32_t) nranks, use_cma, NODE);
    struct coll_async_transfer send[2] = {{0}}, recv[2] = {{0}};
    uint8_t *out[2], *in[2];
    struct coll_async_mailbox_stats stats;
    int length, npeers = 2 == rank ? 2 : 1;

    CHECK(NULL != t);
    length = t->ops->address(t, shared->blob[rank], COLL_ASYNC_MAILBOX_ADDRESS_MAX);
    CHECK(length > 0);
    shared->blob_length[rank] = (size_t) length;
    for (int i = 0; i < 2; ++i) {
        out[i] = malloc(late_length);
        in[i] = calloc(1, late_length);
        CHECK(NULL != out[i] && NULL != in[i]);
    }
    barrier(NULL);
    if (0 == rank) { /* first: adds 2 and sends to it before 2 has added anyone */
        add_late(t, 2);
        late_pair(t, rank, 2, out[0], in[0], &send[0], &recv[0]);
    }
    barrier(t);
    if (2 == rank) { /* second: adds both, sends to 1 before 1 has added it */
        add_late(t, 0);
        add_late(t, 1);
        late_pair(t, rank, 0, out[0], in[0], &send[0], &recv[0]);
        late_pair(t, rank, 1, out[1], in[1], &send[1], &recv[1]);
    }
    barrier(t);
    if (1 == rank) { /* last */
        add_late(t, 2);
        late_pair(t, rank, 2, out[0], in[0], &send[0], &recv[0]);
    }
    for (int i = 0; i < npeers; ++i) {
        uint32_t peer = 2 == rank ? (uint32_t) i : 2;

        wait_op(t, &recv[i]);
        wait_op(t, &send[i]);
        CHECK(0 == recv[i].status && 0 == send[i].status);
        CHECK(late_length == recv[i].bytes);
        CHECK(holds(in[i], late_length, (int) peer,
                    (1ull << 39) | (uint64_t) (2 == rank ? i : rank)));
    }
    coll_async_mailbox_stats(t, &stats);
    CHECK(0 == stats.refused);
    barrier(t);
    t->ops->destroy(t);
    for (int i = 0; i < 2; ++i) {
        free(out[i]);
        free(in[i]);
    }
}

static void test_added_late(void **state)
{
    (void) state;
    late_length = 4; /* the allreduce's blocks: one DATA each */
    run_ranks(3, added_late_rank, false);
    late_length = 5 * CHUNK + 1; /* pieces, and CREDITs back */
    run_ranks(3, added_late_rank, false);
    late_length = 256 * 1024; /* an RTS */
    run_ranks(3, added_late_rank, true);
}

/* Behind the mapper, as the component composes it: no fd of its own to watch,
 * peers on this node carried by "shm", another node's left to the next. */
static void test_behind_the_mapper(void **state)
{
    uint8_t blob[3][COLL_ASYNC_MAILBOX_ADDRESS_MAX], in[100], out[100];
    struct coll_async_transfer send = {0}, recv = {0};
    struct coll_async_net *net[2];
    struct coll_async_net_blob blobs[3][1];
    transport_t *t[3];

    (void) state;
    for (int i = 0; i < 3; ++i) {
        int length;

        t[i] = open_one((uint32_t) i, 3, false, 2 == i ? NODE + 1 : NODE);
        assert_non_null(t[i]);
        length = t[i]->ops->address(t[i], blob[i], sizeof(blob[i]));
        assert_true(length > 0);
        blobs[i][0].data = blob[i];
        blobs[i][0].length = (size_t) length;
    }
    for (int i = 0; i < 2; ++i) {
        assert_int_equal(coll_async_net_create(&net[i], 3, &t[i], 1), 0);
        assert_true(coll_async_net_fd(net[i]) >= 0);
        assert_int_equal(coll_async_net_add_peer(net[i], (uint32_t) (1 - i),
                                                 test_key_of((uint32_t) (1 - i)), blobs[1 - i]),
                         0);
        assert_string_equal(coll_async_net_peer_via(net[i], (uint32_t) (1 - i)), "shm");
        assert_int_equal(coll_async_net_add_peer(net[i], 2, test_key_of(2), blobs[2]),
                         -ENETUNREACH);
    }
    fill(out, sizeof(out), 0, 9);
    assert_int_equal(coll_async_net_recv_bulk(net[1], 0, 9, in, sizeof(in), &recv), 0);
    assert_int_equal(coll_async_net_send_bulk(net[0], 1, 9, out, sizeof(out), &send), 0);
    for (long i = 0; COLL_ASYNC_TRANSFER_PENDING == recv.status
                     || COLL_ASYNC_TRANSFER_PENDING == send.status; ++i) {
        assert_true(i < 1000000);
        (void) coll_async_net_progress(net[0]);
        (void) coll_async_net_progress(net[1]);
    }
    assert_int_equal(recv.status, 0);
    assert_int_equal(send.status, 0);
    assert_true(holds(in, sizeof(in), 0, 9));
    coll_async_net_destroy(net[0]);
    coll_async_net_destroy(net[1]);
    t[2]->ops->destroy(t[2]);
}

/* Ping-pong (MAILBOX_BENCH=1): half a round trip and its bandwidth, per size,
 * staged only and CMA only (whatever the threshold), default chunks. */

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static void ping_pong_rank(int rank, int nranks)
{
    static const size_t lengths[] = {8, 4096, 16384, 65536, 262144, 1 << 20, 16 << 20};
    transport_t *t = open_all(rank, nranks);
    uint8_t *buffer = calloc(1, 16 << 20);
    uint32_t peer = (uint32_t) (1 - rank);

    CHECK(NULL != buffer);
    for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); ++l) {
        int rounds = lengths[l] <= 65536 ? 2000 : lengths[l] <= (1 << 20) ? 200 : 20;
        uint64_t tag = 0;
        double start = 0;

        barrier(t);
        for (int i = -rounds / 10; i < rounds; ++i) { /* a tenth to warm up */
            struct coll_async_transfer send = {0}, recv = {0};

            if (0 == i) {
                start = now_s();
            }
            if (0 == rank) {
                CHECK(0 == t->ops->send(t, peer, tag, buffer, lengths[l], &send));
                CHECK(0 == t->ops->recv(t, peer, tag + 1, buffer, lengths[l], &recv));
            } else {
                CHECK(0 == t->ops->recv(t, peer, tag, buffer, lengths[l], &recv));
                wait_op(t, &recv);
                CHECK(0 == t->ops->send(t, peer, tag + 1, buffer, lengths[l], &send));
            }
            wait_op(t, &send);
            wait_op(t, &recv);
            CHECK(0 == send.status && 0 == recv.status);
            tag += 2;
        }
        if (0 == rank) {
            double half = (now_s() - start) / rounds / 2;

            printf("shm %-6s %9zu B: %9.2f us one way, %8.1f MB/s\n",
                   use_cma ? "cma" : "staged", lengths[l], half * 1e6,
                   (double) lengths[l] / half / 1e6);
            fflush(stdout); /* the rank leaves through _exit */
        }
    }
    barrier(t);
    t->ops->destroy(t);
    free(buffer);
}

static void test_ping_pong(void **state)
{
    (void) state;
    if (NULL == getenv("MAILBOX_BENCH")) {
        skip();
    }
    default_chunks = true;
    cma_min = 1; /* every size by CMA: where it starts to pay is the threshold */
    run_ranks(2, ping_pong_rank, false);
    run_ranks(2, ping_pong_rank, true);
    default_chunks = false;
    cma_min = 64 * 1024;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_staged),
        cmocka_unit_test(test_sizes_cma),
        cmocka_unit_test(test_all_to_all_staged),
        cmocka_unit_test(test_all_to_all_cma),
        cmocka_unit_test(test_too_long),
        cmocka_unit_test(test_cma_fallback),
        cmocka_unit_test(test_late_receive_frees_chunks),
        cmocka_unit_test(test_receive_posted_midway),
        cmocka_unit_test(test_slow_peer_takes_half),
        cmocka_unit_test(test_added_late),
        cmocka_unit_test(test_behind_the_mapper),
        cmocka_unit_test(test_ping_pong),
    };

    if (0 != mailbox_ranks_init()) {
        return 1;
    }
    if (NULL != getenv("TEST_MAILBOX_ONLY")) {
        cmocka_set_test_filter(getenv("TEST_MAILBOX_ONLY"));
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
