/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of transport/coll_async_mcast*.c, the reliable UD multicast
 * broadcast driven through its transport table, with forked processes as the
 * members of one group on one RDMA port (soft-RoCE in a guest: test/vm
 * --rxe 1): groups of 2, 3 and 4; lengths 0, 1, around one packet and one MTU,
 * and 4 MiB, from every root in turn, checked byte for byte; forced loss
 * (drop_fraction 0.05 and 0.3); several broadcasts posted at once from
 * different roots (early packets); a receiver killed mid-broadcast and a root
 * killed mid-broadcast, which must end in errors naming them, in bounded time;
 * and packets that are not the group's: an impostor on the group's address with
 * the group's key, claiming to be the root from its own QP, broadcasts forged
 * data ahead of the root, and a member with the wrong key takes part: the
 * others' results stay exact and what they refused is counted. Where no RDMA
 * port exists it skips (exit 77).
 *
 * The children (forked_ranks.h) exchange address blobs and meet at barriers
 * through a shared anonymous mapping, standing in for the modex and for the
 * barrier the component runs over another transport once all are attached.
 *
 * TEST_MCAST_BENCH=1 measures instead: 1 MiB from one root to 3 receivers, by
 * multicast and by three 2-member groups (the root sending it 3 times), at
 * several loss rates.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../ompi/mca/coll/async/transport/coll_async_mcast.h"
#include "forked_ranks.h"

#define MAX_RANKS 4
#define BIG (4 << 20)
#define SKIP 77
#define KILL_FAILURE_MS 1000
#define KILL_BOUND_S 4 /* the failure timeout, the backed-off pokes and slack */
#define MEMBER_TIMEOUT_S 120

/* The pretend modex and barrier, shared by the children of one test. */
static struct {
    struct forked_barrier barrier;
    uint64_t group_id;
    size_t blob_length[MAX_RANKS];
    uint8_t blob[MAX_RANKS][COLL_ASYNC_MCAST_ADDRESS_MAX];
    int finished; /* members done with the kill tests' broadcast */
    int posted;   /* impostor test: receivers that posted */
    int forged;   /* impostor test: the impostor has sent its forged broadcast */
} *shared;

static uint64_t next_group = 1;

/* The member through its transport table, as the component drives it. */

static int mcast_progress(struct coll_async_mcast *m)
{
    struct coll_async_transport *t = coll_async_mcast_transport(m);

    return t->ops->progress(t);
}

static int mcast_fd(struct coll_async_mcast *m)
{
    struct coll_async_transport *t = coll_async_mcast_transport(m);

    return t->ops->fd(t);
}

static int mcast_bcast(struct coll_async_mcast *m, uint32_t root, void *buffer, size_t length,
                       struct coll_async_transfer *transfer)
{
    struct coll_async_transport *t = coll_async_mcast_transport(m);

    return t->ops->bcast(t, root, buffer, length, transfer);
}

static int mcast_address(struct coll_async_mcast *m, void *blob, size_t size)
{
    struct coll_async_transport *t = coll_async_mcast_transport(m);

    return t->ops->address(t, blob, size);
}

static int mcast_add_member(struct coll_async_mcast *m, uint32_t rank, const void *blob,
                            size_t length)
{
    struct coll_async_transport *t = coll_async_mcast_transport(m);

    return t->ops->add_peer(t, rank, NULL, blob, length);
}

static void mcast_destroy(struct coll_async_mcast *m)
{
    struct coll_async_transport *t = coll_async_mcast_transport(m);

    t->ops->destroy(t);
}

static double seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* One progress step; sleeps on the fd when there was nothing to do. */
static void step(struct coll_async_mcast *m)
{
    struct pollfd pfd = {.fd = mcast_fd(m), .events = POLLIN};

    if (0 == mcast_progress(m)) {
        (void) poll(&pfd, 1, 100);
    }
}

/* Waits for every member; progresses the n transports of ms meanwhile, so roots
 * still get answers. */
struct members {
    struct coll_async_mcast *const *ms;
    int n;
};

static void progress_members(void *context)
{
    const struct members *members = context;

    for (int i = 0; i < members->n; ++i) {
        if (NULL != members->ms[i]) {
            (void) mcast_progress(members->ms[i]);
        }
    }
    usleep(200);
}

static void barrier_many(struct coll_async_mcast *const *ms, int n, int nranks)
{
    struct members members = {ms, n};

    forked_barrier_wait(&shared->barrier, nranks, progress_members, &members);
}

static void barrier(struct coll_async_mcast *m, int nranks)
{
    barrier_many(&m, 1, nranks);
}

