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
 * called through its table of functions as the mapper does: sizes around the
 * chunk and up to 16 MiB staged and with CMA, receives posted before and after
 * their sends, four ranks all-to-all with many tags in flight, a transfer longer
 * than its receive, blobs it must refuse, a refused CMA pull, forged and
 * stranger descriptors, a peer killed mid-transfer, and destroy with transfers
 * in flight. MAILBOX_BENCH=1 also prints a ping-pong of both modes.
 *
 * Forked ranks (forked_ranks.h) exchange blobs and meet at barriers through a
 * shared anonymous mapping, standing in for the modex; the checks that need no
 * second process pair two transports in this one.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_keys.h"

#include "../../ompi/mca/coll/async/transport/coll_async_mailbox_internal.h"
#include "../../ompi/mca/coll/async/transport/coll_async_net.h"
#include "forked_ranks.h"

#define MAX_RANKS 4
#define CHUNK (16 * 1024)
#define CHUNKS 8
#define NODE 0x6e6f6465ull
#define BIG (16 << 20)
#define KILL_BYTES (32 << 20) /* more than 3 progress calls of the victim can move */

struct shared {
    int nranks;
    int arrived, generation;
    size_t blob_length[MAX_RANKS];
    uint8_t blob[MAX_RANKS][COLL_ASYNC_MAILBOX_ADDRESS_MAX];
};

static struct shared *shared;
static bool use_cma; /* the forked ranks' mode, set before they fork */

typedef struct coll_async_transport transport_t;
typedef void (*rank_fn)(int rank, int nranks);

static bool default_chunks; /* the ping-pong's: what the component will use */
static size_t cma_min = 64 * 1024; /* the tests': sizes around the chunk both ways */

static transport_t *open_one(uint32_t self, uint32_t nprocs, bool cma, uint64_t node)
{
    struct coll_async_mailbox_config config = {
        .self = self, .nprocs = nprocs, .key = test_key(self), .node = node,
        .try_cma = cma, .chunk_size = default_chunks ? 0 : CHUNK,
        .chunks = default_chunks ? 0 : CHUNKS, .cma_min = cma_min,
    };
    transport_t *t = NULL;

    return 0 == coll_async_mailbox_create(&config, &t) ? t : NULL;
}

static void step(transport_t *t)
{
    if (0 == t->ops->progress(t)) {
        sched_yield(); /* two cores, four busy ranks */
    }
}

static void barrier(transport_t *t)
{
    int generation = __atomic_load_n(&shared->generation, __ATOMIC_ACQUIRE);

    if (shared->nranks == __atomic_add_fetch(&shared->arrived, 1, __ATOMIC_ACQ_REL)) {
        __atomic_store_n(&shared->arrived, 0, __ATOMIC_RELAXED);
        __atomic_add_fetch(&shared->generation, 1, __ATOMIC_ACQ_REL);
        return;
    }
    while (generation == __atomic_load_n(&shared->generation, __ATOMIC_ACQUIRE)) {
        if (NULL != t) {
            step(t);
        } else {
            usleep(100);
        }
    }
}

/* Creates this rank's transport, publishes its blob and adds every other rank. */
static transport_t *open_all(int rank, int nranks)
{
    transport_t *t = open_one((uint32_t) rank, (uint32_t) nranks, use_cma, NODE);
    int length;

    CHECK(NULL != t);
    length = t->ops->address(t, shared->blob[rank], COLL_ASYNC_MAILBOX_ADDRESS_MAX);
    CHECK(length > 0);
    shared->blob_length[rank] = (size_t) length;
    barrier(NULL);
    for (int peer = 0; peer < nranks; ++peer) {
        if (peer != rank) {
            CHECK(0 == t->ops->add_peer(t, (uint32_t) peer, test_key_of((uint32_t) peer),
                                        shared->blob[peer], shared->blob_length[peer]));
        }
    }
    barrier(NULL);
    return t;
}

static void wait_op(transport_t *t, const struct coll_async_transfer *op)
{
    while (COLL_ASYNC_TRANSFER_PENDING == op->status) {
        step(t);
    }
}

