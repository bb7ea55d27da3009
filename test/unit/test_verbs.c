/*
 * Unit tests of the verbs RC transport (transport/coll_async_verbs.c) on a real
 * RDMA device, with forked processes as the peers: address blobs, eager
 * messages (order, contents, many more than the receiver posted buffers for),
 * bulk transfers of 0, 1, eager_limit, eager_limit + 1, chunk_size + 1 and
 * 8 MiB bytes with the receive posted before and after the send, two transfers
 * in flight to one peer, both peers sending at once, striping over two ports,
 * receives too small on either path, a READY crossing a SMALL of the same tag,
 * buffers freed and reallocated between transfers, refused and timed-out
 * connections, destroy cancelling what is in flight, and a peer killed
 * mid-transfer.
 *
 * Where discovery finds no port (a host without RDMA), it exits 77: skipped.
 * Run it in a guest with soft-RoCE: test/vm --rxe 2 -- test/unit/test_verbs.
 * Processes of one machine reach each other through the same device (one rxe
 * device reaches itself), so "two ports" are two devices, each reaching itself.
 *
 * test_verbs --bench measures instead of testing: eager round trips and the
 * bandwidth of 8 MiB transfers over one port and over two.
 *
 * The children (forked_ranks.h) exchange address blobs and meet at barriers
 * through a shared anonymous mapping, standing in for the modex.
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

#include "test_keys.h"

#include "../../ompi/mca/coll/async/transport/coll_async_verbs.h"
#include "forked_ranks.h"

#define MAX_RANKS 3
#define RANK_TIMEOUT_S 240 /* soft-RoCE under emulation is slow */
#define EAGER_LIMIT 4096
#define CHUNK (64 * 1024)
#define EAGER_MESSAGES 1000
#define BIG (8 << 20)
#define KILL_BYTES (32 << 20)

/* A post that must succeed; says why when it did not. */
#define POSTED(call, op)                                                                  \
    do {                                                                                  \
        int rc_ = (call);                                                                 \
        if (0 != rc_) {                                                                   \
            fprintf(stderr, "rank %d: %s: %s\n", my_rank, strerror(-rc_),                 \
                    (op)->error ? (op)->error : "");                                      \
            child_fail(__FILE__, __LINE__, #call);                                        \
        }                                                                                 \
    } while (0)

/* An op that must have succeeded; says why when it did not. */
#define SUCCEEDED(op)                                                                     \
    do {                                                                                  \
        if (0 != (op).status) {                                                           \
            fprintf(stderr, "rank %d: %s: %s\n", my_rank, strerror(-(op).status),         \
                    (op).error ? (op).error : "");                                        \
            child_fail(__FILE__, __LINE__, #op " succeeded");                             \
        }                                                                                 \
    } while (0)

/* The pretend modex and barrier, shared by the children of one test. */
struct shared {
    int nranks;
    int arrived, generation;
    int posted; /* a flag one rank raises for another, outside the transport */
    size_t blob_length[MAX_RANKS];
    uint8_t blob[MAX_RANKS][COLL_ASYNC_VERBS_ADDRESS_MAX];
};

static struct shared *shared;
static int ports_here; /* what discovery found */
static bool spin;      /* step() polls without sleeping on the fd */

/* What the next test's transports use. */
static struct {
    int max_ports;
    const char *include;
    int connect_timeout_ms;
} setup;

typedef void (*rank_fn)(int rank, int nranks);

/* Sleeps on the transport's fd when progress found nothing to do. */
static void step(struct coll_async_verbs *verbs)
{
    struct pollfd pfd = {.fd = coll_async_verbs_fd(verbs), .events = POLLIN};

    if (0 == coll_async_verbs_progress(verbs) && !spin) {
        (void) poll(&pfd, 1, 1);
    }
}

static void barrier(struct coll_async_verbs *verbs)
{
    int generation = __atomic_load_n(&shared->generation, __ATOMIC_ACQUIRE);

    if (shared->nranks == __atomic_add_fetch(&shared->arrived, 1, __ATOMIC_ACQ_REL)) {
        __atomic_store_n(&shared->arrived, 0, __ATOMIC_RELAXED);
        __atomic_add_fetch(&shared->generation, 1, __ATOMIC_ACQ_REL);
        return;
    }
    while (generation == __atomic_load_n(&shared->generation, __ATOMIC_ACQUIRE)) {
        if (NULL != verbs) {
            step(verbs);
        } else {
            usleep(200);
        }
    }
}

/* Progresses for about ms milliseconds. */
static void linger(struct coll_async_verbs *verbs, int ms)
{
    struct timespec start, now;

    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        step(verbs);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
}

struct received {
    int count[MAX_RANKS]; /* eager messages so far, per sender */
    bool bad_order, bad_data;
};

static struct coll_async_verbs *open_transport(int rank, int nranks, struct received *received,
                                               coll_async_verbs_eager_fn on_eager)
{
    /* An id and a count of ids for the transport; the blob goes to shared->blob[rank]. */
    struct coll_async_verbs_config config = {
        .include = setup.include, .self = (uint32_t) rank, .nprocs = (uint32_t) nranks,
        .eager_limit = EAGER_LIMIT, .chunk_size = CHUNK, .max_ports = setup.max_ports,
        .connect_timeout_ms = setup.connect_timeout_ms ? setup.connect_timeout_ms : 20000,
        .on_eager = on_eager, .context = received,
    };
    struct coll_async_verbs *verbs;
    char why[256] = "";
    int rc = coll_async_verbs_create(&verbs, &config, why, sizeof(why)), length;

    if (0 != rc) {
        fprintf(stderr, "rank %d: create: %s: %s\n", rank, strerror(-rc), why);
        CHECK(0 == rc);
    }
    length = coll_async_verbs_address(verbs, shared->blob[rank], COLL_ASYNC_VERBS_ADDRESS_MAX);
    CHECK(length > 0);
    shared->blob_length[rank] = (size_t) length;
    return verbs;
}

/* Creates the transport, publishes its blob, and adds every other rank. */
static struct coll_async_verbs *open_all(int rank, int nranks, struct received *received,
                                         coll_async_verbs_eager_fn on_eager)
{
    struct coll_async_verbs *verbs = open_transport(rank, nranks, received, on_eager);

    barrier(NULL);
    for (int peer = 0; peer < nranks; ++peer) {
        if (peer != rank) {
            CHECK(0 == coll_async_verbs_add_peer(verbs, (uint32_t) peer,
                                                 test_key_of((uint32_t) peer), shared->blob[peer],
                                                 shared->blob_length[peer]));
        }
    }
    barrier(NULL);
    return verbs;
}

/* The peer may still be receiving what we sent last: part together, then close. */
static void close_all(struct coll_async_verbs *verbs)
{
    barrier(verbs);
    coll_async_verbs_destroy(verbs);
}

static void wait_op(struct coll_async_verbs *verbs, const struct coll_async_verbs_op *op)
{
    while (COLL_ASYNC_VERBS_PENDING == op->status) {
        step(verbs);
    }
}

/* Message contents: byte i of sender s's message k. */
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
            fprintf(stderr, "rank %d: byte %zu of %zu is %u, not %u\n", my_rank, i, length,
                    data[i], pattern(sender, k, i));
            return false;
        }
    }
    return true;
}