static int wait_op(struct coll_async_mcast *m, struct coll_async_transfer *op)
{
    while (COLL_ASYNC_TRANSFER_PENDING == op->status) {
        step(m);
    }
    if (0 != op->status) {
        fprintf(stderr, "rank %d: %s: %s\n", my_rank, strerror(-op->status),
                op->error ? op->error : "");
    }
    return op->status;
}

struct options {
    double drop;
    int failure_ms;
    uint64_t group_id;
    struct coll_async_key key; /* the group key */
};

/* A group key of the test's: any that every member has alike. */
static struct coll_async_key key_of_group(uint64_t group_id)
{
    struct coll_async_key key;

    for (int i = 0; i < COLL_ASYNC_KEY_BYTES; ++i) {
        key.bytes[i] = (uint8_t) (group_id >> (8 * (i % 8))) ^ (uint8_t) (0x5c + i);
    }
    return key;
}

/* Creates member rank of a group, exchanges blobs, waits until every member is
 * attached. */
static struct coll_async_mcast *open_member(int rank, int nranks, const struct options *options)
{
    struct coll_async_mcast_config config = {
        .include = getenv("TEST_MCAST_INCLUDE"),
        .group_id = options->group_id,
        .key = options->key,
        .self = (uint32_t) rank,
        .nranks = (uint32_t) nranks,
        .failure_timeout_ms = options->failure_ms,
        .drop_fraction = options->drop,
        .drop_seed = 0x5eed,
    };
    struct coll_async_mcast *m;
    const char *why;
    char reason[256];
    int rc = coll_async_mcast_create(&m, &config, reason, sizeof(reason));
    int length;

    if (0 != rc) {
        fprintf(stderr, "rank %d: create: %s: %s\n", rank, strerror(-rc), reason);
        CHECK(0 == rc);
    }
    length = mcast_address(m, shared->blob[rank], COLL_ASYNC_MCAST_ADDRESS_MAX);
    CHECK(length > 0);
    shared->blob_length[rank] = (size_t) length;
    while (0 == (rc = coll_async_mcast_attached(m, &why))) {
        step(m);
    }
    if (rc < 0) {
        fprintf(stderr, "rank %d: join: %s\n", rank, why);
        CHECK(1 == rc);
    }
    barrier(NULL, nranks);
    for (int other = 0; other < nranks; ++other) {
        if (other != rank) {
            CHECK(0 == mcast_add_member(m, (uint32_t) other, shared->blob[other],
                                                   shared->blob_length[other]));
        }
    }
    barrier(m, nranks);
    return m;
}

/* Broadcast seq's byte i: changes within a packet and between packets, roots and
 * broadcasts, so a misplaced or stale packet shows. */
static uint8_t pattern(uint64_t seq, int root, size_t i)
{
    return (uint8_t) (((uint32_t) i * 2654435761u) >> 13) ^ (uint8_t) (seq * 37 + (uint64_t) root * 101);
}

/* A buffer of length bytes and a guard byte: the root's holds the pattern, a
 * receiver's the pattern's complement, so every byte not written shows. */
static uint8_t *make_buffer(uint64_t seq, int root, int rank, size_t length)
{
    uint8_t *buffer = malloc(length + 1);

    CHECK(NULL != buffer);
    for (size_t i = 0; i < length; ++i) {
        buffer[i] = pattern(seq, root, i) ^ (rank == root ? 0 : 0xff);
    }
    buffer[length] = 0xa5;
    return buffer;
}

static void check_buffer(const uint8_t *buffer, uint64_t seq, int root, size_t length)
{
    for (size_t i = 0; i < length; ++i) {
        if (buffer[i] != pattern(seq, root, i)) {
            fprintf(stderr, "rank %d: broadcast %llu from %d (%zu bytes): byte %zu is %#x, not %#x\n",
                    my_rank, (unsigned long long) seq, root, length, i, buffer[i],
                    pattern(seq, root, i));
            CHECK(buffer[i] == pattern(seq, root, i));
        }
    }
    CHECK(0xa5 == buffer[length]);
}

/* The lengths every group broadcasts, from every root in turn. */
static size_t lengths(const struct coll_async_mcast *m, size_t *out)
{
    size_t mtu = coll_async_mcast_mtu(m), payload = coll_async_mcast_payload(m), n = 0;

    out[n++] = 0;
    out[n++] = 1;
    out[n++] = payload - 1;
    out[n++] = payload;
    out[n++] = payload + 1;
    out[n++] = mtu - 1;
    out[n++] = mtu;
    out[n++] = mtu + 1;
    out[n++] = 3 * payload + 7;
    out[n++] = BIG;
    return n;
}