static uint8_t pattern(int sender, uint64_t k, size_t i)
{
    return (uint8_t) (sender * 131 + k * 7 + i * 13 + (i >> 12));
}

static void fill(uint8_t *data, size_t length, int sender, uint64_t k)
{
    for (size_t i = 0; i < length; ++i) {
        data[i] = pattern(sender, k, i);
    }
}

static bool holds(const uint8_t *data, size_t length, int sender, uint64_t k)
{
    for (size_t i = 0; i < length; ++i) {
        if (data[i] != pattern(sender, k, i)) {
            return false;
        }
    }
    return true;
}

struct job {
    rank_fn body;
    int nranks;
};

static void run_rank(int rank, void *context)
{
    const struct job *job = context;

    job->body(rank, job->nranks);
}

static pid_t spawn(int rank, int nranks, rank_fn body)
{
    struct job job = {body, nranks};

    return spawn_rank(rank, run_rank, &job);
}

static void reset_shared(int nranks)
{
    memset(shared, 0, sizeof(*shared));
    shared->nranks = nranks;
}

static void run_ranks(int nranks, rank_fn body, bool cma)
{
    pid_t pids[MAX_RANKS];
    int status[MAX_RANKS];

    use_cma = cma;
    reset_shared(nranks);
    for (int rank = 0; rank < nranks; ++rank) {
        pids[rank] = spawn(rank, nranks, body);
    }
    wait_ranks(nranks, pids, status);
    assert_ranks_exited_cleanly(nranks, pids, status);
}

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

/* In this process: a pair (or three) of transports */

struct group {
    int n;
    transport_t *t[3];
};

static void open_group(struct group *g, int n, bool cma)
{
    uint8_t blob[3][COLL_ASYNC_MAILBOX_ADDRESS_MAX];
    int length[3];

    g->n = n;
    for (int i = 0; i < n; ++i) {
        g->t[i] = open_one((uint32_t) i, (uint32_t) n, cma, NODE);
        assert_non_null(g->t[i]);
        length[i] = g->t[i]->ops->address(g->t[i], blob[i], sizeof(blob[i]));
        assert_true(length[i] > 0);
    }
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            if (i != j) {
                assert_int_equal(g->t[i]->ops->add_peer(g->t[i], (uint32_t) j,
                                                        test_key_of((uint32_t) j), blob[j],
                                                        (size_t) length[j]),
                                 0);
            }
        }
    }
}

static void group_step(struct group *g)
{
    for (int i = 0; i < g->n; ++i) {
        if (NULL != g->t[i]) {
            (void) g->t[i]->ops->progress(g->t[i]);
        }
    }
}

static void group_wait(struct group *g, const struct coll_async_transfer *op)
{
    for (long i = 0; COLL_ASYNC_TRANSFER_PENDING == op->status; ++i) {
        assert_true(i < 1000000); /* a deadlock, not a slow transfer */
        group_step(g);
    }
}