/* Parent: fork the ranks, collect their verdicts */

struct job {
    rank_fn body;
    int nranks;
};

static void run_rank(int rank, void *context)
{
    const struct job *job = context;

    alarm(RANK_TIMEOUT_S);
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

static void run_ranks(int nranks, rank_fn body)
{
    pid_t pids[MAX_RANKS];
    int status[MAX_RANKS];

    reset_shared(nranks);
    for (int rank = 0; rank < nranks; ++rank) {
        pids[rank] = spawn(rank, nranks, body);
    }
    wait_ranks(nranks, pids, status);
    assert_ranks_exited_cleanly(nranks, pids, status);
}

static int setup_defaults(void **state)
{
    (void) state;
    memset(&setup, 0, sizeof(setup));
    return 0;
}

/* Address blobs and argument checks, in one process */

static void addresses(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_transport(rank, 3, NULL, NULL);
    struct coll_async_verbs_port_info ports[COLL_ASYNC_VERBS_MAX_PORTS];
    uint8_t blob[COLL_ASYNC_VERBS_ADDRESS_MAX], elsewhere[COLL_ASYNC_VERBS_ADDRESS_MAX];
    uint64_t bytes[COLL_ASYNC_VERBS_MAX_PORTS];
    struct coll_async_verbs_op op = {0};
    int length = coll_async_verbs_address(verbs, blob, sizeof(blob)), nports;

    (void) nranks;
    nports = coll_async_verbs_ports(verbs, ports, COLL_ASYNC_VERBS_MAX_PORTS);
    CHECK(nports >= 1 && nports <= ports_here);
    for (int p = 0; p < nports; ++p) {
        fprintf(stderr, "port %d: %s:%d netdev \"%s\" numa %d\n", p, ports[p].device,
                ports[p].port, ports[p].netdev, ports[p].numa);
    }
    CHECK(length > 0 && length <= COLL_ASYNC_VERBS_ADDRESS_MAX);
    CHECK(-ENOSPC == coll_async_verbs_address(verbs, blob, (size_t) length - 1));
    /* Not added yet: nowhere to send. */
    CHECK(-EHOSTUNREACH == coll_async_verbs_send_eager(verbs, 1, 0, "x", 1, &op));
    CHECK(-EINVAL == coll_async_verbs_add_peer(verbs, 0, test_key_of(0),
                                               blob, (size_t) length)); /* self */
    CHECK(-EINVAL == coll_async_verbs_add_peer(verbs, 3, test_key_of(3), blob, (size_t) length));
    CHECK(-EINVAL == coll_async_verbs_add_peer(verbs, 1, test_key_of(1),
                                               blob, (size_t) length - 1));
    memcpy(elsewhere, blob, (size_t) length);
    elsewhere[0] ^= 1;
    CHECK(-EINVAL == coll_async_verbs_add_peer(verbs, 1, test_key_of(1),
                                               elsewhere, (size_t) length));
    /* A peer whose ports are all on another subnet: TCP's business. */
    memcpy(elsewhere, blob, (size_t) length);
    for (int p = 0; p < nports; ++p) {
        memcpy(elsewhere + 8 + 8 * p, "\xc0\x00\x02\x01", 4); /* 192.0.2.1 */
        elsewhere[8 + 8 * p + 6] = 32;
    }
    CHECK(-ENETUNREACH == coll_async_verbs_add_peer(verbs, 2, test_key_of(2),
                                                    elsewhere, (size_t) length));
    CHECK(0 == coll_async_verbs_add_peer(verbs, 1, test_key_of(1), blob, (size_t) length));
    CHECK(-EEXIST == coll_async_verbs_add_peer(verbs, 1, test_key_of(1), blob, (size_t) length));
    CHECK(-EMSGSIZE == coll_async_verbs_send_eager(verbs, 1, 0, blob, EAGER_LIMIT + 1, &op));
    CHECK(-EINVAL == coll_async_verbs_send_eager(verbs, 0, 0, blob, 1, &op));
    CHECK(nports == coll_async_verbs_port_bytes(verbs, 1, bytes, COLL_ASYNC_VERBS_MAX_PORTS));
    CHECK(0 == bytes[0]);
    coll_async_verbs_destroy(verbs);
}

static void test_addresses(void **state)
{
    (void) state;
    run_ranks(1, addresses);
}

/* Eager messages: order and contents, far more than the receivers posted
 * buffers for (credits), all directions at once, with bulk transfers among them */

static size_t eager_length(uint64_t k)
{
    if (k % 17 == 0) {
        return 0;
    }
    return k % 50 == 1 ? EAGER_LIMIT : (k * 37) % 1500;
}

static void on_eager_ordered(void *context, uint32_t peer, uint64_t tag, const void *data,
                             size_t length)
{
    struct received *received = context;
    uint64_t k = (uint64_t) received->count[peer]++;

    received->bad_order = received->bad_order || tag != k;
    received->bad_data = received->bad_data || length != eager_length(k)
                         || !holds(data, length, (int) peer, k);
}

static void eager_load(int rank, int nranks)
{
    static struct coll_async_verbs_op ops[MAX_RANKS][EAGER_MESSAGES];
    static struct coll_async_verbs_op sends[MAX_RANKS], recvs[MAX_RANKS];
    static uint8_t *data[EAGER_MESSAGES], *in[MAX_RANKS], out[(1 << 20) + 7];
    struct received received = {0};
    struct coll_async_verbs *verbs = open_all(rank, nranks, &received, on_eager_ordered);
    bool done = false;

    for (uint64_t k = 0; k < EAGER_MESSAGES; ++k) {
        data[k] = malloc(eager_length(k) + 1);
        CHECK(NULL != data[k]);
        fill(data[k], eager_length(k), rank, k);
    }
    fill(out, sizeof(out), rank, 0);
    for (int peer = 0; peer < nranks; ++peer) {
        CHECK(NULL != (in[peer] = calloc(1, sizeof(out))));
    }
    for (uint64_t k = 0; k < EAGER_MESSAGES; ++k) {
        for (int peer = 0; peer < nranks; ++peer) {
            if (peer == rank) {
                continue;
            }
            if (EAGER_MESSAGES / 4 == k) {
                POSTED(coll_async_verbs_send_bulk(verbs, (uint32_t) peer, 0, out, sizeof(out),
                                                  &sends[peer]),
                       &sends[peer]);
                POSTED(coll_async_verbs_recv_bulk(verbs, (uint32_t) peer, 0, in[peer],
                                                  sizeof(out), &recvs[peer]),
                       &recvs[peer]);
            }
            POSTED(coll_async_verbs_send_eager(verbs, (uint32_t) peer, k, data[k],
                                               eager_length(k), &ops[peer][k]),
                   &ops[peer][k]);
        }
        if (k % 8 == 0) {
            (void) coll_async_verbs_progress(verbs);
        }
    }
    while (!done) {
        step(verbs);
        done = true;
        for (int peer = 0; peer < nranks; ++peer) {
            done = done && (peer == rank || (received.count[peer] == EAGER_MESSAGES
                                             && 0 == ops[peer][EAGER_MESSAGES - 1].status
                                             && 0 == sends[peer].status
                                             && 0 == recvs[peer].status));
            /* Pending or done, never failed. */
            CHECK(peer == rank || (ops[peer][EAGER_MESSAGES - 1].status >= 0
                                   && sends[peer].status >= 0 && recvs[peer].status >= 0));
        }
    }
    CHECK(!received.bad_order && !received.bad_data);
    for (int peer = 0; peer < nranks; ++peer) {
        for (int k = 0; k < EAGER_MESSAGES && peer != rank; ++k) {
            SUCCEEDED(ops[peer][k]);
        }
        CHECK(peer == rank || (sizeof(out) == recvs[peer].bytes
                               && holds(in[peer], sizeof(out), peer, 0)));
        free(in[peer]);
    }
    close_all(verbs);
    for (int k = 0; k < EAGER_MESSAGES; ++k) {
        free(data[k]);
    }
}

static void test_eager_2(void **state)
{
    (void) state;
    run_ranks(2, eager_load);
}

static void test_eager_3(void **state)
{
    (void) state;
    run_ranks(3, eager_load);
}

/* Bulk transfers of every size class, the receive posted before and after */

static const size_t bulk_sizes[] = {0, 1, EAGER_LIMIT, EAGER_LIMIT + 1, CHUNK + 1, BIG};
#define NSIZES (sizeof(bulk_sizes) / sizeof(bulk_sizes[0]))

static void bulk_sizes_body(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_all(rank, nranks, NULL, NULL);
    uint8_t *data = malloc(BIG + 100);
    uint64_t tag = 0;

    CHECK(NULL != data);
    for (int late = 0; late < 2; ++late) {
        for (size_t s = 0; s < NSIZES; ++s, ++tag) {
            size_t size = bulk_sizes[s];
            struct coll_async_verbs_op op = {0};

            if (0 == rank) {
                fill(data, size, 0, tag);
                if (!late) {
                    barrier(verbs); /* the receive is posted */
                }
                POSTED(coll_async_verbs_send_bulk(verbs, 1, tag, size ? data : NULL, size, &op),
                       &op);
                if (late) {
                    barrier(verbs); /* the send is posted */
                }
                wait_op(verbs, &op);
                SUCCEEDED(op);
            } else {
                memset(data, 0xee, size + 100);
                if (late) {
                    barrier(verbs);
                    linger(verbs, 50); /* let a small one arrive and be staged */
                }
                /* Room for 100 more bytes than sent: op.bytes says how many came. */
                POSTED(coll_async_verbs_recv_bulk(verbs, 0, tag, data, size + 100, &op), &op);
                if (!late) {
                    barrier(verbs);
                }
                wait_op(verbs, &op);
                SUCCEEDED(op);
                if (op.bytes != size) {
                    fprintf(stderr, "size %zu: %zu bytes came\n", size, op.bytes);
                }
                CHECK(op.bytes == size && holds(data, size, 0, tag));
                CHECK(0xee == data[size] && 0xee == data[size + 99]); /* nothing beyond */
            }
        }
    }
    close_all(verbs);
    free(data);
}

static void test_bulk_sizes(void **state)
{
    (void) state;
    run_ranks(2, bulk_sizes_body);
}

/* Two transfers in flight to the same peer; both peers sending at once */

static void two_in_flight(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_all(rank, nranks, NULL, NULL);
    size_t sizes[2] = {(1 << 20) + 3, (3 << 20) + 5};
    uint8_t *buffers[2] = {malloc(sizes[0]), malloc(sizes[1])};
    struct coll_async_verbs_op ops[2] = {{0}};

    CHECK(NULL != buffers[0] && NULL != buffers[1]);
    if (0 == rank) {
        fill(buffers[0], sizes[0], 0, 1);
        fill(buffers[1], sizes[1], 0, 2);
        POSTED(coll_async_verbs_send_bulk(verbs, 1, 1, buffers[0], sizes[0], &ops[0]), &ops[0]);
        POSTED(coll_async_verbs_send_bulk(verbs, 1, 2, buffers[1], sizes[1], &ops[1]), &ops[1]);
        barrier(verbs);
    } else {
        /* One receive before the sends, one after. */
        POSTED(coll_async_verbs_recv_bulk(verbs, 0, 2, buffers[1], sizes[1], &ops[1]), &ops[1]);
        barrier(verbs);
        POSTED(coll_async_verbs_recv_bulk(verbs, 0, 1, buffers[0], sizes[0], &ops[0]), &ops[0]);
        CHECK(-EBUSY == coll_async_verbs_recv_bulk(verbs, 0, 1, buffers[0], 1, &ops[0]));
    }
    wait_op(verbs, &ops[0]);
    wait_op(verbs, &ops[1]);
    SUCCEEDED(ops[0]);
    SUCCEEDED(ops[1]);
    CHECK(0 == rank || (holds(buffers[0], sizes[0], 0, 1) && holds(buffers[1], sizes[1], 0, 2)));
    close_all(verbs);
    free(buffers[0]);
    free(buffers[1]);
}

static void test_two_in_flight(void **state)
{
    (void) state;
    run_ranks(2, two_in_flight);
}

static void on_eager_count(void *context, uint32_t peer, uint64_t tag, const void *data,
                           size_t length)
{
    struct received *received = context;

    (void) data;
    received->bad_order = received->bad_order || tag != (uint64_t) received->count[peer]
                          || 8 != length;
    ++received->count[peer];
}

static void both_directions(int rank, int nranks)
{
    struct received received = {0};
    struct coll_async_verbs *verbs = open_all(rank, nranks, &received, on_eager_count);
    size_t size = (4 << 20) + 1;
    uint8_t *out = malloc(size), *in = malloc(size);
    int peer = 1 - rank;

    CHECK(NULL != out && NULL != in);
    for (int round = 0; round < 3; ++round) {
        struct coll_async_verbs_op send = {0}, recv = {0}, eager = {0};

        fill(out, size, rank, (uint64_t) round);
        POSTED(coll_async_verbs_recv_bulk(verbs, (uint32_t) peer, (uint64_t) round, in, size,
                                          &recv),
               &recv);
        POSTED(coll_async_verbs_send_bulk(verbs, (uint32_t) peer, (uint64_t) round, out, size,
                                          &send),
               &send);
        POSTED(coll_async_verbs_send_eager(verbs, (uint32_t) peer, (uint64_t) round, out, 8,
                                           &eager),
               &eager);
        wait_op(verbs, &send);
        wait_op(verbs, &recv);
        wait_op(verbs, &eager);
        SUCCEEDED(send);
        SUCCEEDED(recv);
        SUCCEEDED(eager);
        CHECK(holds(in, size, peer, (uint64_t) round));
    }
    while (3 != received.count[peer]) {
        step(verbs);
    }
    CHECK(!received.bad_order);
    close_all(verbs);
    free(out);
    free(in);
}

static void test_both_directions(void **state)
{
    (void) state;
    run_ranks(2, both_directions);
}

/* Striping: 8 MiB over two ports; one port when max_ports is 1 */

static void striped(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_all(rank, nranks, NULL, NULL);
    uint64_t bytes[COLL_ASYNC_VERBS_MAX_PORTS];
    struct coll_async_verbs_op op = {0};
    uint8_t *data = malloc(BIG);
    int nports;

    CHECK(NULL != data);
    if (0 == rank) {
        fill(data, BIG, 0, 5);
        barrier(verbs);
        POSTED(coll_async_verbs_send_bulk(verbs, 1, 5, data, BIG, &op), &op);
        wait_op(verbs, &op);
        SUCCEEDED(op);
        nports = coll_async_verbs_port_bytes(verbs, 1, bytes, COLL_ASYNC_VERBS_MAX_PORTS);
        fprintf(stderr, "max_ports %d: bytes per port:", setup.max_ports);
        for (int p = 0; p < nports; ++p) {
            fprintf(stderr, " %llu", (unsigned long long) bytes[p]);
        }
        fprintf(stderr, "\n");
        CHECK(nports >= 2);
        if (1 == setup.max_ports) {
            CHECK(bytes[0] >= BIG && 0 == bytes[1]);
        } else {
            CHECK(bytes[0] >= 4 * CHUNK && bytes[1] >= 4 * CHUNK);
            CHECK(bytes[0] + bytes[1] >= BIG);
        }
    } else {
        memset(data, 0, BIG);
        POSTED(coll_async_verbs_recv_bulk(verbs, 0, 5, data, BIG, &op), &op);
        barrier(verbs);
        wait_op(verbs, &op);
        SUCCEEDED(op);
        CHECK(holds(data, BIG, 0, 5));
    }
    close_all(verbs);
    free(data);
}

static void test_striped_2_ports(void **state)
{
    (void) state;
    if (ports_here < 2) {
        print_message("skipped: %d port here, striping needs 2\n", ports_here);
        return;
    }
    run_ranks(2, striped);
    setup.max_ports = 1;
    run_ranks(2, striped);
}

/* A receive smaller than the transfer: both sides fail with -EMSGSIZE (the
 * sender too where the receive was posted first), and the peers carry on. */

/* The receiver tells the sender its receive is posted with an eager message,
 * which follows the READY on the same QP: once it is there, so is the READY. */
static void on_eager_note(void *context, uint32_t peer, uint64_t tag, const void *data,
                          size_t length)
{
    struct received *received = context;

    (void) data;
    (void) length;
    (void) tag;
    ++received->count[peer];
}

static void too_small(int rank, int nranks)
{
    struct received received = {0};
    struct coll_async_verbs *verbs = open_all(rank, nranks, &received, on_eager_note);
    static uint8_t data[300000];
    /* Sizes sent and receives posted, and whether the receive comes first. */
    static const struct {
        size_t sent, room;
        bool recv_first;
    } cases[] = {
        {200000, 100000, true},  /* written: the sender sees the READY's capacity */
        {200000, 100000, false}, /* the send waits for the READY, then rejects */
        {200000, 100, true},     /* a receive below eager_limit, a send above */
        {100, 10, true},         /* a SMALL that a READY says does not fit */
    };

    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
        struct coll_async_verbs_op op = {0}, note = {0};

        barrier(verbs);
        if (0 == rank) {
            /* Until case c's note, and so its READY, is here; a case that did not
             * wait may have left its note still to be counted. */
            while (cases[c].recv_first && received.count[1] <= (int) c) {
                step(verbs);
            }
            POSTED(coll_async_verbs_send_bulk(verbs, 1, c, data, cases[c].sent, &op), &op);
            if (!cases[c].recv_first) {
                linger(verbs, 50); /* the send waits for a READY */
            }
            barrier(verbs);
        } else {
            if (!cases[c].recv_first) {
                barrier(verbs);
            }
            POSTED(coll_async_verbs_recv_bulk(verbs, 0, c, data, cases[c].room, &op), &op);
            POSTED(coll_async_verbs_send_eager(verbs, 0, c, "posted", 6, &note), &note);
            if (cases[c].recv_first) {
                barrier(verbs);
            }
            wait_op(verbs, &note);
        }
        wait_op(verbs, &op);
        if (-EMSGSIZE != op.status) {
            fprintf(stderr, "case %zu: %s\n", c, op.error ? op.error : "succeeded");
        }
        CHECK(-EMSGSIZE == op.status && NULL != op.error);
    }
    /* A SMALL staged before its receive: the late receive is refused at once. */
    if (0 == rank) {
        struct coll_async_verbs_op op = {0};

        fill(data, 100, 0, 7);
        POSTED(coll_async_verbs_send_bulk(verbs, 1, 99, data, 100, &op), &op);
        wait_op(verbs, &op);
        SUCCEEDED(op);
        barrier(verbs);
    } else {
        struct coll_async_verbs_op op = {0};

        barrier(verbs);
        linger(verbs, 50);
        CHECK(-EMSGSIZE == coll_async_verbs_recv_bulk(verbs, 0, 99, data, 10, &op));
        /* The staged transfer waits for a receive it fits. */
        CHECK(0 == coll_async_verbs_recv_bulk(verbs, 0, 99, data, 100, &op));
        wait_op(verbs, &op);
        SUCCEEDED(op);
        CHECK(100 == op.bytes && holds(data, 100, 0, 7));
    }
    /* The peers still work. */
    {
        struct coll_async_verbs_op op = {0};

        fill(data, sizeof(data), 0, 7);
        if (0 == rank) {
            POSTED(coll_async_verbs_send_bulk(verbs, 1, 100, data, sizeof(data), &op), &op);
        } else {
            memset(data, 0, sizeof(data));
            POSTED(coll_async_verbs_recv_bulk(verbs, 0, 100, data, sizeof(data), &op), &op);
        }
        wait_op(verbs, &op);
        SUCCEEDED(op);
        CHECK(0 == rank || holds(data, sizeof(data), 0, 7));
    }
    close_all(verbs);
}