/* Every length from every root, one broadcast at a time. */
static void sizes_body(int rank, int nranks, const struct options *options)
{
    struct coll_async_mcast *m = open_member(rank, nranks, options);
    struct coll_async_mcast_stats stats;
    size_t length[16], count = lengths(m, length);
    uint64_t seq = 0;
    double start = seconds();

    for (size_t l = 0; l < count; ++l) {
        for (int root = 0; root < nranks; ++root, ++seq) {
            struct coll_async_transfer op = {0};
            uint8_t *buffer = make_buffer(seq, root, rank, length[l]);

            CHECK(0 == mcast_bcast(m, (uint32_t) root, buffer, length[l], &op));
            CHECK(0 == wait_op(m, &op));
            check_buffer(buffer, seq, root, length[l]);
            free(buffer);
        }
    }
    coll_async_mcast_stats(m, &stats);
    fprintf(stderr,
            "rank %d of %d, drop %.2f: %.2f s: sent %llu resent %llu received %llu duplicates "
            "%llu dropped %llu staged %llu acks %llu/%llu gap reports %llu timeouts %llu "
            "reordered %llu\n",
            rank, nranks, options->drop, seconds() - start, (unsigned long long) stats.data_sent,
            (unsigned long long) stats.data_resent, (unsigned long long) stats.data_received,
            (unsigned long long) stats.duplicates, (unsigned long long) stats.dropped,
            (unsigned long long) stats.staged, (unsigned long long) stats.acks_sent,
            (unsigned long long) stats.acks_received, (unsigned long long) stats.gap_reports,
            (unsigned long long) stats.timeouts, (unsigned long long) stats.reordered);
    if (options->drop > 0) {
        /* The loss happened and was repaired, not avoided. */
        CHECK(stats.dropped > 0 && stats.data_resent > 0);
    }
    CHECK(0 == stats.wrong_source && 0 == stats.bad_tag); /* the members' own all pass */
    barrier(m, nranks); /* every root has its last acknowledgement */
    mcast_destroy(m);
}

/* Several broadcasts posted at once, from every root, before any completes:
 * packets of broadcasts a member has not activated yet arrive early. */
static void pipelined_body(int rank, int nranks, const struct options *options)
{
    enum { POSTS = 9 };
    struct coll_async_mcast *m = open_member(rank, nranks, options);
    size_t payload = coll_async_mcast_payload(m);
    size_t length[POSTS] = {300 * payload + 5, 1, 0, 40 * payload, BIG / 4, 7, 2 * payload,
                            130 * payload, 3};
    struct coll_async_transfer ops[POSTS];
    uint8_t *buffers[POSTS];
    struct coll_async_mcast_stats stats;

    memset(ops, 0, sizeof(ops));
    for (int i = 0; i < POSTS; ++i) {
        int root = (i * 7 + 1) % nranks;

        buffers[i] = make_buffer((uint64_t) i, root, rank, length[i]);
        CHECK(0 == mcast_bcast(m, (uint32_t) root, buffers[i], length[i], &ops[i]));
        if (rank == 1) {
            usleep(3000); /* one member posts late: the others' packets come early */
        }
    }
    for (int i = 0; i < POSTS; ++i) {
        CHECK(0 == wait_op(m, &ops[i]));
        check_buffer(buffers[i], (uint64_t) i, (i * 7 + 1) % nranks, length[i]);
        free(buffers[i]);
    }
    coll_async_mcast_stats(m, &stats);
    fprintf(stderr, "rank %d: pipelined: staged %llu resent %llu duplicates %llu\n", rank,
            (unsigned long long) stats.staged, (unsigned long long) stats.data_resent,
            (unsigned long long) stats.duplicates);
    barrier(m, nranks);
    mcast_destroy(m);
}

/* The parent's side: one group of forked members running body. */
static struct options test_options;
static void (*test_body)(int rank, int nranks, const struct options *options);
static int test_nranks;

static void member(int rank, void *context)
{
    (void) context;
    /* Megabytes through soft-RoCE in an emulated (TCG) guest on a shared host take
     * far longer than forked_ranks.h allows; a hang still ends as a failure. */
    alarm(MEMBER_TIMEOUT_S);
    test_body(rank, test_nranks, &test_options);
}

static void run_group(int nranks, double drop,
                      void (*body)(int rank, int nranks, const struct options *options))
{
    pid_t pids[MAX_RANKS];
    int status[MAX_RANKS];

    memset(shared, 0, sizeof(*shared));
    test_options.drop = drop;
    test_options.failure_ms = 0;
    test_options.group_id = ((uint64_t) getpid() << 20) + next_group++;
    test_options.key = key_of_group(test_options.group_id);
    test_body = body;
    test_nranks = nranks;
    for (int rank = 0; rank < nranks; ++rank) {
        pids[rank] = spawn_rank(rank, member, NULL);
    }
    wait_ranks(nranks, pids, status);
    assert_ranks_exited_cleanly(nranks, pids, status);
}

