/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */


/*
 * Unit tests of transport/coll_async_mailbox*.c, the shared-memory transport:
 * what it refuses and how it fails. Blobs it must leave to the next transport
 * and a mailbox that does not prove itself; forged descriptors from a peer
 * (failing that peer alone) and a stranger's (dropped); too many from a
 * process not added yet; destroy with transfers in flight, a peer that
 * destroys its transport, and a peer killed mid-transfer, staged and with CMA.
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

#include "mailbox_ranks.h"

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

/* A process that sends before this one adds it is held to a bound: past
 * MAILBOX_MAX_UNADDED descriptors it fails when added, loudly, not a hang. */
static void test_unadded_bound(void **state)
{
    transport_t *a = open_one(0, 2, false, NODE), *b = open_one(1, 2, false, NODE);
    uint8_t blob[2][COLL_ASYNC_MAILBOX_ADDRESS_MAX], byte = 0;
    struct coll_async_transfer send = {0};
    int length[2];

    (void) state;
    assert_non_null(a);
    assert_non_null(b);
    length[0] = a->ops->address(a, blob[0], sizeof(blob[0]));
    length[1] = b->ops->address(b, blob[1], sizeof(blob[1]));
    assert_int_equal(b->ops->add_peer(b, 0, test_key_of(0), blob[0], (size_t) length[0]), 0);
    for (int i = 0; i <= MAILBOX_MAX_UNADDED; ++i) {
        struct mailbox_desc credit = {.type = DESC_CREDIT, .arg = 0};

        assert_int_equal(coll_async_mailbox_test_push(b, 0, &credit), 0);
        if (0 == i % 256) {
            (void) a->ops->progress(a); /* held, 1 not added yet */
        }
    }
    (void) a->ops->progress(a);
    assert_int_equal(a->ops->add_peer(a, 1, test_key_of(1), blob[1], (size_t) length[1]), 0);
    (void) a->ops->progress(a);
    assert_int_equal(a->ops->send(a, 1, 1, &byte, 1, &send), -EPROTO);
    assert_non_null(strstr(send.error, "peer 1 (pid"));
    assert_non_null(strstr(send.error, "before this process added it"));
    a->ops->destroy(a);
    b->ops->destroy(b);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_blobs),
        cmocka_unit_test(test_forged_descriptors),
        cmocka_unit_test(test_stranger_descriptors),
        cmocka_unit_test(test_unadded_bound),
        cmocka_unit_test(test_destroy_cancels),
        cmocka_unit_test(test_peer_closed),
        cmocka_unit_test(test_peer_killed_staged),
        cmocka_unit_test(test_peer_killed_cma),
    };

    if (0 != mailbox_ranks_init()) {
        return 1;
    }
    if (NULL != getenv("TEST_MAILBOX_ONLY")) {
        cmocka_set_test_filter(getenv("TEST_MAILBOX_ONLY"));
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