static void test_too_small(void **state)
{
    (void) state;
    run_ranks(2, too_small);
}

/*
 * A READY crossing a SMALL. Each round, three transfers with one tag t:
 *  1. the receiver posts a big receive (its READY goes out at once) and raises a
 *     flag; the sender, which has not progressed since, sends 100 bytes: the
 *     SMALL crosses the READY, which the sender processes only later;
 *  2. the receiver posts a big receive into a second buffer and says so with an
 *     eager message; the sender then sends big;
 *  3. the sender sends big first, the receiver posts into a third buffer after.
 * Were the READY of 1 kept, 3 would write into the first buffer (or into no
 * posted receive at all).
 */
static void crossing(int rank, int nranks)
{
    struct received received = {0};
    struct coll_async_verbs *verbs = open_all(rank, nranks, &received, on_eager_note);
    size_t big = 200000;
    uint8_t *buffers[3] = {malloc(big), malloc(big), malloc(big)};

    CHECK(NULL != buffers[0] && NULL != buffers[1] && NULL != buffers[2]);
    for (int round = 0; round < 10; ++round) {
        uint64_t tag = 1000 + (uint64_t) round;
        struct coll_async_verbs_op ops[3] = {{0}}, note = {0};

        __atomic_store_n(&shared->posted, 0, __ATOMIC_RELEASE);
        barrier(verbs);
        if (0 == rank) {
            for (int b = 0; b < 3; ++b) {
                fill(buffers[b], big, 0, tag + (uint64_t) b);
            }
            while (!__atomic_load_n(&shared->posted, __ATOMIC_ACQUIRE)) {
                usleep(100); /* no progress: the READY stays unprocessed */
            }
            usleep(20000); /* and is surely in our receive queue */
            POSTED(coll_async_verbs_send_bulk(verbs, 1, tag, buffers[0], 100, &ops[0]), &ops[0]);
            wait_op(verbs, &ops[0]);
            while (received.count[1] == round) {
                step(verbs);
            }
            POSTED(coll_async_verbs_send_bulk(verbs, 1, tag, buffers[1], big, &ops[1]), &ops[1]);
            wait_op(verbs, &ops[1]);
            barrier(verbs);
            POSTED(coll_async_verbs_send_bulk(verbs, 1, tag, buffers[2], big, &ops[2]), &ops[2]);
            barrier(verbs);
        } else {
            for (int b = 0; b < 3; ++b) {
                memset(buffers[b], 0, big);
            }
            POSTED(coll_async_verbs_recv_bulk(verbs, 0, tag, buffers[0], big, &ops[0]), &ops[0]);
            __atomic_store_n(&shared->posted, 1, __ATOMIC_RELEASE);
            wait_op(verbs, &ops[0]);
            SUCCEEDED(ops[0]);
            CHECK(100 == ops[0].bytes && holds(buffers[0], 100, 0, tag));
            POSTED(coll_async_verbs_recv_bulk(verbs, 0, tag, buffers[1], big, &ops[1]), &ops[1]);
            POSTED(coll_async_verbs_send_eager(verbs, 0, tag, "ok", 2, &note), &note);
            wait_op(verbs, &ops[1]);
            barrier(verbs);
            barrier(verbs); /* the third send is posted */
            linger(verbs, 20);
            POSTED(coll_async_verbs_recv_bulk(verbs, 0, tag, buffers[2], big, &ops[2]), &ops[2]);
        }
        for (int b = 0; b < 3; ++b) {
            wait_op(verbs, &ops[b]);
            SUCCEEDED(ops[b]);
        }
        if (1 == rank) {
            CHECK(big == ops[1].bytes && holds(buffers[1], big, 0, tag + 1));
            CHECK(big == ops[2].bytes && holds(buffers[2], big, 0, tag + 2));
            for (size_t i = 100; i < big; ++i) {
                CHECK(0 == buffers[0][i]);
            }
            wait_op(verbs, &note);
        }
    }
    close_all(verbs);
    for (int b = 0; b < 3; ++b) {
        free(buffers[b]);
    }
}

