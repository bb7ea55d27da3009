/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of the verbs RC transport (transport/coll_async_verbs.c) on a real
 * RDMA device, with forked processes as the peers, calling it through its table
 * of functions as the mapper does: address blobs, many small transfers at once
 * (contents, many more messages than the receiver posted buffers for), bulk
 * transfers of 0, 1, eager_limit, eager_limit + 1, chunk_size + 1 and
 * 8 MiB bytes with the receive posted before and after the send, two transfers
 * in flight to one peer, both peers sending at once, striping over two ports,
 * receives too small on either path, a READY crossing a SMALL of the same tag,
 * buffers freed and reallocated between transfers (unmapped and mapped again,
 * with release; heap trimmed and grown again, without), refused and timed-out
 * connections, destroy cancelling what is in flight, and a peer killed
 * mid-transfer. And strangers: while a legitimate pair exchanges data (checked
 * byte for byte), a third process connects to one of them with a transport that
 * holds the wrong key for it, then with raw rdma_cm: garbage for a request, a
 * proof under the wrong key, a recorded handshake replayed, a truncated proof, an
 * RDMA write before the proof, connections that never prove themselves (more
 * than the cap); each must be refused and reported in one line, and a proven one
 * may write.
 *
 * Where discovery finds no port (a host without RDMA), it exits 77: skipped.
 * Run it in a guest with soft-RoCE: test/vm --rxe 2 -- test/unit/test_verbs.
 * Processes of one machine reach each other through the same device (one rxe
 * device reaches itself), so "two ports" are two devices, each reaching itself.
 *
 * test_verbs --bench measures instead of testing: small-transfer round trips and the
 * bandwidth of 8 MiB transfers over one port and over two. test_verbs --stranger
 * ADDRESS PORT TO FROM is the stranger alone, against a live job's listener (a
 * rank of id TO, claiming to be FROM): garbage, a proof under a guessed key, a
 * connection that never proves itself; it exits 0 when each was refused.
 *
 * The children (forked_ranks.h) exchange address blobs and meet at barriers
 * through a shared anonymous mapping, standing in for the modex.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <malloc.h>
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

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "test_keys.h"

#include "../../ompi/mca/coll/async/transport/coll_async_verbs.h"
#include "../../ompi/mca/coll/async/transport/coll_async_verbs_handshake.h"
#include "forked_ranks.h"

#define MAX_RANKS 3
#define RANK_TIMEOUT_S 240 /* soft-RoCE under emulation is slow */
#define EAGER_LIMIT 4096
#define CHUNK (64 * 1024)
#define SMALL_TRANSFERS 1000
#define NOTE_TAG(n) (((uint64_t) 1 << 40) + (uint64_t) (n)) /* tags apart from the data's */
#define BIG (8 << 20)
#define KILL_BYTES (32 << 20)
#define MAX_LINES 24

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
    struct forked_barrier barrier;
    int posted; /* a flag one rank raises for another, outside the transport */
    size_t blob_length[MAX_RANKS];
    uint8_t blob[MAX_RANKS][COLL_ASYNC_VERBS_ADDRESS_MAX];
    int rounds, stop_round, stranger_done, pair_done; /* the strangers' test */
    int refusals;                          /* on_refused lines, of every rank */
    char lines[MAX_LINES][400];
};

static struct shared *shared;
static int ports_here; /* what discovery found */
static bool spin;      /* step() polls without sleeping on the fd */

/* What the next test's transports use. */
static struct {
    int max_ports;
    const char *include;
    int connect_timeout_ms;
    int max_unproven;
} setup;

typedef void (*rank_fn)(int rank, int nranks);

/* The transport's functions, through its table as the mapper calls them. */

static int verbs_send(struct coll_async_verbs *verbs, uint32_t peer, uint64_t tag,
                      const void *data, size_t length, struct coll_async_transfer *op)
{
    struct coll_async_transport *t = coll_async_verbs_transport(verbs);

    return t->ops->send(t, peer, tag, data, length, op);
}

static int verbs_recv(struct coll_async_verbs *verbs, uint32_t peer, uint64_t tag, void *buffer,
                      size_t length, struct coll_async_transfer *op)
{
    struct coll_async_transport *t = coll_async_verbs_transport(verbs);

    return t->ops->recv(t, peer, tag, buffer, length, op);
}

static int verbs_progress(struct coll_async_verbs *verbs)
{
    struct coll_async_transport *t = coll_async_verbs_transport(verbs);

    return t->ops->progress(t);
}

static int verbs_fd(struct coll_async_verbs *verbs)
{
    struct coll_async_transport *t = coll_async_verbs_transport(verbs);

    return t->ops->fd(t);
}

static int verbs_address(struct coll_async_verbs *verbs, void *blob, size_t size)
{
    struct coll_async_transport *t = coll_async_verbs_transport(verbs);

    return t->ops->address(t, blob, size);
}

static int verbs_add_peer(struct coll_async_verbs *verbs, uint32_t peer,
                          const struct coll_async_key *key, const void *blob, size_t length)
{
    struct coll_async_transport *t = coll_async_verbs_transport(verbs);

    return t->ops->add_peer(t, peer, key, blob, length);
}

static void verbs_release(struct coll_async_verbs *verbs, const void *address, size_t length)
{
    struct coll_async_transport *t = coll_async_verbs_transport(verbs);

    t->ops->release(t, address, length);
}

static void verbs_destroy(struct coll_async_verbs *verbs)
{
    struct coll_async_transport *t = coll_async_verbs_transport(verbs);

    t->ops->destroy(t);
}

/* Sleeps on the transport's fd when progress found nothing to do. */
static void step(struct coll_async_verbs *verbs)
{
    struct pollfd pfd = {.fd = verbs_fd(verbs), .events = POLLIN};

    if (0 == verbs_progress(verbs) && !spin) {
        (void) poll(&pfd, 1, 1);
    }
}

static void step_any(void *verbs)
{
    step(verbs);
}