static void test_sizes_2(void **state)
{
    (void) state;
    run_group(2, 0, sizes_body);
}

static void test_sizes_3(void **state)
{
    (void) state;
    run_group(3, 0, sizes_body);
}

static void test_sizes_4(void **state)
{
    (void) state;
    run_group(4, 0, sizes_body);
}

static void test_loss_5_percent_3(void **state)
{
    (void) state;
    run_group(3, 0.05, sizes_body);
}

static void test_loss_30_percent_3(void **state)
{
    (void) state;
    run_group(3, 0.3, sizes_body);
}

static void test_loss_30_percent_4(void **state)
{
    (void) state;
    run_group(4, 0.3, sizes_body);
}

static void test_pipelined_4(void **state)
{
    (void) state;
    run_group(4, 0, pipelined_body);
}

static void test_pipelined_loss_3(void **state)
{
    (void) state;
    run_group(3, 0.1, pipelined_body);
}

/* A member killed mid-broadcast */

/* Member `victim` takes part until it holds some packets of a 4 MiB broadcast from
 * member 0, then dies; 0 must fail naming it, and so must the third member,
 * which cannot get everything while the root's window waits for the victim. */
static void receiver_killed_body(int rank, int nranks, const struct options *options)
{
    struct coll_async_mcast *m = open_member(rank, nranks, options);
    struct coll_async_transfer op = {0};
    uint8_t *buffer = make_buffer(0, 0, rank, BIG);
    struct coll_async_mcast_stats stats;
    double start;
    int status;

    CHECK(0 == mcast_bcast(m, 0, buffer, BIG, &op));
    start = seconds();
    if (2 == rank) {
        do {
            step(m);
            coll_async_mcast_stats(m, &stats);
        } while (stats.data_received < 50);
        raise(SIGKILL);
    }
    status = wait_op(m, &op);
    fprintf(stderr, "rank %d: after %.2f s: %s\n", rank, seconds() - start, op.error);
    CHECK(seconds() - start < KILL_BOUND_S);
    if (0 == rank) {
        CHECK(-ETIMEDOUT == status);
        CHECK(NULL != strstr(op.error, "member 2 stopped answering"));
    } else {
        CHECK(-EREMOTEIO == status);
        CHECK(NULL != strstr(op.error, "the root gave it up: member 2"));
    }
    /* The root keeps answering until the survivor knows. */
    __atomic_add_fetch(&shared->finished, 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&shared->finished, __ATOMIC_ACQUIRE) < 2) {
        step(m);
    }
    free(buffer);
    mcast_destroy(m);
}

/* The root dies once it has sent part of a 4 MiB broadcast: every receiver fails
 * naming the root. */
static void root_killed_body(int rank, int nranks, const struct options *options)
{
    struct coll_async_mcast *m = open_member(rank, nranks, options);
    struct coll_async_transfer op = {0};
    uint8_t *buffer = make_buffer(0, 0, rank, BIG);
    struct coll_async_mcast_stats stats;
    double start;

    CHECK(0 == mcast_bcast(m, 0, buffer, BIG, &op));
    start = seconds();
    if (0 == rank) {
        do {
            step(m);
            coll_async_mcast_stats(m, &stats);
        } while (stats.data_sent < 200);
        raise(SIGKILL);
    }
    CHECK(-ETIMEDOUT == wait_op(m, &op));
    fprintf(stderr, "rank %d: after %.2f s: %s\n", rank, seconds() - start, op.error);
    CHECK(seconds() - start < KILL_BOUND_S);
    CHECK(NULL != strstr(op.error, "from root 0: the root stopped answering"));
    free(buffer);
    mcast_destroy(m);
}

static void run_kill(int nranks, int victim,
                     void (*body)(int rank, int nranks, const struct options *options))
{
    pid_t pids[MAX_RANKS];
    int status[MAX_RANKS];

    memset(shared, 0, sizeof(*shared));
    test_options.drop = 0;
    test_options.failure_ms = KILL_FAILURE_MS;
    test_options.group_id = ((uint64_t) getpid() << 20) + next_group++;
    test_options.key = key_of_group(test_options.group_id);
    test_body = body;
    test_nranks = nranks;
    for (int rank = 0; rank < nranks; ++rank) {
        pids[rank] = spawn_rank(rank, member, NULL);
    }
    wait_ranks(nranks, pids, status);
    for (int rank = 0; rank < nranks; ++rank) {
        if (rank == victim) {
            assert_true(WIFSIGNALED(status[rank]) && SIGKILL == WTERMSIG(status[rank]));
        } else {
            assert_exited_cleanly(pids[rank], status[rank]);
        }
    }
}