static void test_ready_crossing_small(void **state)
{
    (void) state;
    run_ranks(2, crossing);
}

/*
 * Buffers unmapped and mapped again between transfers, at the same address with
 * other pages behind it (what free() and malloc() do to big buffers, forced
 * here: glibc may keep a freed block in its heap instead). The cache still has a
 * registration for that range, pinning the old pages; with invalidate it
 * registers the new ones and the data is right, on both sides.
 */
static uint8_t *map_at(void *address)
{
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | (NULL != address ? MAP_FIXED_NOREPLACE : 0);
    void *data = mmap(address, BIG, PROT_READ | PROT_WRITE, flags, -1, 0);

    CHECK(MAP_FAILED != data && (NULL == address || data == address));
    return data;
}

static void reallocated(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_all(rank, nranks, NULL, NULL);
    uint8_t *data = map_at(NULL);

    for (int round = 0; round < 3; ++round) {
        struct coll_async_verbs_op op = {0};

        if (round > 0) {
            CHECK(0 == munmap(data, BIG));
            coll_async_verbs_invalidate(verbs, data, BIG);
            data = map_at(data);
        }
        if (0 == rank) {
            fill(data, BIG, 0, (uint64_t) round);
            barrier(verbs);
            POSTED(coll_async_verbs_send_bulk(verbs, 1, (uint64_t) round, data, BIG, &op), &op);
        } else {
            POSTED(coll_async_verbs_recv_bulk(verbs, 0, (uint64_t) round, data, BIG, &op), &op);
            barrier(verbs);
        }
        wait_op(verbs, &op);
        SUCCEEDED(op);
        CHECK(0 == rank || holds(data, BIG, 0, (uint64_t) round));
    }
    close_all(verbs);
    CHECK(0 == munmap(data, BIG));
}