static void close_group(struct group *g)
{
    for (int i = 0; i < g->n; ++i) {
        if (NULL != g->t[i]) {
            g->t[i]->ops->destroy(g->t[i]);
        }
    }
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

/* Blobs the mailbox must leave to the next transport, and a wrong key. */
static void test_refused_blobs(void **state)
{
    transport_t *a = open_one(0, 3, false, NODE), *b = open_one(1, 3, false, NODE),
                *far = open_one(2, 3, false, NODE + 1);
    uint8_t blob[COLL_ASYNC_MAILBOX_ADDRESS_MAX], bad[COLL_ASYNC_MAILBOX_ADDRESS_MAX];
    struct coll_async_transfer send = {0}, late = {0};
    int length;

    (void) state;
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(far);
    assert_int_equal(a->ops->address(a, blob, 8), -ENOSPC);
    assert_int_equal(a->ops->fd(a), -1);
    assert_string_equal(a->ops->name, "shm");
    assert_null(a->ops->bcast);

    length = far->ops->address(far, blob, sizeof(blob));
    assert_true(length > 0 && length <= COLL_ASYNC_MAILBOX_ADDRESS_MAX);
    assert_int_equal(a->ops->add_peer(a, 2, test_key_of(2), blob, (size_t) length), -ENETUNREACH);

    length = b->ops->address(b, blob, sizeof(blob));
    assert_int_equal(a->ops->add_peer(a, 1, test_key_of(1), blob, (size_t) length - 1),
                     -ENETUNREACH);
    memcpy(bad, blob, sizeof(bad));
    bad[0] ^= 1; /* magic */
    assert_int_equal(a->ops->add_peer(a, 1, test_key_of(1), bad, (size_t) length), -ENETUNREACH);
    memcpy(bad, blob, sizeof(bad));
    bad[4] += 1; /* version */
    assert_int_equal(a->ops->add_peer(a, 1, test_key_of(1), bad, (size_t) length), -ENETUNREACH);
    assert_int_equal(a->ops->add_peer(a, 1, test_key_of(1), "x", 1), -ENETUNREACH);
    memcpy(bad, blob, sizeof(bad));
    bad[20] += 100; /* the fd: nothing there */
    assert_int_equal(a->ops->add_peer(a, 1, test_key_of(1), bad, (size_t) length), -ENETUNREACH);
    memcpy(bad, blob, sizeof(bad));
    bad[16] ^= 0x40; /* the pid: no such process, or not one with this mailbox */
    assert_int_equal(a->ops->add_peer(a, 1, test_key_of(1), bad, (size_t) length), -ENETUNREACH);
    assert_int_equal(a->ops->add_peer(a, 0, test_key_of(0), blob, (size_t) length), -EINVAL);

    /* The right blob with the wrong key: its mailbox does not prove itself. */
    assert_int_equal(a->ops->add_peer(a, 1, test_key_of(2), blob, (size_t) length), 0);
    assert_int_equal(a->ops->add_peer(a, 1, test_key_of(1), blob, (size_t) length), -EEXIST);
    assert_int_equal(a->ops->send(a, 1, 1, blob, 1, &send), -EACCES);
    assert_non_null(strstr(send.error, "peer 1 (pid"));
    assert_non_null(strstr(send.error, "does not prove itself"));
    assert_int_equal(a->ops->recv(a, 1, 1, blob, 1, &late), -EACCES);
    assert_int_equal(a->ops->send(a, 2, 1, blob, 1, &send), -EINVAL); /* never added */
    a->ops->destroy(a);
    b->ops->destroy(b);
    far->ops->destroy(far);
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

/* A descriptor from a peer out of bounds fails that peer alone; a stranger's,
 * without the seal, is dropped and fails none. */
static void forged(struct mailbox_desc *desc, const char *why)
{
    struct coll_async_transfer from1 = {0}, from2 = {0}, send = {0}, late = {0};
    struct coll_async_mailbox_stats stats;
    uint8_t in1[64], in2[64], out[64];
    struct group g;

    open_group(&g, 3, false);
    fill(out, sizeof(out), 2, 0);
    assert_int_equal(g.t[0]->ops->recv(g.t[0], 1, 7, in1, sizeof(in1), &from1), 0);
    assert_int_equal(g.t[0]->ops->recv(g.t[0], 2, 7, in2, sizeof(in2), &from2), 0);
    assert_int_equal(coll_async_mailbox_test_push(g.t[1], 0, desc), 0);
    assert_int_equal(g.t[2]->ops->send(g.t[2], 0, 7, out, sizeof(out), &send), 0);
    group_wait(&g, &from1);
    group_wait(&g, &from2);
    group_wait(&g, &send);
    assert_int_equal(from1.status, -EPROTO);
    assert_non_null(strstr(from1.error, "peer 1 (pid"));
    assert_non_null(strstr(from1.error, why));
    assert_int_equal(from2.status, 0);
    assert_int_equal(send.status, 0);
    assert_true(holds(in2, sizeof(in2), 2, 0));
    assert_int_equal(g.t[0]->ops->send(g.t[0], 1, 8, out, 1, &late), -EPROTO);
    coll_async_mailbox_stats(g.t[0], &stats);
    assert_int_equal(stats.refused, 0);
    close_group(&g);
}

static void test_forged_descriptors(void **state)
{
    struct mailbox_desc bad_chunk = {.type = DESC_DATA, .tag = 7, .length = 64, .total = 64,
                                     .arg = CHUNKS};
    struct mailbox_desc past_total = {.type = DESC_DATA, .tag = 7, .length = 64, .offset = 8,
                                      .total = 64, .arg = 0};
    struct mailbox_desc unknown = {.type = 77, .tag = 7};
    struct mailbox_desc credit = {.type = DESC_CREDIT, .arg = 0};

    (void) state;
    forged(&bad_chunk, "out of bounds");
    forged(&past_total, "out of bounds");
    forged(&unknown, "unknown type 77");
    forged(&credit, "does not hold");
}

static void test_stranger_descriptors(void **state)
{
    struct coll_async_transfer recv = {0}, send = {0};
    struct coll_async_mailbox_stats stats;
    struct mailbox_desc desc = {.type = DESC_DATA, .from = 1, .tag = 7, .arg = MAILBOX_NO_CHUNK};
    struct coll_async_key stranger = test_key(99);
    struct mailbox *mb;
    uint8_t in[16], out[16];
    struct group g;

    (void) state;
    open_group(&g, 2, false);
    mb = (struct mailbox *) g.t[0];
    fill(out, sizeof(out), 1, 2);
    assert_int_equal(g.t[0]->ops->recv(g.t[0], 1, 7, in, sizeof(in), &recv), 0);
    mailbox_seal(&stranger, &desc); /* wrong key */
    assert_true(mailbox_ring_push(&mb->map, &desc));
    desc.serial = 5; /* the right key, a serial out of turn: a replay */
    mailbox_seal(&mb->config.key, &desc);
    assert_true(mailbox_ring_push(&mb->map, &desc));
    group_step(&g);
    assert_int_equal(recv.status, COLL_ASYNC_TRANSFER_PENDING);
    assert_int_equal(g.t[1]->ops->send(g.t[1], 0, 7, out, sizeof(out), &send), 0);
    group_wait(&g, &recv);
    assert_int_equal(recv.status, 0);
    assert_true(holds(in, sizeof(in), 1, 2));
    coll_async_mailbox_stats(g.t[0], &stats);
    assert_int_equal(stats.refused, 2);
    close_group(&g);
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

/* Destroy completes what is in flight with -ECANCELED. */
static int cancelled;

static void count_cancelled(struct coll_async_transfer *op)
{
    cancelled += -ECANCELED == op->status;
}

static void test_destroy_cancels(void **state)
{
    enum { LENGTH = 1 << 20 };
    struct coll_async_transfer ops[3] = {{0}};
    uint8_t *out = calloc(1, LENGTH), *in = calloc(1, LENGTH);
    struct group g;

    (void) state;
    open_group(&g, 2, false);
    for (int i = 0; i < 3; ++i) {
        ops[i].complete = count_cancelled;
    }
    cancelled = 0;
    assert_int_equal(g.t[0]->ops->send(g.t[0], 1, 1, out, LENGTH, &ops[0]), 0);
    assert_int_equal(g.t[0]->ops->recv(g.t[0], 1, 1, in, LENGTH, &ops[1]), 0);
    assert_int_equal(g.t[1]->ops->send(g.t[1], 0, 1, out, LENGTH, &ops[2]), 0);
    group_step(&g);
    g.t[0]->ops->destroy(g.t[0]);
    g.t[0] = NULL;
    assert_int_equal(cancelled, 2);
    assert_int_equal(ops[0].status, -ECANCELED);
    assert_int_equal(ops[1].status, -ECANCELED);
    g.t[1]->ops->destroy(g.t[1]);
    g.t[1] = NULL;
    assert_int_equal(cancelled, 3);
    free(out);
    free(in);
}

/* A peer that destroys its transport fails what waits on it at once. */
static void test_peer_closed(void **state)
{
    struct coll_async_transfer recv = {0}, late = {0};
    uint8_t in[8];
    struct group g;

    (void) state;
    open_group(&g, 2, false);
    assert_int_equal(g.t[0]->ops->recv(g.t[0], 1, 1, in, sizeof(in), &recv), 0);
    assert_int_equal(g.t[1]->ops->recv(g.t[1], 0, 1, in, sizeof(in), &late), 0); /* maps 0 */
    g.t[1]->ops->destroy(g.t[1]);
    g.t[1] = NULL;
    group_wait(&g, &recv);
    assert_int_equal(recv.status, -ECONNRESET);
    assert_non_null(strstr(recv.error, "peer 1 (pid"));
    assert_non_null(strstr(recv.error, "closed its transport"));
    assert_int_equal(late.status, -ECANCELED);
    assert_int_equal(g.t[0]->ops->send(g.t[0], 1, 2, in, 1, &late), -ECONNRESET);
    close_group(&g);
}

/* A peer killed mid-transfer */

static void killed_rank(int rank, int nranks)
{
    transport_t *t = open_all(rank, nranks);
    uint8_t *in = calloc(1, KILL_BYTES), *out = calloc(1, KILL_BYTES);
    struct coll_async_transfer send = {0}, recv = {0}, late = {0};

    CHECK(NULL != in && NULL != out);
    if (1 == rank) {
        /* The victim: takes part in both transfers for 3 progress calls (each
         * drains at most a quarter ring of pieces, or pulls 4 MiB), too few to
         * end them, then stops. With CMA it sends nothing: the survivor
         * would pull it all from the stopped process. */
        CHECK(0 == t->ops->recv(t, 0, 1, in, KILL_BYTES, &recv));
        if (!use_cma) {
            CHECK(0 == t->ops->send(t, 0, 2, out, KILL_BYTES, &send));
        }
        barrier(NULL);
        for (int i = 0; i < 3; ++i) {
            (void) t->ops->progress(t);
        }
        victim_cue_then_wait();
    }
    CHECK(0 == t->ops->send(t, 1, 1, out, KILL_BYTES, &send));
    CHECK(0 == t->ops->recv(t, 1, 2, in, KILL_BYTES, &recv));
    barrier(t);
    wait_op(t, &send);
    wait_op(t, &recv);
    fprintf(stderr, "survivor: send: %s\nsurvivor: recv: %s\n", send.error, recv.error);
    CHECK(-EPIPE == send.status && -EPIPE == recv.status);
    CHECK(NULL != strstr(recv.error, "peer 1 (pid") && NULL != strstr(recv.error, "exited"));
    CHECK(-EPIPE == t->ops->send(t, 1, 3, out, 1, &late));
    t->ops->destroy(t);
    free(in);
    free(out);
}

static void killed(bool cma)
{
    pid_t pids[2];

    use_cma = cma;
    reset_shared(2);
    victim_cue_open();
    pids[0] = spawn(0, 2, killed_rank);
    pids[1] = spawn(1, 2, killed_rank);
    assert_true(kill_victim_time_survivor(pids) < 2);
}

static void test_peer_killed_staged(void **state)
{
    (void) state;
    killed(false);
}

static void test_peer_killed_cma(void **state)
{
    (void) state;
    killed(true);
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
        cmocka_unit_test(test_refused_blobs),
        cmocka_unit_test(test_cma_fallback),
        cmocka_unit_test(test_forged_descriptors),
        cmocka_unit_test(test_stranger_descriptors),
        cmocka_unit_test(test_late_receive_frees_chunks),
        cmocka_unit_test(test_slow_peer_takes_half),
        cmocka_unit_test(test_behind_the_mapper),
        cmocka_unit_test(test_destroy_cancels),
        cmocka_unit_test(test_peer_closed),
        cmocka_unit_test(test_peer_killed_staged),
        cmocka_unit_test(test_peer_killed_cma),
        cmocka_unit_test(test_ping_pong),
    };

    shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                  0);
    if (MAP_FAILED == shared) {
        return 1;
    }
    if (NULL != getenv("TEST_MAILBOX_ONLY")) {
        cmocka_set_test_filter(getenv("TEST_MAILBOX_ONLY"));
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