static void test_receiver_killed(void **state)
{
    (void) state;
    run_kill(3, 2, receiver_killed_body);
}

static void test_root_killed(void **state)
{
    (void) state;
    run_kill(3, 0, root_killed_body);
}

/* Packets that are not the group's */

#define FORGED_PAYLOADS 20 /* within the window: a root sends them all unacknowledged */

static void wait_for(int *flag, int value)
{
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < value) {
        usleep(1000);
    }
}

/* Process 3: joins the group's address with the group's key, claims to be member 0,
 * the root, from its own QP, and broadcasts forged data once both receivers have
 * posted (so that, without the source check, they would take it), then keeps
 * resending until the legitimate members are done. */
static void impostor(const struct options *options)
{
    struct coll_async_mcast_config config = {.include = getenv("TEST_MCAST_INCLUDE"),
                                             .group_id = options->group_id,
                                             .key = options->key,
                                             .self = 0,
                                             .nranks = 3,
                                             .failure_timeout_ms = 60000};
    struct coll_async_transfer op = {0};
    struct coll_async_mcast_stats stats;
    struct coll_async_mcast *m;
    uint8_t *forged;
    size_t length;
    char why[256];

    wait_for(&shared->posted, 2);
    CHECK(0 == coll_async_mcast_create(&m, &config, why, sizeof(why)));
    while (0 == coll_async_mcast_attached(m, NULL)) {
        step(m);
    }
    for (uint32_t member = 1; member < 3; ++member) {
        CHECK(0 == mcast_add_member(m, member, shared->blob[member],
                                               shared->blob_length[member]));
    }
    length = FORGED_PAYLOADS * coll_async_mcast_payload(m) + 5;
    forged = malloc(length);
    CHECK(NULL != forged);
    memset(forged, 0x66, length);
    CHECK(0 == mcast_bcast(m, 0, forged, length, &op));
    do {
        step(m);
        coll_async_mcast_stats(m, &stats);
    } while (stats.data_sent < FORGED_PAYLOADS + 1);
    fprintf(stderr, "impostor: %llu forged data packets sent as member 0\n",
            (unsigned long long) stats.data_sent);
    __atomic_store_n(&shared->forged, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&shared->finished, __ATOMIC_ACQUIRE) < 3) {
        step(m); /* its resends keep coming */
    }
    mcast_destroy(m);
    free(forged);
}

static void impostor_body(int rank, int nranks, const struct options *options)
{
    struct coll_async_transfer op = {0};
    struct coll_async_mcast_stats stats;
    struct coll_async_mcast *m;
    uint8_t *buffer;
    size_t length;

    (void) nranks;
    if (3 == rank) {
        impostor(options);
        return;
    }
    m = open_member(rank, 3, options);
    length = FORGED_PAYLOADS * coll_async_mcast_payload(m) + 5;
    buffer = make_buffer(0, 0, rank, length);
    if (0 == rank) {
        wait_for(&shared->forged, 1);
    }
    CHECK(0 == mcast_bcast(m, 0, buffer, length, &op));
    if (0 != rank) {
        __atomic_add_fetch(&shared->posted, 1, __ATOMIC_ACQ_REL);
    }
    CHECK(0 == wait_op(m, &op));
    check_buffer(buffer, 0, 0, length);
    coll_async_mcast_stats(m, &stats);
    fprintf(stderr, "rank %d: refused %llu packets not from the member they name, %llu with a "
            "wrong tag\n", rank, (unsigned long long) stats.wrong_source,
            (unsigned long long) stats.bad_tag);
    CHECK(0 == rank || stats.wrong_source > 0);
    CHECK(0 == stats.bad_tag);
    __atomic_add_fetch(&shared->finished, 1, __ATOMIC_ACQ_REL);
    barrier(m, 3);
    mcast_destroy(m);
    free(buffer);
}

static void test_impostor_claims_root(void **state)
{
    (void) state;
    run_group(4, 0, impostor_body);
}

/* Member 2 holds the wrong key. Member 1 gets the root's data exactly; the root
 * and member 2 refuse each other's packets and fail naming each other. */