static void test_reallocated_buffers(void **state)
{
    (void) state;
    run_ranks(2, reallocated);
}

/* A peer whose listener is gone: the connection is refused, the op fails with
 * a message naming the peer, in bounded time. */
static void refused(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_transport(rank, 2, NULL, NULL);
    struct coll_async_verbs *gone = open_transport(1, 2, NULL, NULL);
    struct coll_async_verbs_op op = {0}, late = {0};
    struct timespec start, end;

    (void) nranks;
    coll_async_verbs_destroy(gone);
    CHECK(0 == coll_async_verbs_add_peer(verbs, 1, test_key_of(1),
                                         shared->blob[1], shared->blob_length[1]));
    clock_gettime(CLOCK_MONOTONIC, &start);
    POSTED(coll_async_verbs_send_eager(verbs, 1, 0, "x", 1, &op), &op);
    wait_op(verbs, &op);
    clock_gettime(CLOCK_MONOTONIC, &end);
    fprintf(stderr, "refused after %ld s: %s\n", (long) (end.tv_sec - start.tv_sec), op.error);
    CHECK(op.status < 0 && NULL != strstr(op.error, "peer 1, link 0"));
    CHECK(end.tv_sec - start.tv_sec < 60);
    /* Later posts fail at once, with the same reason. */
    CHECK(op.status == coll_async_verbs_recv_bulk(verbs, 1, 0, "", 0, &late));
    CHECK(late.error == op.error);
    coll_async_verbs_destroy(verbs);
}