static void barrier(struct coll_async_verbs *verbs)
{
    forked_barrier_wait(&shared->barrier, shared->nranks, NULL != verbs ? step_any : NULL, verbs);
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

/* on_refused: every line printed; rank 0's kept where the test can read them. */
static void note_refusal(void *context, const char *line)
{
    int n;

    (void) context;
    fprintf(stderr, "rank %d: on_refused: %s\n", my_rank, line);
    if (0 != my_rank) {
        return;
    }
    n = __atomic_fetch_add(&shared->refusals, 1, __ATOMIC_ACQ_REL);
    if (n < MAX_LINES) {
        snprintf(shared->lines[n], sizeof(shared->lines[n]), "%s", line);
    }
}

static struct coll_async_verbs *open_transport(int rank, int nranks)
{
    /* An id and a count of ids for the transport; the blob goes to shared->blob[rank]. */
    struct coll_async_verbs_config config = {
        .include = setup.include, .self = (uint32_t) rank, .nprocs = (uint32_t) nranks,
        .key = test_key((uint32_t) rank),
        .eager_limit = EAGER_LIMIT, .chunk_size = CHUNK, .max_ports = setup.max_ports,
        .connect_timeout_ms = setup.connect_timeout_ms ? setup.connect_timeout_ms : 20000,
        .max_unproven = setup.max_unproven,
        .on_refused = note_refusal,
    };
    struct coll_async_verbs *verbs;
    char why[256] = "";
    int rc = coll_async_verbs_create(&verbs, &config, why, sizeof(why)), length;

    if (0 != rc) {
        fprintf(stderr, "rank %d: create: %s: %s\n", rank, strerror(-rc), why);
        CHECK(0 == rc);
    }
    length = verbs_address(verbs, shared->blob[rank], COLL_ASYNC_VERBS_ADDRESS_MAX);
    CHECK(length > 0);
    shared->blob_length[rank] = (size_t) length;
    return verbs;
}

/* Creates the transport, publishes its blob, and adds every other rank. */
static struct coll_async_verbs *open_all(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_transport(rank, nranks);

    barrier(NULL);
    for (int peer = 0; peer < nranks; ++peer) {
        if (peer != rank) {
            CHECK(0 == verbs_add_peer(verbs, (uint32_t) peer,
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
    verbs_destroy(verbs);
}

static void wait_op(struct coll_async_verbs *verbs, const struct coll_async_transfer *op)
{
    while (COLL_ASYNC_TRANSFER_PENDING == op->status) {
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
    struct coll_async_verbs *verbs = open_transport(rank, 3);
    struct coll_async_verbs_port_info ports[COLL_ASYNC_VERBS_MAX_PORTS];
    uint8_t blob[COLL_ASYNC_VERBS_ADDRESS_MAX], elsewhere[COLL_ASYNC_VERBS_ADDRESS_MAX];
    uint64_t bytes[COLL_ASYNC_VERBS_MAX_PORTS];
    struct coll_async_transfer op = {0};
    int length = verbs_address(verbs, blob, sizeof(blob)), nports;

    (void) nranks;
    nports = coll_async_verbs_ports(verbs, ports, COLL_ASYNC_VERBS_MAX_PORTS);
    CHECK(nports >= 1 && nports <= ports_here);
    for (int p = 0; p < nports; ++p) {
        fprintf(stderr, "port %d: %s:%d netdev \"%s\" numa %d\n", p, ports[p].device,
                ports[p].port, ports[p].netdev, ports[p].numa);
    }
    CHECK(length > 0 && length <= COLL_ASYNC_VERBS_ADDRESS_MAX);
    CHECK(-ENOSPC == verbs_address(verbs, blob, (size_t) length - 1));
    /* Not added yet: nowhere to send. */
    CHECK(-EHOSTUNREACH == verbs_send(verbs, 1, 0, "x", 1, &op));
    CHECK(-EINVAL == verbs_add_peer(verbs, 0, test_key_of(0),
                                               blob, (size_t) length)); /* self */
    CHECK(-EINVAL == verbs_add_peer(verbs, 3, test_key_of(3), blob, (size_t) length));
    CHECK(-EINVAL == verbs_add_peer(verbs, 1, test_key_of(1),
                                               blob, (size_t) length - 1));
    memcpy(elsewhere, blob, (size_t) length);
    elsewhere[0] ^= 1;
    CHECK(-EINVAL == verbs_add_peer(verbs, 1, test_key_of(1),
                                               elsewhere, (size_t) length));
    /* A peer whose ports are all on another subnet: TCP's business. */
    memcpy(elsewhere, blob, (size_t) length);
    for (int p = 0; p < nports; ++p) {
        memcpy(elsewhere + 8 + 8 * p, "\xc0\x00\x02\x01", 4); /* 192.0.2.1 */
        elsewhere[8 + 8 * p + 6] = 32;
    }
    CHECK(-ENETUNREACH == verbs_add_peer(verbs, 2, test_key_of(2),
                                                    elsewhere, (size_t) length));
    CHECK(0 == verbs_add_peer(verbs, 1, test_key_of(1), blob, (size_t) length));
    CHECK(-EEXIST == verbs_add_peer(verbs, 1, test_key_of(1), blob, (size_t) length));
    CHECK(-EINVAL == verbs_send(verbs, 0, 0, blob, 1, &op));
    CHECK(nports == coll_async_verbs_port_bytes(verbs, 1, bytes, COLL_ASYNC_VERBS_MAX_PORTS));
    CHECK(0 == bytes[0]);
    verbs_destroy(verbs);
}

static void test_addresses(void **state)
{
    (void) state;
    run_ranks(1, addresses);
}

/* Small transfers (one message each): many in flight from every rank to every
 * other at once, far more than the receivers posted buffers for (credits), their
 * receives posted some before and some after they arrive, with large transfers
 * among them */

#define BULK_BYTES ((1 << 20) + 7)

/* Transfer k's length: 0 bytes now and then, up to 1.5 KB, and some of eager_limit. */
static size_t small_length(uint64_t k)
{
    if (k % 17 == 0) {
        return 0;
    }
    return k % 50 == 1 ? EAGER_LIMIT : (k * 37) % 1500;
}

/* Posts a large send and a large receive with every peer (tag 0). */
static void bulk_with_all(struct coll_async_verbs *verbs, int rank, int nranks, uint8_t *out,
                          uint8_t **in, struct coll_async_transfer *sends,
                          struct coll_async_transfer *recvs)
{
    for (int peer = 0; peer < nranks; ++peer) {
        if (peer != rank) {
            POSTED(verbs_send(verbs, (uint32_t) peer, 0, out, BULK_BYTES, &sends[peer]),
                   &sends[peer]);
            POSTED(verbs_recv(verbs, (uint32_t) peer, 0, in[peer], BULK_BYTES, &recvs[peer]),
                   &recvs[peer]);
        }
    }
}

/* Posts the receives of the small transfers k with k % 2 == odd from every peer. */
static void post_small_receives(struct coll_async_verbs *verbs, int rank, int nranks, int odd,
                                uint8_t *(*in)[SMALL_TRANSFERS],
                                struct coll_async_transfer (*recvs)[SMALL_TRANSFERS])
{
    for (uint64_t k = (uint64_t) odd; k < SMALL_TRANSFERS; k += 2) {
        for (int peer = 0; peer < nranks; ++peer) {
            if (peer != rank) {
                POSTED(verbs_recv(verbs, (uint32_t) peer, k + 1, in[peer][k],
                                  small_length(k) + 1, &recvs[peer][k]),
                       &recvs[peer][k]);
            }
        }
    }
}

static bool small_load_done(int rank, int nranks,
                            struct coll_async_transfer (*sends)[SMALL_TRANSFERS],
                            struct coll_async_transfer (*recvs)[SMALL_TRANSFERS],
                            const struct coll_async_transfer *big_sends,
                            const struct coll_async_transfer *big_recvs)
{
    for (int peer = 0; peer < nranks; ++peer) {
        if (peer == rank) {
            continue;
        }
        for (int k = 0; k < SMALL_TRANSFERS; ++k) {
            if (COLL_ASYNC_TRANSFER_PENDING == sends[peer][k].status
                || COLL_ASYNC_TRANSFER_PENDING == recvs[peer][k].status) {
                return false;
            }
        }
        if (COLL_ASYNC_TRANSFER_PENDING == big_sends[peer].status
            || COLL_ASYNC_TRANSFER_PENDING == big_recvs[peer].status) {
            return false;
        }
    }
    return true;
}

static void small_load(int rank, int nranks)
{
    static struct coll_async_transfer sends[MAX_RANKS][SMALL_TRANSFERS];
    static struct coll_async_transfer recvs[MAX_RANKS][SMALL_TRANSFERS];
    static struct coll_async_transfer big_sends[MAX_RANKS], big_recvs[MAX_RANKS];
    static uint8_t *data[SMALL_TRANSFERS], *in[MAX_RANKS][SMALL_TRANSFERS];
    static uint8_t *big_in[MAX_RANKS], big_out[BULK_BYTES];
    struct coll_async_verbs *verbs = open_all(rank, nranks);

    for (uint64_t k = 0; k < SMALL_TRANSFERS; ++k) {
        data[k] = malloc(small_length(k) + 1);
        CHECK(NULL != data[k]);
        fill(data[k], small_length(k), rank, k);
        for (int peer = 0; peer < nranks; ++peer) {
            CHECK(NULL != (in[peer][k] = malloc(small_length(k) + 1)));
        }
    }
    fill(big_out, BULK_BYTES, rank, 0);
    for (int peer = 0; peer < nranks; ++peer) {
        CHECK(NULL != (big_in[peer] = malloc(BULK_BYTES)));
    }
    post_small_receives(verbs, rank, nranks, 1, in, recvs); /* the odd ones first */
    for (uint64_t k = 0; k < SMALL_TRANSFERS; ++k) {
        if (SMALL_TRANSFERS / 4 == k) {
            bulk_with_all(verbs, rank, nranks, big_out, big_in, big_sends, big_recvs);
        }
        for (int peer = 0; peer < nranks; ++peer) {
            if (peer != rank) {
                POSTED(verbs_send(verbs, (uint32_t) peer, k + 1, data[k], small_length(k),
                                  &sends[peer][k]),
                       &sends[peer][k]);
            }
        }
        if (k % 8 == 0) {
            (void) verbs_progress(verbs);
        }
    }
    post_small_receives(verbs, rank, nranks, 0, in, recvs); /* the even ones: staged by now */
    while (!small_load_done(rank, nranks, sends, recvs, big_sends, big_recvs)) {
        step(verbs);
    }
    for (int peer = 0; peer < nranks; ++peer) {
        for (int k = 0; k < SMALL_TRANSFERS && peer != rank; ++k) {
            CHECK(0 == sends[peer][k].status && 0 == recvs[peer][k].status);
            CHECK(small_length((uint64_t) k) == recvs[peer][k].bytes);
            CHECK(holds(in[peer][k], small_length((uint64_t) k), peer, (uint64_t) k));
        }
        CHECK(peer == rank || (0 == big_sends[peer].status && 0 == big_recvs[peer].status));
        CHECK(peer == rank || holds(big_in[peer], BULK_BYTES, peer, 0));
        free(big_in[peer]);
    }
    close_all(verbs);
    for (int k = 0; k < SMALL_TRANSFERS; ++k) {
        free(data[k]);
        for (int peer = 0; peer < nranks; ++peer) {
            free(in[peer][k]);
        }
    }
}

static void test_small_transfers_2(void **state)
{
    (void) state;
    run_ranks(2, small_load);
}

static void test_small_transfers_3(void **state)
{
    (void) state;
    run_ranks(3, small_load);
}

/* Bulk transfers of every size class, the receive posted before and after */

static const size_t bulk_sizes[] = {0, 1, EAGER_LIMIT, EAGER_LIMIT + 1, CHUNK + 1, BIG};
#define NSIZES (sizeof(bulk_sizes) / sizeof(bulk_sizes[0]))

static void bulk_sizes_body(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_all(rank, nranks);
    uint8_t *data = malloc(BIG + 100);
    uint64_t tag = 0;

    CHECK(NULL != data);
    for (int late = 0; late < 2; ++late) {
        for (size_t s = 0; s < NSIZES; ++s, ++tag) {
            size_t size = bulk_sizes[s];
            struct coll_async_transfer op = {0};

            if (0 == rank) {
                fill(data, size, 0, tag);
                if (!late) {
                    barrier(verbs); /* the receive is posted */
                }
                POSTED(verbs_send(verbs, 1, tag, size ? data : NULL, size, &op),
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
                POSTED(verbs_recv(verbs, 0, tag, data, size + 100, &op), &op);
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
    struct coll_async_verbs *verbs = open_all(rank, nranks);
    size_t sizes[2] = {(1 << 20) + 3, (3 << 20) + 5};
    uint8_t *buffers[2] = {malloc(sizes[0]), malloc(sizes[1])};
    struct coll_async_transfer ops[2] = {{0}};

    CHECK(NULL != buffers[0] && NULL != buffers[1]);
    if (0 == rank) {
        fill(buffers[0], sizes[0], 0, 1);
        fill(buffers[1], sizes[1], 0, 2);
        POSTED(verbs_send(verbs, 1, 1, buffers[0], sizes[0], &ops[0]), &ops[0]);
        POSTED(verbs_send(verbs, 1, 2, buffers[1], sizes[1], &ops[1]), &ops[1]);
        barrier(verbs);
    } else {
        /* One receive before the sends, one after. */
        POSTED(verbs_recv(verbs, 0, 2, buffers[1], sizes[1], &ops[1]), &ops[1]);
        barrier(verbs);
        POSTED(verbs_recv(verbs, 0, 1, buffers[0], sizes[0], &ops[0]), &ops[0]);
        CHECK(-EBUSY == verbs_recv(verbs, 0, 1, buffers[0], 1, &ops[0]));
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

static void both_directions(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_all(rank, nranks);
    size_t size = (4 << 20) + 1;
    uint8_t *out = malloc(size), *in = malloc(size);
    int peer = 1 - rank;

    CHECK(NULL != out && NULL != in);
    for (int round = 0; round < 3; ++round) {
        struct coll_async_transfer send = {0}, recv = {0}, small = {0}, small_in = {0};
        uint8_t note[8] = {0};

        fill(out, size, rank, (uint64_t) round);
        POSTED(verbs_recv(verbs, (uint32_t) peer, (uint64_t) round, in, size,
                                          &recv),
               &recv);
        POSTED(verbs_send(verbs, (uint32_t) peer, (uint64_t) round, out, size,
                                          &send),
               &send);
        POSTED(verbs_send(verbs, (uint32_t) peer, NOTE_TAG(round), out, 8, &small), &small);
        POSTED(verbs_recv(verbs, (uint32_t) peer, NOTE_TAG(round), note, 8, &small_in),
               &small_in);
        wait_op(verbs, &send);
        wait_op(verbs, &recv);
        wait_op(verbs, &small);
        wait_op(verbs, &small_in);
        SUCCEEDED(send);
        SUCCEEDED(recv);
        SUCCEEDED(small);
        SUCCEEDED(small_in);
        CHECK(holds(in, size, peer, (uint64_t) round));
        CHECK(8 == small_in.bytes && holds(note, 8, peer, (uint64_t) round));
    }
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
    struct coll_async_verbs *verbs = open_all(rank, nranks);
    uint64_t bytes[COLL_ASYNC_VERBS_MAX_PORTS];
    struct coll_async_transfer op = {0};
    uint8_t *data = malloc(BIG);
    int nports;

    CHECK(NULL != data);
    if (0 == rank) {
        fill(data, BIG, 0, 5);
        barrier(verbs);
        POSTED(verbs_send(verbs, 1, 5, data, BIG, &op), &op);
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
        POSTED(verbs_recv(verbs, 0, 5, data, BIG, &op), &op);
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

/* The receiver tells the sender its receive is posted with a small transfer (a
 * note), which follows the READY on the same QP: once it is there, so is the
 * READY. */
static void too_small(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_all(rank, nranks);
    static uint8_t data[300000];
    char note_in[8];
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
        struct coll_async_transfer op = {0}, note = {0};

        barrier(verbs);
        if (0 == rank) {
            POSTED(verbs_recv(verbs, 1, NOTE_TAG(c), note_in, sizeof(note_in), &note), &note);
            if (cases[c].recv_first) {
                wait_op(verbs, &note); /* case c's note, and so its READY, is here */
            }
            POSTED(verbs_send(verbs, 1, c, data, cases[c].sent, &op), &op);
            if (!cases[c].recv_first) {
                linger(verbs, 50); /* the send waits for a READY */
            }
            barrier(verbs);
            wait_op(verbs, &note);
            SUCCEEDED(note);
        } else {
            if (!cases[c].recv_first) {
                barrier(verbs);
            }
            POSTED(verbs_recv(verbs, 0, c, data, cases[c].room, &op), &op);
            POSTED(verbs_send(verbs, 0, NOTE_TAG(c), "posted", 6, &note), &note);
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
        struct coll_async_transfer op = {0};

        fill(data, 100, 0, 7);
        POSTED(verbs_send(verbs, 1, 99, data, 100, &op), &op);
        wait_op(verbs, &op);
        SUCCEEDED(op);
        barrier(verbs);
    } else {
        struct coll_async_transfer op = {0};

        barrier(verbs);
        linger(verbs, 50);
        CHECK(-EMSGSIZE == verbs_recv(verbs, 0, 99, data, 10, &op));
        /* The staged transfer waits for a receive it fits. */
        CHECK(0 == verbs_recv(verbs, 0, 99, data, 100, &op));
        wait_op(verbs, &op);
        SUCCEEDED(op);
        CHECK(100 == op.bytes && holds(data, 100, 0, 7));
    }
    /* The peers still work. */
    {
        struct coll_async_transfer op = {0};

        fill(data, sizeof(data), 0, 7);
        if (0 == rank) {
            POSTED(verbs_send(verbs, 1, 100, data, sizeof(data), &op), &op);
        } else {
            memset(data, 0, sizeof(data));
            POSTED(verbs_recv(verbs, 0, 100, data, sizeof(data), &op), &op);
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
 *  2. the receiver posts a big receive into a second buffer and says so with a
 *     note (a small transfer); the sender then sends big;
 *  3. the sender sends big first, the receiver posts into a third buffer after.
 * Were the READY of 1 kept, 3 would write into the first buffer (or into no
 * posted receive at all).
 */
static void crossing(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_all(rank, nranks);
    size_t big = 200000;
    char note_in[8];
    uint8_t *buffers[3] = {malloc(big), malloc(big), malloc(big)};

    CHECK(NULL != buffers[0] && NULL != buffers[1] && NULL != buffers[2]);
    for (int round = 0; round < 10; ++round) {
        uint64_t tag = 1000 + (uint64_t) round;
        struct coll_async_transfer ops[3] = {{0}}, note = {0};

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
            POSTED(verbs_send(verbs, 1, tag, buffers[0], 100, &ops[0]), &ops[0]);
            wait_op(verbs, &ops[0]);
            POSTED(verbs_recv(verbs, 1, NOTE_TAG(round), note_in, sizeof(note_in), &note),
                   &note);
            wait_op(verbs, &note);
            SUCCEEDED(note);
            POSTED(verbs_send(verbs, 1, tag, buffers[1], big, &ops[1]), &ops[1]);
            wait_op(verbs, &ops[1]);
            barrier(verbs);
            POSTED(verbs_send(verbs, 1, tag, buffers[2], big, &ops[2]), &ops[2]);
            barrier(verbs);
        } else {
            for (int b = 0; b < 3; ++b) {
                memset(buffers[b], 0, big);
            }
            POSTED(verbs_recv(verbs, 0, tag, buffers[0], big, &ops[0]), &ops[0]);
            __atomic_store_n(&shared->posted, 1, __ATOMIC_RELEASE);
            wait_op(verbs, &ops[0]);
            SUCCEEDED(ops[0]);
            CHECK(100 == ops[0].bytes && holds(buffers[0], 100, 0, tag));
            POSTED(verbs_recv(verbs, 0, tag, buffers[1], big, &ops[1]), &ops[1]);
            POSTED(verbs_send(verbs, 0, NOTE_TAG(round), "ok", 2, &note), &note);
            wait_op(verbs, &ops[1]);
            barrier(verbs);
            barrier(verbs); /* the third send is posted */
            linger(verbs, 20);
            POSTED(verbs_recv(verbs, 0, tag, buffers[2], big, &ops[2]), &ops[2]);
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
    struct coll_async_verbs *verbs = open_all(rank, nranks);
    uint8_t *data = map_at(NULL);

    for (int round = 0; round < 3; ++round) {
        struct coll_async_transfer op = {0};

        if (round > 0) {
            CHECK(0 == munmap(data, BIG));
            verbs_release(verbs, data, BIG);
            data = map_at(data);
        }
        if (0 == rank) {
            fill(data, BIG, 0, (uint64_t) round);
            barrier(verbs);
            POSTED(verbs_send(verbs, 1, (uint64_t) round, data, BIG, &op), &op);
        } else {
            POSTED(verbs_recv(verbs, 0, (uint64_t) round, data, BIG, &op), &op);
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

/*
 * Heap memory given back to the kernel and taken again between transfers, with
 * nothing calling invalidate: glibc trims the top of its heap with sbrk(-n) and
 * grows it with sbrk(+n), which gives new pages at the same addresses. Open
 * MPI's hooks hear of that only through glibc's brk, and an sbrk override (UCX's
 * UCM, which Open MPI 5 loads) goes around them, so the transport must not keep
 * such registrations. Here the process has no hooks at all, and malloc_trim
 * gives the freed buffer's pages back (sbrk at the top of the heap, madvise
 * below it): a kept registration would pin the old pages, and the data would be
 * wrong on both sides.
 */
#define HEAP_BYTES ((1 << 20) + 4)

static uint8_t *heap_top_buffer(void)
{
    uint8_t *data;

    CHECK(1 == mallopt(M_MMAP_THRESHOLD, 16 << 20)); /* from the heap, not mmap */
    data = malloc(HEAP_BYTES);
    CHECK(NULL != data && (uintptr_t) data < (uintptr_t) sbrk(0));
    return data;
}

static void heap_trimmed(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_all(rank, nranks);
    uint8_t *data = heap_top_buffer(), *again;

    for (int round = 0; round < 3; ++round) {
        struct coll_async_transfer op = {0};

        if (round > 0) {
            free(data);
            CHECK(1 == malloc_trim(0)); /* some memory went back to the kernel */
            again = malloc(HEAP_BYTES);
            CHECK(again == data); /* the same addresses, other pages */
        }
        if (0 == rank) {
            fill(data, HEAP_BYTES, 0, (uint64_t) round);
            barrier(verbs);
            POSTED(verbs_send(verbs, 1, (uint64_t) round, data, HEAP_BYTES, &op),
                   &op);
        } else {
            memset(data, 0xee, HEAP_BYTES);
            POSTED(verbs_recv(verbs, 0, (uint64_t) round, data, HEAP_BYTES, &op),
                   &op);
            barrier(verbs);
        }
        wait_op(verbs, &op);
        SUCCEEDED(op);
        CHECK(0 == rank || holds(data, HEAP_BYTES, 0, (uint64_t) round));
    }
    close_all(verbs);
    free(data);
}

static void test_heap_trimmed(void **state)
{
    (void) state;
    run_ranks(2, heap_trimmed);
}

/* A peer whose listener is gone: the connection is refused, the op fails with
 * a message naming the peer, in bounded time. */
static void refused(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_transport(rank, 2);
    struct coll_async_verbs *gone = open_transport(1, 2);
    struct coll_async_transfer op = {0}, late = {0};
    struct timespec start, end;

    (void) nranks;
    verbs_destroy(gone);
    CHECK(0 == verbs_add_peer(verbs, 1, test_key_of(1),
                                         shared->blob[1], shared->blob_length[1]));
    clock_gettime(CLOCK_MONOTONIC, &start);
    POSTED(verbs_send(verbs, 1, 0, "x", 1, &op), &op);
    wait_op(verbs, &op);
    clock_gettime(CLOCK_MONOTONIC, &end);
    fprintf(stderr, "refused after %ld s: %s\n", (long) (end.tv_sec - start.tv_sec), op.error);
    CHECK(op.status < 0 && NULL != strstr(op.error, "peer 1, link 0"));
    CHECK(end.tv_sec - start.tv_sec < 60);
    /* Later posts fail at once, with the same reason. */
    CHECK(op.status == verbs_recv(verbs, 1, 0, "", 0, &late));
    CHECK(late.error == op.error);
    verbs_destroy(verbs);
}

static void test_connect_refused(void **state)
{
    (void) state;
    run_ranks(1, refused);
}

/* A peer that never answers (its transport never progresses, so its listener
 * never accepts): the connection times out; then destroy cancels what is left. */

static int completions;

static void count_completion(struct coll_async_transfer *op)
{
    (void) op;
    ++completions;
}

static void silent(int rank, int nranks)
{
    struct coll_async_verbs *verbs, *mute;
    struct coll_async_transfer op = {0};
    struct timespec start, end;
    long ms;

    (void) nranks;
    setup.connect_timeout_ms = 500;
    verbs = open_transport(rank, 2);
    mute = open_transport(1, 2);
    CHECK(0 == verbs_add_peer(verbs, 1, test_key_of(1),
                                         shared->blob[1], shared->blob_length[1]));
    clock_gettime(CLOCK_MONOTONIC, &start);
    POSTED(verbs_send(verbs, 1, 0, "x", 1, &op), &op);
    wait_op(verbs, &op);
    clock_gettime(CLOCK_MONOTONIC, &end);
    ms = (end.tv_sec - start.tv_sec) * 1000 + (end.tv_nsec - start.tv_nsec) / 1000000;
    fprintf(stderr, "after %ld ms: %s\n", ms, op.error);
    CHECK(-ETIMEDOUT == op.status && NULL != strstr(op.error, "not established in time"));
    CHECK(ms >= 450 && ms < 5000);
    verbs_destroy(mute);
    verbs_destroy(verbs);
}

static void test_connect_timeout(void **state)
{
    (void) state;
    run_ranks(1, silent);
}

static void cancelled(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_all(rank, nranks);
    static uint8_t data[100000];
    struct coll_async_transfer ops[4] = {{0}};

    if (0 == rank) {
        for (int i = 0; i < 4; ++i) {
            ops[i].complete = count_completion;
        }
        /* A receive nobody sends to, a send waiting for a READY that never comes,
         * and, behind them, two small sends. */
        POSTED(verbs_recv(verbs, 1, 1, data, sizeof(data), &ops[0]), &ops[0]);
        POSTED(verbs_send(verbs, 1, 2, data, sizeof(data), &ops[1]), &ops[1]);
        linger(verbs, 200);
        POSTED(verbs_send(verbs, 1, 3, data, 10, &ops[2]), &ops[2]);
        POSTED(verbs_send(verbs, 1, 4, data, 10, &ops[3]), &ops[3]);
        verbs_destroy(verbs);
        CHECK(-ECANCELED == ops[0].status && -ECANCELED == ops[1].status);
        CHECK(NULL != strstr(ops[0].error, "peer 1") && NULL != strstr(ops[0].error,
                                                                       "transport closed"));
        /* The last two may have gone out before destroy; none is left pending. */
        CHECK(ops[2].status <= 0 && ops[3].status <= 0);
        CHECK(4 == completions);
        barrier(NULL);
    } else {
        barrier(NULL);
        verbs_destroy(verbs);
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
    struct coll_async_transfer send = {0}, recv = {0};
    uint64_t bytes[COLL_ASYNC_VERBS_MAX_PORTS] = {0};

    POSTED(verbs_recv(verbs, 0, 1, in, KILL_BYTES, &recv), &recv);
    POSTED(verbs_send(verbs, 0, 2, out, KILL_BYTES, &send), &send);
    while (bytes[0] < 4 * CHUNK) {
        step(verbs);
        (void) coll_async_verbs_port_bytes(verbs, 0, bytes, COLL_ASYNC_VERBS_MAX_PORTS);
    }
    victim_cue_then_wait();
}

static void survivor(struct coll_async_verbs *verbs, uint8_t *in, uint8_t *out)
{
    struct coll_async_transfer send = {0}, recv = {0}, late = {0};
    struct coll_async_verbs_port_info ports[COLL_ASYNC_VERBS_MAX_PORTS];
    int nports;

    POSTED(verbs_send(verbs, 1, 1, out, KILL_BYTES, &send), &send);
    POSTED(verbs_recv(verbs, 1, 2, in, KILL_BYTES, &recv), &recv);
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
    CHECK(recv.status == verbs_send(verbs, 1, 3, out, 1, &late));
    CHECK(late.error == recv.error);
    verbs_destroy(verbs);
}

static void killed(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_all(rank, nranks);
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

/*
 * Strangers. Rank 0 and rank 1 exchange data in rounds (a SMALL and an RDMA-written
 * transfer each way, checked byte for byte) while rank 2, claiming to be process 2,
 * tries rank 0 case by case and checks what it gets; rank 0 says every refusal in
 * one line (note_refusal). The rounds stop once rank 2 is done.
 */

#define STRANGER_DEADLINE_MS 2000
#define STRANGER_CAP 3
#define STRANGER_REFUSALS 11
#define ROUND_BIG (200 * 1024)

/* One round of the legitimate pair: both directions, both paths. */
static void legit_round(struct coll_async_verbs *verbs, int rank, int round, uint8_t *out,
                        uint8_t *in)
{
    size_t size = round % 2 ? ROUND_BIG : 100;
    struct coll_async_transfer send = {0}, recv = {0};
    uint32_t peer = (uint32_t) (1 - rank);

    fill(out, size, rank, (uint64_t) round);
    memset(in, 0, size);
    POSTED(verbs_recv(verbs, peer, (uint64_t) round, in, size, &recv), &recv);
    POSTED(verbs_send(verbs, peer, (uint64_t) round, out, size, &send), &send);
    wait_op(verbs, &send);
    wait_op(verbs, &recv);
    SUCCEEDED(send);
    SUCCEEDED(recv);
    CHECK(recv.bytes == size && holds(in, size, (int) peer, (uint64_t) round));
}

/* Ranks 0 and 1: rounds until rank 2 is done, the number agreed through stop_round
 * (set by rank 0 before a round neither has passed). */
static void legit_pair(int rank)
{
    struct coll_async_verbs *verbs = open_transport(rank, 3);
    uint8_t *out = malloc(ROUND_BIG), *in = malloc(ROUND_BIG);
    int round;

    CHECK(NULL != out && NULL != in);
    barrier(NULL); /* both blobs are out */
    CHECK(0 == verbs_add_peer(verbs, (uint32_t) (1 - rank),
                                         test_key_of((uint32_t) (1 - rank)),
                                         shared->blob[1 - rank], shared->blob_length[1 - rank]));
    for (round = 0;; ++round) {
        int stop = __atomic_load_n(&shared->stop_round, __ATOMIC_ACQUIRE);

        if (0 == rank && 0 == stop && __atomic_load_n(&shared->stranger_done, __ATOMIC_ACQUIRE)) {
            stop = round + 1;
            __atomic_store_n(&shared->stop_round, stop, __ATOMIC_RELEASE);
        }
        if (0 != stop && round >= stop) {
            break;
        }
        legit_round(verbs, rank, round, out, in);
        __atomic_store_n(&shared->rounds, round + 1, __ATOMIC_RELEASE);
    }
    fprintf(stderr, "rank %d: %d rounds exact\n", rank, round);
    __atomic_add_fetch(&shared->pair_done, 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&shared->pair_done, __ATOMIC_ACQUIRE) < 2) {
        step(verbs); /* the other may still wait for our last bytes */
    }
    verbs_destroy(verbs);
    free(out);
    free(in);
}

/* Raw rdma_cm against rank 0's first port, outside any transport. */
struct stranger {
    struct rdma_event_channel *channel;
    struct rdma_cm_id *id;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_mr *mr;
    struct coll_async_verbs_accept accept; /* what the acceptor answered */
    uint8_t message[64];
};

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* The next rdma_cm event's type (its private data into data), or -1 after timeout_ms. */
static int next_event(struct stranger *s, int timeout_ms, uint8_t *data, size_t *length)
{
    struct pollfd pfd = {.fd = s->channel->fd, .events = POLLIN};
    struct rdma_cm_event *event;
    int type;

    if (1 != poll(&pfd, 1, timeout_ms) || 0 != rdma_get_cm_event(s->channel, &event)) {
        return -1;
    }
    type = (int) event->event;
    if (NULL != data) {
        *length = NULL != event->param.conn.private_data ? event->param.conn.private_data_len
                                                         : 0;
        memcpy(data, event->param.conn.private_data, *length);
    }
    rdma_ack_cm_event(event);
    return type;
}

/* Connects to `to` with private data; the answer's event type (ESTABLISHED: the
 * accept read). */
static int stranger_connect_to(struct stranger *s, struct sockaddr_in to, const void *data,
                               size_t length)
{
    struct ibv_qp_init_attr attr = {
        .qp_type = IBV_QPT_RC,
        .cap = {.max_send_wr = 4, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
    };
    struct rdma_conn_param param = {.private_data = data, .private_data_len = (uint8_t) length,
                                    .retry_count = 3, .rnr_retry_count = 3};
    uint8_t answer[256];
    size_t answer_length = 0;
    int type;

    memset(s, 0, sizeof(*s));
    CHECK(NULL != (s->channel = rdma_create_event_channel()));
    CHECK(0 == rdma_create_id(s->channel, &s->id, NULL, RDMA_PS_TCP));
    CHECK(0 == rdma_resolve_addr(s->id, NULL, (struct sockaddr *) &to, 5000));
    CHECK(RDMA_CM_EVENT_ADDR_RESOLVED == next_event(s, 10000, NULL, NULL));
    CHECK(0 == rdma_resolve_route(s->id, 5000));
    CHECK(RDMA_CM_EVENT_ROUTE_RESOLVED == next_event(s, 10000, NULL, NULL));
    CHECK(NULL != (s->pd = ibv_alloc_pd(s->id->verbs)));
    CHECK(NULL != (s->cq = ibv_create_cq(s->id->verbs, 8, NULL, NULL, 0)));
    attr.send_cq = attr.recv_cq = s->cq;
    CHECK(0 == rdma_create_qp(s->id, s->pd, &attr));
    s->mr = ibv_reg_mr(s->pd, s->message, sizeof(s->message), IBV_ACCESS_LOCAL_WRITE);
    CHECK(NULL != s->mr);
    CHECK(0 == rdma_connect(s->id, &param));
    type = next_event(s, 20000, answer, &answer_length);
    if (RDMA_CM_EVENT_ESTABLISHED == type) {
        CHECK(0 == coll_async_verbs_accept_decode(answer, answer_length, &s->accept));
    }
    return type;
}

/* To rank 0's first port, as its blob says. */
static int stranger_connect(struct stranger *s, const void *data, size_t length)
{
    struct sockaddr_in to = {.sin_family = AF_INET};

    memcpy(&to.sin_addr, shared->blob[0] + 8, 4);
    to.sin_port = htons((uint16_t) (shared->blob[0][12] << 8 | shared->blob[0][13]));
    return stranger_connect_to(s, to, data, length);
}

/* A request as process 2 would send it to rank 0, with a fresh nonce. */
static struct coll_async_verbs_request stranger_request(uint8_t link, uint8_t *data)
{
    struct coll_async_verbs_request request = {.from = 2, .to = 0, .link = link,
                                               .eager_limit = EAGER_LIMIT};

    CHECK(0 == coll_async_random(request.nonce, sizeof(request.nonce)));
    coll_async_verbs_request_encode(&request, data);
    return request;
}

/* Posts a SEND of the message's first bytes, or a zero-length RDMA write (to no
 * buffer: the responder checks no key for it, only whether the QP takes writes);
 * the completion's status. */
static enum ibv_wc_status stranger_post(struct stranger *s, enum ibv_wr_opcode opcode,
                                        size_t bytes)
{
    struct ibv_sge sge = {.addr = (uintptr_t) s->message, .length = (uint32_t) bytes,
                          .lkey = s->mr->lkey};
    struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = bytes > 0 ? 1 : 0, .opcode = opcode,
                             .send_flags = IBV_SEND_SIGNALED}, *bad;
    double start = now_s();
    struct ibv_wc wc;

    CHECK(0 == ibv_post_send(s->id->qp, &wr, &bad));
    while (0 == ibv_poll_cq(s->cq, 1, &wc)) {
        CHECK(now_s() - start < 60);
        usleep(1000);
    }
    return wc.status;
}

/* Whether rank 0 has closed the connection (call once it has said so): a
 * disconnect, or a SEND its QP no longer answers (when the proof came before the
 * RTU, rdma_cm there was not established yet and rejected instead, which an
 * established connector does not hear). */
static bool stranger_closed(struct stranger *s)
{
    if (RDMA_CM_EVENT_DISCONNECTED == next_event(s, 2000, NULL, NULL)) {
        return true;
    }
    return IBV_WC_SUCCESS != stranger_post(s, IBV_WR_SEND, 0);
}

/* The proof message: the transport's 24-byte header (type 7, PROOF; length 8), the tag. */
static void stranger_proof(struct stranger *s, uint64_t tag)
{
    uint64_t be = htobe64(tag), length = htobe64(8);

    memset(s->message, 0, 24);
    s->message[0] = 7;
    memcpy(s->message + 16, &length, 8);
    memcpy(s->message + 24, &be, 8);
}

static void stranger_free(struct stranger *s)
{
    if (NULL != s->id && NULL != s->id->qp) {
        rdma_destroy_qp(s->id);
    }
    if (NULL != s->mr) {
        ibv_dereg_mr(s->mr);
    }
    if (NULL != s->cq) {
        ibv_destroy_cq(s->cq);
    }
    if (NULL != s->pd) {
        ibv_dealloc_pd(s->pd);
    }
    if (NULL != s->id) {
        rdma_destroy_id(s->id);
    }
    rdma_destroy_event_channel(s->channel);
}

/* Waits until rank 0 has said n refusals. */
static void await_refusals(int n)
{
    double start = now_s();

    while (__atomic_load_n(&shared->refusals, __ATOMIC_ACQUIRE) < n) {
        CHECK(now_s() - start < 60);
        usleep(2000);
    }
}

/* A transport of rank 2's that holds the wrong key for rank 0: rank 0's accept does
 * not check out under it, so it sends nothing and fails; rank 0 refuses the
 * connection that never proved itself. */
static void wrong_key_connector(void)
{
    struct coll_async_verbs *verbs = open_transport(2, 3);
    struct coll_async_key wrong = test_key(0);
    struct coll_async_transfer op = {0};

    wrong.bytes[15] ^= 0x20;
    CHECK(0 == verbs_add_peer(verbs, 0, &wrong, shared->blob[0],
                                         shared->blob_length[0]));
    POSTED(verbs_send(verbs, 0, 0, "x", 1, &op), &op);
    wait_op(verbs, &op);
    fprintf(stderr, "stranger: wrong key: %s\n", op.error);
    CHECK(-EACCES == op.status);
    CHECK(NULL != strstr(op.error, "did not prove it holds the peer's key"));
    verbs_destroy(verbs);
}

/* A recorded handshake replayed: connection A's request and the proof a connector
 * holding the key sends on it, replayed on B, whose acceptor's nonce differs. */
static void replayed(void)
{
    struct coll_async_key key = test_key(0);
    uint8_t data[COLL_ASYNC_VERBS_REQUEST_BYTES];
    struct coll_async_verbs_request request = stranger_request(1, data);
    struct stranger a, b;
    uint64_t proof;

    CHECK(RDMA_CM_EVENT_ESTABLISHED == stranger_connect(&a, data, sizeof(data)));
    proof = coll_async_verbs_proof_tag(&key, &request, a.accept.nonce);
    CHECK(0 == rdma_disconnect(a.id)); /* recorded: A goes no further */
    stranger_free(&a);
    await_refusals(4);
    CHECK(RDMA_CM_EVENT_ESTABLISHED == stranger_connect(&b, data, sizeof(data)));
    CHECK(0 != memcmp(a.accept.nonce, b.accept.nonce, sizeof(a.accept.nonce)));
    stranger_proof(&b, proof);
    CHECK(IBV_WC_SUCCESS == stranger_post(&b, IBV_WR_SEND, 32));
    await_refusals(5);
    CHECK(stranger_closed(&b));
    stranger_free(&b);
}

/* Connections that never prove themselves: STRANGER_CAP are held, the next is
 * rejected, and the held ones are closed at the deadline. */
static void never_proven(void)
{
    struct stranger idle[STRANGER_CAP], over;
    uint8_t data[COLL_ASYNC_VERBS_REQUEST_BYTES];
    double start;

    for (int i = 0; i < STRANGER_CAP; ++i) {
        (void) stranger_request(0, data);
        CHECK(RDMA_CM_EVENT_ESTABLISHED == stranger_connect(&idle[i], data, sizeof(data)));
    }
    start = now_s();
    (void) stranger_request(0, data);
    CHECK(RDMA_CM_EVENT_REJECTED == stranger_connect(&over, data, sizeof(data)));
    stranger_free(&over);
    await_refusals(STRANGER_REFUSALS);
    fprintf(stderr, "stranger: idle connections refused after %.1f s\n", now_s() - start);
    CHECK(now_s() - start < 20);
    for (int i = 0; i < STRANGER_CAP; ++i) {
        CHECK(stranger_closed(&idle[i]));
        stranger_free(&idle[i]);
    }
}

static void stranger(void)
{
    struct coll_async_key key = test_key(0), wrong = test_key(2);
    uint8_t data[COLL_ASYNC_VERBS_REQUEST_BYTES];
    struct coll_async_verbs_request request;
    enum ibv_wc_status status;
    struct stranger s;

    while (__atomic_load_n(&shared->rounds, __ATOMIC_ACQUIRE) < 3) { /* the pair is up */
        usleep(2000);
    }
    wrong_key_connector();
    await_refusals(1);

    CHECK(RDMA_CM_EVENT_REJECTED == stranger_connect(&s, "garbage!", 8));
    stranger_free(&s);
    await_refusals(2);

    /* A proof under the wrong key; the acceptor's own checked out under rank 0's. */
    request = stranger_request(0, data);
    CHECK(RDMA_CM_EVENT_ESTABLISHED == stranger_connect(&s, data, sizeof(data)));
    CHECK(coll_async_tags_equal(s.accept.tag, coll_async_verbs_accept_tag(&key, &request,
                                                                                 s.accept.nonce)));
    stranger_proof(&s, coll_async_verbs_proof_tag(&wrong, &request, s.accept.nonce));
    CHECK(IBV_WC_SUCCESS == stranger_post(&s, IBV_WR_SEND, 32));
    await_refusals(3);
    CHECK(stranger_closed(&s));
    stranger_free(&s);

    replayed();

    /* A truncated proof: the right one, its last 4 bytes missing. */
    request = stranger_request(0, data);
    CHECK(RDMA_CM_EVENT_ESTABLISHED == stranger_connect(&s, data, sizeof(data)));
    stranger_proof(&s, coll_async_verbs_proof_tag(&key, &request, s.accept.nonce));
    CHECK(IBV_WC_SUCCESS == stranger_post(&s, IBV_WR_SEND, 28));
    await_refusals(6);
    CHECK(stranger_closed(&s));
    stranger_free(&s);

    /* An RDMA write before the proof: the QP takes none. */
    (void) stranger_request(0, data);
    CHECK(RDMA_CM_EVENT_ESTABLISHED == stranger_connect(&s, data, sizeof(data)));
    status = stranger_post(&s, IBV_WR_RDMA_WRITE, 0);
    fprintf(stderr, "stranger: not proven, an RDMA write: %s\n", ibv_wc_status_str(status));
    CHECK(IBV_WC_SUCCESS != status);
    stranger_free(&s);
    await_refusals(7);

    never_proven();

    /* Proven (it holds rank 0's key, as a process of the job would): now it may write.
     * No refusal; its disconnect fails peer 2 at rank 0, which the pair does not use. */
    request = stranger_request(3, data);
    CHECK(RDMA_CM_EVENT_ESTABLISHED == stranger_connect(&s, data, sizeof(data)));
    stranger_proof(&s, coll_async_verbs_proof_tag(&key, &request, s.accept.nonce));
    CHECK(IBV_WC_SUCCESS == stranger_post(&s, IBV_WR_SEND, 32));
    usleep(1000000); /* a connector waits for the grant; this one has no QP to get it on */
    status = stranger_post(&s, IBV_WR_RDMA_WRITE, 0);
    fprintf(stderr, "stranger: proven, an RDMA write: %s\n", ibv_wc_status_str(status));
    CHECK(IBV_WC_SUCCESS == status);
    (void) rdma_disconnect(s.id);
    stranger_free(&s);
    CHECK(STRANGER_REFUSALS == __atomic_load_n(&shared->refusals, __ATOMIC_ACQUIRE));
}

static void strangers(int rank, int nranks)
{
    static const char *const expected[STRANGER_REFUSALS] = {
        "prove",                    /* the wrong-key connector gave up */
        "not a coll/async connection request",
        "a wrong proof",
        "before it proved itself",  /* A, recorded */
        "a wrong proof",            /* B, its replay */
        "its first message is no proof",
        "before it proved itself",  /* the RDMA write broke its QP */
        "too many connections have not proved themselves yet",
        "did not prove itself within 2000 ms",
        "did not prove itself within 2000 ms",
        "did not prove itself within 2000 ms",
    };

    (void) nranks;
    if (2 == rank) {
        pid_t pid;
        int status;

        barrier(NULL); /* the blobs are out */
        /* In a child, so that the pair stops however the stranger ends. */
        pid = fork();
        CHECK(pid >= 0);
        if (0 == pid) {
            stranger();
            _exit(0);
        }
        CHECK(pid == waitpid(pid, &status, 0));
        __atomic_store_n(&shared->stranger_done, 1, __ATOMIC_RELEASE);
        CHECK(WIFEXITED(status) && 0 == WEXITSTATUS(status));
        return;
    }
    legit_pair(rank);
    if (0 == rank) {
        CHECK(STRANGER_REFUSALS == shared->refusals);
        for (int i = 0; i < STRANGER_REFUSALS; ++i) {
            CHECK(NULL != strstr(shared->lines[i], "verbs: refused a connection on rxe0:1"));
            CHECK(1 == i || NULL != strstr(shared->lines[i], "as process 2")); /* 1: garbage */
            if (NULL == strstr(shared->lines[i], expected[i])) {
                fprintf(stderr, "line %d does not say \"%s\"\n", i, expected[i]);
                CHECK(NULL != strstr(shared->lines[i], expected[i]));
            }
        }
    }
}

static void test_strangers(void **state)
{
    (void) state;
    setup.connect_timeout_ms = STRANGER_DEADLINE_MS;
    setup.max_unproven = STRANGER_CAP;
    run_ranks(3, strangers);
}

/* --stranger ADDRESS PORT TO FROM: the stranger alone, at a live job. Each attempt
 * must end in a reject or a closed connection, within the job's deadline. */
static int stranger_at_job(const char *address, const char *port, uint32_t to, uint32_t from)
{
    struct sockaddr_in target = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t) atoi(port))};
    /* On a link the job does not use: one it uses is refused at once (connected already). */
    struct coll_async_verbs_request request = {.from = from, .to = to, .link = 7,
                                               .eager_limit = 8192}; /* the component's */
    uint8_t data[COLL_ASYNC_VERBS_REQUEST_BYTES];
    struct coll_async_key guess;
    struct stranger s;
    double start;

    CHECK(1 == inet_pton(AF_INET, address, &target.sin_addr));
    CHECK(RDMA_CM_EVENT_REJECTED == stranger_connect_to(&s, target, "garbage!", 8));
    stranger_free(&s);
    printf("stranger: garbage rejected\n");

    CHECK(0 == coll_async_random(&guess, sizeof(guess)));
    CHECK(0 == coll_async_random(request.nonce, sizeof(request.nonce)));
    coll_async_verbs_request_encode(&request, data);
    CHECK(RDMA_CM_EVENT_ESTABLISHED == stranger_connect_to(&s, target, data, sizeof(data)));
    stranger_proof(&s, coll_async_verbs_proof_tag(&guess, &request, s.accept.nonce));
    CHECK(IBV_WC_SUCCESS == stranger_post(&s, IBV_WR_SEND, 32));
    usleep(3000000); /* the rank sees it at its next progress */
    CHECK(stranger_closed(&s));
    stranger_free(&s);
    printf("stranger: a proof under a guessed key closed\n");

    CHECK(0 == coll_async_random(request.nonce, sizeof(request.nonce)));
    coll_async_verbs_request_encode(&request, data);
    CHECK(RDMA_CM_EVENT_ESTABLISHED == stranger_connect_to(&s, target, data, sizeof(data)));
    start = now_s();
    /* The deadline is kept when the rank next drives the network, which a rank busy
     * inside its node may not do for a while. */
    while (RDMA_CM_EVENT_DISCONNECTED != next_event(&s, 1000, NULL, NULL)
           && now_s() - start < 60) {
    }
    CHECK(stranger_closed(&s));
    printf("stranger: a connection that never proved itself closed after %.1f s\n",
           now_s() - start);
    stranger_free(&s);
    return 0;
}

/* --bench: small-transfer round trips and 8 MiB bandwidth (a report, not a test) */

static double seconds_since(const struct timespec *start)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double) (now.tv_sec - start->tv_sec) + (double) (now.tv_nsec - start->tv_nsec) * 1e-9;
}

static void bench(int rank, int nranks)
{
    struct coll_async_verbs *verbs = open_all(rank, nranks);
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
            struct coll_async_transfer op = {0}, back = {0};
            uint64_t tag = NOTE_TAG(2 * ((round_trips + 10) * mode + i + 10));
            uint8_t in[8];

            if (0 == i) {
                clock_gettime(CLOCK_MONOTONIC, &start);
            }
            if (0 == rank) {
                POSTED(verbs_recv(verbs, (uint32_t) peer, tag + 1, in, 8, &back), &back);
                POSTED(verbs_send(verbs, (uint32_t) peer, tag, data, 8, &op), &op);
            } else {
                POSTED(verbs_recv(verbs, (uint32_t) peer, tag, in, 8, &back), &back);
            }
            wait_op(verbs, &back);
            if (1 == rank) {
                POSTED(verbs_send(verbs, (uint32_t) peer, tag + 1, data, 8, &op), &op);
            }
            wait_op(verbs, &op);
        }
        if (0 == rank) {
            printf("bench: small-transfer round trip (8 bytes), %s: %.1f us (%d round trips)\n",
                   spin ? "spinning on progress" : "sleeping on the fd",
                   seconds_since(&start) * 1e6 / round_trips, round_trips);
            fflush(stdout); /* the rank ends in _exit */
        }
    }
    spin = false;
    for (int i = -1; i < transfers; ++i) { /* 1 to warm up (registration) */
        struct coll_async_transfer op = {0};

        barrier(verbs);
        if (0 == i) {
            clock_gettime(CLOCK_MONOTONIC, &start);
        }
        if (0 == rank) {
            POSTED(verbs_send(verbs, 1, (uint64_t) i + 1, data, BIG, &op), &op);
        } else {
            POSTED(verbs_recv(verbs, 0, (uint64_t) i + 1, data, BIG, &op), &op);
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
        cmocka_unit_test_setup(test_small_transfers_2, setup_defaults),
        cmocka_unit_test_setup(test_small_transfers_3, setup_defaults),
        cmocka_unit_test_setup(test_bulk_sizes, setup_defaults),
        cmocka_unit_test_setup(test_two_in_flight, setup_defaults),
        cmocka_unit_test_setup(test_both_directions, setup_defaults),
        cmocka_unit_test_setup(test_striped_2_ports, setup_defaults),
        cmocka_unit_test_setup(test_too_small, setup_defaults),
        cmocka_unit_test_setup(test_ready_crossing_small, setup_defaults),
        cmocka_unit_test_setup(test_reallocated_buffers, setup_defaults),
        cmocka_unit_test_setup(test_heap_trimmed, setup_defaults),
        cmocka_unit_test_setup(test_connect_refused, setup_defaults),
        cmocka_unit_test_setup(test_connect_timeout, setup_defaults),
        cmocka_unit_test_setup(test_destroy_cancels, setup_defaults),
        cmocka_unit_test_setup(test_peer_killed, setup_defaults),
        cmocka_unit_test_setup(test_strangers, setup_defaults),
    };
    const struct CMUnitTest benches[] = {
        cmocka_unit_test_setup(test_bench, setup_defaults),
    };
    struct coll_async_verbs_port_info ports[COLL_ASYNC_VERBS_MAX_PORTS];
    char why[256] = "";

    if (6 == argc && 0 == strcmp(argv[1], "--stranger")) {
        return stranger_at_job(argv[2], argv[3], (uint32_t) atoi(argv[4]),
                               (uint32_t) atoi(argv[5]));
    }
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