static void wrong_key_body(int rank, int nranks, const struct options *options)
{
    struct options mine = *options;
    struct coll_async_transfer op = {0};
    struct coll_async_mcast_stats stats;
    struct coll_async_mcast *m;
    uint8_t *buffer;
    size_t length;
    int status;

    if (2 == rank) {
        mine.key.bytes[0] ^= 1;
    }
    mine.failure_ms = KILL_FAILURE_MS;
    m = open_member(rank, nranks, &mine);
    length = FORGED_PAYLOADS * coll_async_mcast_payload(m) + 5;
    buffer = make_buffer(0, 0, rank, length);
    CHECK(0 == mcast_bcast(m, 0, buffer, length, &op));
    status = wait_op(m, &op);
    coll_async_mcast_stats(m, &stats);
    fprintf(stderr, "rank %d: %s; refused %llu packets not from the member they name, %llu "
            "with a wrong tag\n", rank, 0 == status ? "done" : op.error,
            (unsigned long long) stats.wrong_source, (unsigned long long) stats.bad_tag);
    CHECK(0 == stats.wrong_source);
    if (1 == rank) {
        CHECK(0 == status && 0 == stats.bad_tag);
        check_buffer(buffer, 0, 0, length);
    } else {
        CHECK(-ETIMEDOUT == status && stats.bad_tag > 0);
        CHECK(NULL != strstr(op.error, 0 == rank ? "member 2 stopped answering"
                                                 : "the root stopped answering"));
    }
    __atomic_add_fetch(&shared->finished, 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&shared->finished, __ATOMIC_ACQUIRE) < nranks) {
        step(m);
    }
    mcast_destroy(m);
    free(buffer);
}

static void test_wrong_key_member(void **state)
{
    (void) state;
    run_group(3, 0, wrong_key_body);
}

/* Blobs, posts that must be refused, a group of one */

static void misuse_body(int rank, void *context)
{
    struct coll_async_mcast_config config = {.group_id = *(uint64_t *) context, .self = 0,
                                             .nranks = 2};
    struct coll_async_mcast_config alone = {.group_id = *(uint64_t *) context + 1, .nranks = 1};
    struct coll_async_mcast *m, *one;
    struct coll_async_transport *t;
    struct coll_async_transfer op = {0};
    uint8_t blob[COLL_ASYNC_MCAST_ADDRESS_MAX], buffer[100] = {1};
    char why[256];
    int length;

    (void) rank;
    CHECK(0 == coll_async_mcast_create(&m, &config, why, sizeof(why)));
    /* A one-to-many transport: bcast, no point-to-point transfers. */
    t = coll_async_mcast_transport(m);
    CHECK(0 == strcmp("mcast", t->ops->name) && NULL != t->ops->bcast &&
          NULL == t->ops->send && NULL == t->ops->recv && NULL == t->ops->release);
    length = mcast_address(m, blob, sizeof(blob));
    CHECK(COLL_ASYNC_MCAST_ADDRESS_MAX == length);
    CHECK(-ENOSPC == mcast_address(m, blob, 3));
    /* Before the other member's blob: refused, saying why. */
    CHECK(-EINVAL == mcast_bcast(m, 0, buffer, sizeof(buffer), &op));
    CHECK(NULL != op.error && NULL != strstr(op.error, "addresses are known"));
    CHECK(-EINVAL == mcast_add_member(m, 0, blob, (size_t) length)); /* itself */
    CHECK(-EINVAL == mcast_add_member(m, 2, blob, (size_t) length)); /* no such rank */
    CHECK(-EINVAL == mcast_add_member(m, 1, blob, 5));
    blob[0] ^= 1;
    CHECK(-EINVAL == mcast_add_member(m, 1, blob, (size_t) length));
    blob[0] ^= 1;
    CHECK(0 == mcast_add_member(m, 1, blob, (size_t) length));
    CHECK(-EEXIST == mcast_add_member(m, 1, blob, (size_t) length));
    CHECK(-EINVAL == mcast_bcast(m, 2, buffer, sizeof(buffer), &op));
    CHECK(-EINVAL == mcast_bcast(m, 0, NULL, 5, &op));
    mcast_destroy(m);

    /* A group of one: the root has nobody to wait for. */
    CHECK(0 == coll_async_mcast_create(&one, &alone, why, sizeof(why)));
    while (0 == coll_async_mcast_attached(one, NULL)) {
        step(one);
    }
    CHECK(1 == coll_async_mcast_attached(one, NULL));
    CHECK(0 == mcast_bcast(one, 0, buffer, sizeof(buffer), &op));
    CHECK(0 == wait_op(one, &op));
    CHECK(1 == buffer[0]);
    mcast_destroy(one);

    /* Filters that keep nothing, and both at once. */
    config.include = "no_such_device";
    CHECK(-ENODEV == coll_async_mcast_create(&m, &config, why, sizeof(why)));
    CHECK(NULL != strstr(why, "filter"));
    config.exclude = "rxe0";
    CHECK(-EINVAL == coll_async_mcast_create(&m, &config, why, sizeof(why)));
    CHECK(NULL != strstr(why, "mutually exclusive"));
    /* A list the RC transport refuses, refused alike (one filter, coll_async_port_filter.h). */
    config.exclude = NULL;
    config.include = "rxe0:x";
    CHECK(-EINVAL == coll_async_mcast_create(&m, &config, why, sizeof(why)));
    CHECK(NULL != strstr(why, "neither a device nor a device:port"));
    config.include = NULL;
    config.address = "10.255.255.254";
    config.exclude = NULL;
    CHECK(-ENODEV == coll_async_mcast_create(&m, &config, why, sizeof(why)));
}