static void test_connect_refused(void **state)
{
    (void) state;
    run_ranks(1, refused);
}

/* A peer that never answers (its transport never progresses, so its listener
 * never accepts): the connection times out; then destroy cancels what is left. */

static int completions;

static void count_completion(struct coll_async_verbs_op *op)
{
    (void) op;
    ++completions;
}

static void silent(int rank, int nranks)
{
    struct coll_async_verbs *verbs, *mute;
    struct coll_async_verbs_op op = {0};
    struct timespec start, end;
    long ms;

    (void) nranks;
    setup.connect_timeout_ms = 500;
    verbs = open_transport(rank, 2, NULL, NULL);
    mute = open_transport(1, 2, NULL, NULL);
    CHECK(0 == coll_async_verbs_add_peer(verbs, 1, test_key_of(1),
                                         shared->blob[1], shared->blob_length[1]));
    clock_gettime(CLOCK_MONOTONIC, &start);
    POSTED(coll_async_verbs_send_eager(verbs, 1, 0, "x", 1, &op), &op);
    wait_op(verbs, &op);
    clock_gettime(CLOCK_MONOTONIC, &end);
    ms = (end.tv_sec - start.tv_sec) * 1000 + (end.tv_nsec - start.tv_nsec) / 1000000;
    fprintf(stderr, "after %ld ms: %s\n", ms, op.error);
    CHECK(-ETIMEDOUT == op.status && NULL != strstr(op.error, "not established in time"));
    CHECK(ms >= 450 && ms < 5000);
    coll_async_verbs_destroy(mute);
    coll_async_verbs_destroy(verbs);
}