static void test_misuse(void **state)
{
    uint64_t group = ((uint64_t) getpid() << 20) + next_group;
    pid_t pid;
    int status;

    (void) state;
    next_group += 2;
    pid = spawn_rank(0, misuse_body, &group);
    wait_ranks(1, &pid, &status);
    assert_exited_cleanly(pid, status);
}

/* Measurement (TEST_MCAST_BENCH=1): not a test */

#define BENCH_BYTES (1 << 20)
#define BENCH_RUNS 20

/* Member rank of the 4-member group (root 0): multicast, then the root alone with
 * each receiver in a 2-member group of its own, the three posted at once. */
static void bench_body(int rank, int nranks, const struct options *options)
{
    struct coll_async_mcast *m = open_member(rank, nranks, options);
    struct coll_async_mcast *pairs[MAX_RANKS] = {NULL};
    struct coll_async_mcast_stats before, after;
    uint8_t *buffer = make_buffer(0, 0, rank, BENCH_BYTES);
    double start = 0, elapsed;

    for (int run = -2; run < BENCH_RUNS; ++run) { /* two warm-up runs */
        struct coll_async_transfer op = {0};

        if (0 == run) {
            coll_async_mcast_stats(m, &before);
            start = seconds();
        }
        CHECK(0 == mcast_bcast(m, 0, buffer, BENCH_BYTES, &op));
        CHECK(0 == wait_op(m, &op));
    }
    elapsed = seconds() - start;
    coll_async_mcast_stats(m, &after);
    if (0 == rank) {
        printf("multicast, drop %.2f: 1 MiB to %d receivers: %.3f ms per broadcast, "
               "%.1f MB/s; packets sent %llu, resent %llu (%.1f%%)\n",
               options->drop, nranks - 1, elapsed * 1e3 / BENCH_RUNS,
               BENCH_BYTES * (double) BENCH_RUNS / elapsed / 1e6,
               (unsigned long long) (after.data_sent - before.data_sent),
               (unsigned long long) (after.data_resent - before.data_resent),
               100.0 * (double) (after.data_resent - before.data_resent) /
                   (double) (after.data_sent - before.data_sent));
        fflush(stdout);
    }
    check_buffer(buffer, 0, 0, BENCH_BYTES);
    barrier(m, nranks);

    /* The root and receiver r in group id + r, in turn, so every pair attaches. */
    for (int r = 1; r < nranks; ++r) {
        struct coll_async_mcast_config config = {.include = getenv("TEST_MCAST_INCLUDE"),
                                                 .group_id = options->group_id + (uint64_t) r,
                                                 .key = options->key,
                                                 .self = 0 == rank ? 0 : 1, .nranks = 2,
                                                 .drop_fraction = options->drop,
                                                 .drop_seed = 0x5eed};
        char why[256];

        if (0 == rank || r == rank) {
            CHECK(0 == coll_async_mcast_create(&pairs[r], &config, why, sizeof(why)));
            while (0 == coll_async_mcast_attached(pairs[r], NULL)) {
                step(pairs[r]);
            }
            mcast_address(pairs[r], shared->blob[0 == rank ? 0 : 1],
                                     COLL_ASYNC_MCAST_ADDRESS_MAX);
        }
        barrier(m, nranks);
        if (0 == rank || r == rank) {
            CHECK(0 == mcast_add_member(pairs[r], 0 == rank ? 1 : 0,
                                                   shared->blob[0 == rank ? 1 : 0],
                                                   COLL_ASYNC_MCAST_ADDRESS_MAX));
        }
        barrier(m, nranks);
    }
    for (int run = -2; run < BENCH_RUNS; ++run) {
        struct coll_async_transfer ops[MAX_RANKS];
        bool pending = true;

        memset(ops, 0, sizeof(ops));
        if (0 == run) {
            start = seconds();
        }
        for (int r = 1; r < nranks; ++r) {
            if (NULL != pairs[r]) {
                CHECK(0 == mcast_bcast(pairs[r], 0, buffer, BENCH_BYTES, &ops[r]));
            }
        }
        while (pending) {
            pending = false;
            for (int r = 1; r < nranks; ++r) {
                if (NULL != pairs[r]) {
                    (void) mcast_progress(pairs[r]);
                    CHECK(ops[r].status <= 0 || COLL_ASYNC_TRANSFER_PENDING == ops[r].status);
                    CHECK(ops[r].status >= 0);
                    pending |= COLL_ASYNC_TRANSFER_PENDING == ops[r].status;
                }
            }
        }
    }
    elapsed = seconds() - start;
    if (0 == rank) {
        printf("3 x unicast (2-member groups), drop %.2f: %.3f ms per broadcast, %.1f MB/s\n",
               options->drop, elapsed * 1e3 / BENCH_RUNS,
               BENCH_BYTES * (double) BENCH_RUNS / elapsed / 1e6);
        fflush(stdout);
    }
    pairs[0] = m;
    barrier_many(pairs, nranks, nranks);
    for (int r = 1; r < nranks; ++r) {
        mcast_destroy(pairs[r]);
    }
    free(buffer);
    barrier(m, nranks);
    mcast_destroy(m);
}

static int bench(void)
{
    static const double drops[] = {0, 0.01, 0.05, 0.3};
    pid_t pids[MAX_RANKS];
    int status[MAX_RANKS];

    for (size_t d = 0; d < sizeof(drops) / sizeof(drops[0]); ++d) {
        memset(shared, 0, sizeof(*shared));
        test_options.drop = drops[d];
        test_options.failure_ms = 0;
        test_options.group_id = ((uint64_t) getpid() << 20) + (next_group += 8);
        test_options.key = key_of_group(test_options.group_id);
        test_body = bench_body;
        test_nranks = MAX_RANKS;
        for (int rank = 0; rank < MAX_RANKS; ++rank) {
            pids[rank] = spawn_rank(rank, member, NULL);
        }
        for (int rank = 0; rank < MAX_RANKS; ++rank) {
            if (waitpid(pids[rank], &status[rank], 0) != pids[rank] || 0 != status[rank]) {
                fprintf(stderr, "bench: member %d failed\n", rank);
                return 1;
            }
        }
    }
    return 0;
}

/* Skips where no RDMA port can join a group: the probe runs in a child, so the
 * runner never opens a device before it forks. */
static int probe(void)
{
    pid_t pid;
    int status;

    fflush(NULL);
    pid = fork();
    if (0 == pid) {
        struct coll_async_mcast_config config = {.include = getenv("TEST_MCAST_INCLUDE"),
                                                 .group_id = 1, .nranks = 1};
        struct coll_async_mcast *m;
        char why[256] = "";
        int rc = coll_async_mcast_create(&m, &config, why, sizeof(why));

        if (-ENODEV == rc) {
            printf("test_mcast: skipped: %s (run it in a guest: test/vm --rxe 1 -- %s)\n", why,
                   "test/unit/test_mcast");
            fflush(stdout);
            _exit(SKIP);
        }
        if (0 != rc) {
            fprintf(stderr, "test_mcast: create: %s: %s\n", strerror(-rc), why);
            _exit(1);
        }
        printf("test_mcast: %s, %zu-byte packets\n", coll_async_mcast_describe(m),
               coll_async_mcast_mtu(m));
        mcast_destroy(m);
        fflush(stdout);
        _exit(0);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
        return 1;
    }
    return WEXITSTATUS(status);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_misuse),
        cmocka_unit_test(test_sizes_2),
        cmocka_unit_test(test_sizes_3),
        cmocka_unit_test(test_sizes_4),
        cmocka_unit_test(test_loss_5_percent_3),
        cmocka_unit_test(test_loss_30_percent_3),
        cmocka_unit_test(test_loss_30_percent_4),
        cmocka_unit_test(test_pipelined_4),
        cmocka_unit_test(test_pipelined_loss_3),
        cmocka_unit_test(test_receiver_killed),
        cmocka_unit_test(test_root_killed),
        cmocka_unit_test(test_impostor_claims_root),
        cmocka_unit_test(test_wrong_key_member),
    };
    int rc = probe();

    if (0 != rc) {
        return rc;
    }
    shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                  0);
    if (MAP_FAILED == shared) {
        return 1;
    }
    if (NULL != getenv("TEST_MCAST_BENCH")) {
        return bench();
    }
    if (NULL != getenv("TEST_MCAST_ONLY")) {
        cmocka_set_test_filter(getenv("TEST_MCAST_ONLY")); /* e.g. "*loss*" */
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