static void test_connect_timeout(void **state)
{
    (void) state;
    run_ranks(1, silent);
}

static void cancelled(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_all(rank, nranks, NULL, NULL);
    static uint8_t data[100000];
    struct coll_async_verbs_op ops[4] = {{0}};

    if (0 == rank) {
        for (int i = 0; i < 4; ++i) {
            ops[i].complete = count_completion;
        }
        /* A receive nobody sends to, a send waiting for a READY that never comes,
         * and, behind them, a small send and an eager message. */
        POSTED(coll_async_verbs_recv_bulk(verbs, 1, 1, data, sizeof(data), &ops[0]), &ops[0]);
        POSTED(coll_async_verbs_send_bulk(verbs, 1, 2, data, sizeof(data), &ops[1]), &ops[1]);
        linger(verbs, 200);
        POSTED(coll_async_verbs_send_bulk(verbs, 1, 3, data, 10, &ops[2]), &ops[2]);
        POSTED(coll_async_verbs_send_eager(verbs, 1, 4, data, 10, &ops[3]), &ops[3]);
        coll_async_verbs_destroy(verbs);
        CHECK(-ECANCELED == ops[0].status && -ECANCELED == ops[1].status);
        CHECK(NULL != strstr(ops[0].error, "peer 1") && NULL != strstr(ops[0].error,
                                                                       "transport closed"));
        /* The last two may have gone out before destroy; none is left pending. */
        CHECK(ops[2].status <= 0 && ops[3].status <= 0);
        CHECK(4 == completions);
        barrier(NULL);
    } else {
        barrier(NULL);
        coll_async_verbs_destroy(verbs);
    }
}

static void test_destroy_cancels(void **state)
{
    (void) state;
    run_ranks(2, cancelled);
}

/* A peer killed mid-transfer */

/* Rank 1: takes part in both transfers, tells the parent once it has written a
 * few chunks, then stops and waits for SIGKILL. */
static void victim(struct coll_async_verbs *verbs, uint8_t *in, uint8_t *out)
{
    struct coll_async_verbs_op send = {0}, recv = {0};
    uint64_t bytes[COLL_ASYNC_VERBS_MAX_PORTS] = {0};

    POSTED(coll_async_verbs_recv_bulk(verbs, 0, 1, in, KILL_BYTES, &recv), &recv);
    POSTED(coll_async_verbs_send_bulk(verbs, 0, 2, out, KILL_BYTES, &send), &send);
    while (bytes[0] < 4 * CHUNK) {
        step(verbs);
        (void) coll_async_verbs_port_bytes(verbs, 0, bytes, COLL_ASYNC_VERBS_MAX_PORTS);
    }
    victim_cue_then_wait();
}

static void survivor(struct coll_async_verbs *verbs, uint8_t *in, uint8_t *out)
{
    struct coll_async_verbs_op send = {0}, recv = {0}, late = {0};
    struct coll_async_verbs_port_info ports[COLL_ASYNC_VERBS_MAX_PORTS];
    int nports;

    POSTED(coll_async_verbs_send_bulk(verbs, 1, 1, out, KILL_BYTES, &send), &send);
    POSTED(coll_async_verbs_recv_bulk(verbs, 1, 2, in, KILL_BYTES, &recv), &recv);
    wait_op(verbs, &send);
    wait_op(verbs, &recv);
    fprintf(stderr, "survivor: send: %s\nsurvivor: recv: %s\n", send.error, recv.error);
    CHECK(send.status < 0 && recv.status < 0);
    CHECK(NULL != strstr(send.error, "peer 1, link") && NULL != strstr(recv.error, "peer 1, link"));
    /* The device of whichever link failed first (a handshake on link 1 may be under way). */
    nports = coll_async_verbs_ports(verbs, ports, COLL_ASYNC_VERBS_MAX_PORTS);
    while (nports > 0 && NULL == strstr(recv.error, ports[nports - 1].device)) {
        --nports;
    }
    CHECK(nports > 0);
    /* Later posts to the dead peer fail at once, with the same reason. */
    CHECK(recv.status == coll_async_verbs_send_eager(verbs, 1, 3, out, 1, &late));
    CHECK(late.error == recv.error);
    coll_async_verbs_destroy(verbs);
}

static void killed(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_all(rank, nranks, NULL, NULL);
    uint8_t *in = calloc(1, KILL_BYTES), *out = calloc(1, KILL_BYTES);

    CHECK(NULL != in && NULL != out);
    if (0 == rank) {
        survivor(verbs, in, out);
    } else {
        victim(verbs, in, out);
    }
    free(in);
    free(out);
}

static void test_peer_killed(void **state)
{
    pid_t pids[2];
    long seconds;

    (void) state;
    reset_shared(2);
    victim_cue_open();
    pids[0] = spawn(0, 2, killed);
    pids[1] = spawn(1, 2, killed);
    seconds = kill_victim_time_survivor(pids);
    print_message("the survivor failed %ld s after the kill\n", seconds);
    assert_true(seconds < 60);
}

/* --bench: eager round trips and 8 MiB bandwidth (a report, not a test) */

static double seconds_since(const struct timespec *start)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double) (now.tv_sec - start->tv_sec) + (double) (now.tv_nsec - start->tv_nsec) * 1e-9;
}

static void bench(int rank, int nranks)
{
    struct received received = {0};
    struct coll_async_verbs *verbs = open_all(rank, nranks, &received, on_eager_note);
    const int round_trips = 200, transfers = 8;
    uint8_t *data = malloc(BIG);
    struct timespec start;
    int peer = 1 - rank;

    CHECK(NULL != data);
    fill(data, BIG, rank, 0);
    for (int mode = 0; mode < 2; ++mode) {
        spin = 1 == mode;
        barrier(verbs);
        for (int i = -10; i < round_trips; ++i) { /* 10 to warm up (connections) */
            struct coll_async_verbs_op op = {0};

            if (0 == i) {
                clock_gettime(CLOCK_MONOTONIC, &start);
            }
            if (0 == rank) {
                POSTED(coll_async_verbs_send_eager(verbs, 1, 0, data, 8, &op), &op);
            }
            while (received.count[peer] < (round_trips + 10) * mode + i + 11) {
                step(verbs);
            }
            if (1 == rank) {
                POSTED(coll_async_verbs_send_eager(verbs, 0, 0, data, 8, &op), &op);
            }
            wait_op(verbs, &op);
        }
        if (0 == rank) {
            printf("bench: eager round trip (8 bytes), %s: %.1f us (%d round trips)\n",
                   spin ? "spinning on progress" : "sleeping on the fd",
                   seconds_since(&start) * 1e6 / round_trips, round_trips);
            fflush(stdout); /* the rank ends in _exit */
        }
    }
    spin = false;
    for (int i = -1; i < transfers; ++i) { /* 1 to warm up (registration) */
        struct coll_async_verbs_op op = {0};

        barrier(verbs);
        if (0 == i) {
            clock_gettime(CLOCK_MONOTONIC, &start);
        }
        if (0 == rank) {
            POSTED(coll_async_verbs_send_bulk(verbs, 1, (uint64_t) i + 1, data, BIG, &op), &op);
        } else {
            POSTED(coll_async_verbs_recv_bulk(verbs, 0, (uint64_t) i + 1, data, BIG, &op), &op);
        }
        wait_op(verbs, &op);
        SUCCEEDED(op);
    }
    if (1 == rank) {
        double elapsed = seconds_since(&start);

        printf("bench: 8 MiB bulk, max_ports %d: %.1f MB/s (%d transfers in %.3f s)\n",
               setup.max_ports, (double) BIG * transfers / elapsed / 1e6, transfers, elapsed);
        fflush(stdout);
    }
    close_all(verbs);
    free(data);
}

static void test_bench(void **state)
{
    (void) state;
    setup.max_ports = 1;
    run_ranks(2, bench);
    if (ports_here >= 2) {
        setup.max_ports = 2;
        run_ranks(2, bench);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_addresses, setup_defaults),
        cmocka_unit_test_setup(test_eager_2, setup_defaults),
        cmocka_unit_test_setup(test_eager_3, setup_defaults),
        cmocka_unit_test_setup(test_bulk_sizes, setup_defaults),
        cmocka_unit_test_setup(test_two_in_flight, setup_defaults),
        cmocka_unit_test_setup(test_both_directions, setup_defaults),
        cmocka_unit_test_setup(test_striped_2_ports, setup_defaults),
        cmocka_unit_test_setup(test_too_small, setup_defaults),
        cmocka_unit_test_setup(test_ready_crossing_small, setup_defaults),
        cmocka_unit_test_setup(test_reallocated_buffers, setup_defaults),
        cmocka_unit_test_setup(test_connect_refused, setup_defaults),
        cmocka_unit_test_setup(test_connect_timeout, setup_defaults),
        cmocka_unit_test_setup(test_destroy_cancels, setup_defaults),
        cmocka_unit_test_setup(test_peer_killed, setup_defaults),
    };
    const struct CMUnitTest benches[] = {
        cmocka_unit_test_setup(test_bench, setup_defaults),
    };
    struct coll_async_verbs_port_info ports[COLL_ASYNC_VERBS_MAX_PORTS];
    char why[256] = "";

    ports_here = coll_async_verbs_discover(NULL, NULL, ports, COLL_ASYNC_VERBS_MAX_PORTS, why,
                                           sizeof(why));
    if (ports_here <= 0) {
        printf("test_verbs: skipped: %s\n", why);
        return 77;
    }
    shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                  0);
    if (MAP_FAILED == shared) {
        return 1;
    }
    if (argc > 1 && 0 == strcmp(argv[1], "--bench")) {
        return cmocka_run_group_tests(benches, NULL, NULL);
    }
    if (NULL != getenv("TEST_VERBS_ONLY")) {
        cmocka_set_test_filter(getenv("TEST_VERBS_ONLY")); /* e.g. "*bulk*" */
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
