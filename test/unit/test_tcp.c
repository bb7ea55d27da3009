/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of transport/coll_async_tcp.c and coll_async_tcp_if.c over loopback,
 * with forked processes as the peers, calling the transport through its table
 * of functions as the mapper does: address blobs, interface filters, many small
 * transfers under load, striping over two "interfaces" (127.0.0.1 and 127.0.0.2,
 * both on lo), simultaneous connects, lazy connects, a peer killed mid-transfer,
 * refused and timed-out connections; strangers (a wrong MAC, silence, more
 * than the cap), a proven peer breaking the frame bounds, bounded staging, and
 * transfers announced before their data (the rendezvous) and its bounds.
 *
 * The children (forked_ranks.h) exchange address blobs and meet at barriers through a shared
 * anonymous mapping, standing in for the modex.
 */

#define _GNU_SOURCE

#include <arpa/inet.h>
#include <endian.h>
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
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_keys.h"

#include "../../ompi/mca/coll/async/transport/coll_async_tcp.h"
#include "../../ompi/mca/coll/async/transport/coll_async_tcp_handshake.h"
#include "../tcp_frames.h"
#include "forked_ranks.h"
#include "tcp_plain_socket.h"

#define MAX_RANKS 4
#define CHUNK (64 * 1024)
#define SMALL_TRANSFERS 2000
#define BULK_BYTES ((1 << 20) + 7)
#define STRIPED_BYTES ((4 << 20) + 13) /* odd: no help from alignment */
#define KILL_BYTES (64 << 20)          /* more than loopback socket buffers hold */

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

/* The pretend modex and barrier, shared by the children of one test. */
struct shared {
    int nranks;
    struct forked_barrier barrier;
    size_t blob_length[MAX_RANKS];
    uint8_t blob[MAX_RANKS][COLL_ASYNC_TCP_ADDRESS_MAX];
};

static struct shared *shared;

/* The forked ranks' rendezvous_bytes (0: every transfer is sent at once). */
static size_t rendezvous_bytes;

typedef void (*rank_fn)(int rank, int nranks);

static const struct coll_async_tcp_if loopback_ifs[2] = {
    {"lo", {0}, 8, true},
    {"lo2", {0}, 8, true},
};

static struct coll_async_tcp_if test_if(int i)
{
    struct coll_async_tcp_if one = loopback_ifs[i];

    inet_pton(AF_INET, 0 == i ? "127.0.0.1" : "127.0.0.2", &one.addr);
    return one;
}

/* The transport's functions, through its table as the mapper calls them. */

static int tcp_send(struct coll_async_tcp *tcp, uint32_t peer, uint64_t tag, const void *data,
                    size_t length, struct coll_async_transfer *op)
{
    struct coll_async_transport *t = coll_async_tcp_transport(tcp);

    return t->ops->send(t, peer, tag, data, length, op);
}

static int tcp_recv(struct coll_async_tcp *tcp, uint32_t peer, uint64_t tag, void *buffer,
                    size_t length, struct coll_async_transfer *op)
{
    struct coll_async_transport *t = coll_async_tcp_transport(tcp);

    return t->ops->recv(t, peer, tag, buffer, length, op);
}

static int tcp_progress(struct coll_async_tcp *tcp)
{
    struct coll_async_transport *t = coll_async_tcp_transport(tcp);

    return t->ops->progress(t);
}

static int tcp_address(const struct coll_async_tcp *tcp, void *blob, size_t size)
{
    const struct coll_async_transport *t = coll_async_tcp_transport((struct coll_async_tcp *) tcp);

    return t->ops->address(t, blob, size);
}

static int tcp_add_peer(struct coll_async_tcp *tcp, uint32_t peer,
                        const struct coll_async_key *key, const void *blob, size_t length)
{
    struct coll_async_transport *t = coll_async_tcp_transport(tcp);

    return t->ops->add_peer(t, peer, key, blob, length);
}

static void tcp_destroy(struct coll_async_tcp *tcp)
{
    struct coll_async_transport *t = coll_async_tcp_transport(tcp);

    t->ops->destroy(t);
}

static void step_any(void *tcp)
{
    step(tcp);
}

static void barrier(struct coll_async_tcp *tcp)
{
    forked_barrier_wait(&shared->barrier, shared->nranks, NULL != tcp ? step_any : NULL, tcp);
}

static struct coll_async_tcp *open_transport(int rank, int nranks, int nifs)
{
    struct coll_async_tcp_if ifs[2] = {test_if(0), test_if(1)};
    struct coll_async_tcp_config config = {
        .ifs = ifs, .nifs = nifs, .self = (uint32_t) rank, .nprocs = (uint32_t) nranks,
        .key = test_key((uint32_t) rank), .chunk_size = CHUNK, .connect_timeout_ms = 5000,
        .rendezvous_bytes = rendezvous_bytes,
    };
    struct coll_async_tcp *tcp;
    int length;

    CHECK(0 == coll_async_tcp_create(&tcp, &config));
    length = tcp_address(tcp, shared->blob[rank], COLL_ASYNC_TCP_ADDRESS_MAX);
    CHECK(length > 0);
    shared->blob_length[rank] = (size_t) length;
    return tcp;
}

/* Creates the transport, publishes its blob, and adds every other rank. */
static struct coll_async_tcp *open_all(int rank, int nranks, int nifs)
{
    struct coll_async_tcp *tcp = open_transport(rank, nranks, nifs);

    barrier(NULL);
    for (int peer = 0; peer < nranks; ++peer) {
        if (peer != rank) {
            CHECK(0 == tcp_add_peer(tcp, (uint32_t) peer, test_key_of((uint32_t) peer),
                                               shared->blob[peer],
                                               shared->blob_length[peer]));
        }
    }
    barrier(NULL);
    return tcp;
}

static void wait_op(struct coll_async_tcp *tcp, const struct coll_async_transfer *op)
{
    while (COLL_ASYNC_TRANSFER_PENDING == op->status) {
        step(tcp);
    }
}

/* Progresses until count sockets are open: the far side of a handshake may
 * still sit in a listen backlog when an operation completes. */
static void settle(struct coll_async_tcp *tcp, int count)
{
    while (count != coll_async_tcp_connections(tcp)) {
        step(tcp);
    }
}

/* Message contents: byte i of sender s's message k. */
static uint8_t pattern(int sender, uint64_t k, size_t i)
{
    return (uint8_t) (sender * 131 + k * 7 + i * 13);
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

/* Parent: fork the ranks, collect their verdicts */

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

/* Address blobs */

static void test_address_roundtrip(void **state)
{
    struct coll_async_tcp_addr in[3], out[COLL_ASYNC_TCP_MAX_IFS];
    uint8_t blob[COLL_ASYNC_TCP_ADDRESS_MAX];
    int length;

    (void) state;
    for (int i = 0; i < 3; ++i) {
        in[i].addr.s_addr = htonl(0x0a000001u + (uint32_t) i * 0x10000u);
        in[i].port = (uint16_t) (40000 + i * 257);
        in[i].prefix = (uint8_t) (16 + i);
    }
    length = coll_async_tcp_address_encode(in, 3, blob, sizeof(blob));
    assert_int_equal(length, 4 + 3 * 8);
    assert_int_equal(coll_async_tcp_address_decode(blob, (size_t) length, out, 8), 3);
    for (int i = 0; i < 3; ++i) {
        assert_int_equal(out[i].addr.s_addr, in[i].addr.s_addr);
        assert_int_equal(out[i].port, in[i].port);
        assert_int_equal(out[i].prefix, in[i].prefix);
    }
    /* Byte order is fixed: the first address and port read the same everywhere. */
    assert_memory_equal(blob + 4, "\x0a\x00\x00\x01\x9c\x40\x10\x00", 8);

    assert_int_equal(coll_async_tcp_address_encode(in, 3, blob, 20), -ENOSPC);
    assert_int_equal(coll_async_tcp_address_decode(blob, (size_t) length - 1, out, 8), -EINVAL);
    assert_int_equal(coll_async_tcp_address_decode(blob, (size_t) length, out, 2), -EINVAL);
    blob[2] = 2; /* a version this code does not know */
    assert_int_equal(coll_async_tcp_address_decode(blob, (size_t) length, out, 8), -EINVAL);
    blob[2] = 1;
    blob[0] ^= 1;
    assert_int_equal(coll_async_tcp_address_decode(blob, (size_t) length, out, 8), -EINVAL);
}

static void test_transport_address(void **state)
{
    struct coll_async_tcp_if ifs[2] = {test_if(0), test_if(1)};
    struct coll_async_tcp_config config = {.ifs = ifs, .nifs = 2, .self = 0, .nprocs = 2};
    struct coll_async_tcp_addr out[COLL_ASYNC_TCP_MAX_IFS];
    uint8_t blob[COLL_ASYNC_TCP_ADDRESS_MAX];
    struct coll_async_tcp *tcp;
    int length;

    (void) state;
    assert_int_equal(coll_async_tcp_create(&tcp, &config), 0);
    length = tcp_address(tcp, blob, sizeof(blob));
    assert_int_equal(coll_async_tcp_address_decode(blob, (size_t) length, out, 8), 2);
    assert_int_equal(out[0].addr.s_addr, ifs[0].addr.s_addr);
    assert_int_equal(out[1].addr.s_addr, ifs[1].addr.s_addr);
    assert_true(0 != out[0].port && 0 != out[1].port);
    assert_int_equal(out[1].prefix, 8);
    assert_int_equal(tcp_add_peer(tcp, 0, test_key_of(0),
                                             blob, (size_t) length), -EINVAL); /* self */
    assert_int_equal(tcp_add_peer(tcp, 2, test_key_of(2),
                                             blob, (size_t) length), -EINVAL);
    assert_int_equal(tcp_add_peer(tcp, 1, test_key_of(1),
                                             blob, (size_t) length - 1), -EINVAL);
    assert_int_equal(tcp_add_peer(tcp, 1, test_key_of(1), blob, (size_t) length), 0);
    assert_int_equal(tcp_add_peer(tcp, 1, test_key_of(1),
                                             blob, (size_t) length), -EEXIST);
    assert_int_equal(coll_async_tcp_connections(tcp), 0);
    tcp_destroy(tcp);
}

/* Interface selection */

static struct coll_async_tcp_if make_if(const char *name, const char *addr, int prefix,
                                        bool loopback)
{
    struct coll_async_tcp_if one;

    memset(&one, 0, sizeof(one));
    snprintf(one.name, sizeof(one.name), "%s", name);
    inet_pton(AF_INET, addr, &one.addr);
    one.prefix = (uint8_t) prefix;
    one.loopback = loopback;
    return one;
}

/* Applies include/exclude to a made-up machine; returns the names kept, "a,b". */
static const char *select_ifs(const char *include, const char *exclude, char *out, size_t size)
{
    struct coll_async_tcp_if ifs[4] = {
        make_if("lo", "127.0.0.1", 8, true),
        make_if("eth0", "10.1.2.3", 16, false),
        make_if("eth1", "192.168.1.5", 24, false),
        make_if("ib0", "10.2.0.1", 16, false),
    };
    struct coll_async_tcp_if_filter filter;
    char why[256];
    int count;

    assert_int_equal(coll_async_tcp_if_parse(include, exclude, &filter, why, sizeof(why)), 0);
    count = coll_async_tcp_if_apply(&filter, ifs, 4);
    out[0] = '\0';
    for (int i = 0; i < count; ++i) {
        snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? "," : "", ifs[i].name);
    }
    return out;
}

static void assert_parse_fails(const char *include, const char *exclude, const char *reason)
{
    struct coll_async_tcp_if_filter filter;
    char why[256] = "";

    assert_int_equal(coll_async_tcp_if_parse(include, exclude, &filter, why, sizeof(why)),
                     -EINVAL);
    if (NULL == strstr(why, reason)) {
        fail_msg("include \"%s\" exclude \"%s\": \"%s\" does not say \"%s\"",
                 include ? include : "", exclude ? exclude : "", why, reason);
    }
}

static void test_if_filter(void **state)
{
    struct coll_async_tcp_if found[COLL_ASYNC_TCP_MAX_IFS];
    char names[128];
    int count;

    (void) state;
    assert_string_equal(select_ifs(NULL, NULL, names, sizeof(names)), "eth0,eth1,ib0");
    assert_string_equal(select_ifs("", "", names, sizeof(names)), "eth0,eth1,ib0");
    assert_string_equal(select_ifs("10.0.0.0/8", NULL, names, sizeof(names)), "eth0,ib0");
    assert_string_equal(select_ifs("eth1,10.2.0.0/16", NULL, names, sizeof(names)), "eth1,ib0");
    assert_string_equal(select_ifs("lo", NULL, names, sizeof(names)), "lo");
    assert_string_equal(select_ifs("10.1.2.3", NULL, names, sizeof(names)), "eth0");
    assert_string_equal(select_ifs("10.9.9.9/8", NULL, names, sizeof(names)), "eth0,ib0");
    assert_string_equal(select_ifs("wlan0", NULL, names, sizeof(names)), "");
    assert_string_equal(select_ifs(NULL, "eth1", names, sizeof(names)), "eth0,ib0");
    assert_string_equal(select_ifs(NULL, "192.168.0.0/16,ib0", names, sizeof(names)), "eth0");
    /* Loopback only when nothing else is left. */
    assert_string_equal(select_ifs(NULL, "eth0,eth1,ib0", names, sizeof(names)), "lo");
    assert_string_equal(select_ifs(NULL, "0.0.0.0/0", names, sizeof(names)), "");

    assert_parse_fails("eth0", "eth1", "mutually exclusive");
    assert_parse_fails("10.0.0.0/33", NULL, "\"10.0.0.0/33\"");
    assert_parse_fails("10.0.0/8", NULL, "\"10.0.0/8\"");
    assert_parse_fails("300.1.1.1/8", NULL, "include list");
    assert_parse_fails("10.0.0.1/", NULL, "\"10.0.0.1/\"");
    assert_parse_fails("10.0.0.1/8x", NULL, "\"10.0.0.1/8x\"");
    assert_parse_fails(NULL, "eth0,,eth1", "exclude list: \"\"");
    assert_parse_fails(NULL, "eth0,", "exclude list");
    assert_parse_fails("an-interface-name-too-long", NULL, "too-long");
    assert_parse_fails("eth 0", NULL, "\"eth 0\"");

    /* The live machine: at least lo, which is up. */
    count = coll_async_tcp_if_discover(found, COLL_ASYNC_TCP_MAX_IFS);
    assert_true(count >= 1);
    for (int i = 0; i < count; ++i) {
        if (found[i].loopback) {
            assert_int_equal(found[i].prefix, 8);
            return;
        }
    }
    fail_msg("no loopback interface among %d", count);
}

/* Small transfers: many in flight from every rank to every other at once, their
 * receives posted some before and some after they arrive, while large transfers
 * share the links */

/* Transfer k's length: 0 bytes now and then, up to 1.5 KB, and some of 50 KB. */
static size_t small_length(uint64_t k)
{
    if (k % 17 == 0) {
        return 0;
    }
    return (k * 37) % 1500 + (k % 250 == 1 ? 50000 : 0);
}

/* Posts a large send and a large receive with every peer (tag 0). */
static void bulk_with_all(struct coll_async_tcp *tcp, int rank, int nranks, uint8_t *out,
                          uint8_t **in, struct coll_async_transfer *sends,
                          struct coll_async_transfer *recvs)
{
    for (int peer = 0; peer < nranks; ++peer) {
        if (peer != rank) {
            CHECK(0 == tcp_send(tcp, (uint32_t) peer, 0, out, BULK_BYTES, &sends[peer]));
            CHECK(0 == tcp_recv(tcp, (uint32_t) peer, 0, in[peer], BULK_BYTES, &recvs[peer]));
        }
    }
}

/* Posts the receives of the small transfers k with k % 2 == odd from every peer. */
static void post_small_receives(struct coll_async_tcp *tcp, int rank, int nranks, int odd,
                                uint8_t *(*in)[SMALL_TRANSFERS],
                                struct coll_async_transfer (*recvs)[SMALL_TRANSFERS])
{
    for (uint64_t k = (uint64_t) odd; k < SMALL_TRANSFERS; k += 2) {
        for (int peer = 0; peer < nranks; ++peer) {
            if (peer != rank) {
                POSTED(tcp_recv(tcp, (uint32_t) peer, k + 1, in[peer][k], small_length(k) + 1,
                                &recvs[peer][k]),
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
    struct coll_async_tcp *tcp = open_all(rank, nranks, 2);

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
    post_small_receives(tcp, rank, nranks, 1, in, recvs); /* the odd ones first */
    for (uint64_t k = 0; k < SMALL_TRANSFERS; ++k) {
        if (SMALL_TRANSFERS / 4 == k) {
            bulk_with_all(tcp, rank, nranks, big_out, big_in, big_sends, big_recvs);
        }
        for (int peer = 0; peer < nranks; ++peer) {
            if (peer != rank) {
                POSTED(tcp_send(tcp, (uint32_t) peer, k + 1, data[k], small_length(k),
                                &sends[peer][k]),
                       &sends[peer][k]);
            }
        }
        (void) tcp_progress(tcp);
    }
    post_small_receives(tcp, rank, nranks, 0, in, recvs); /* the even ones: staged by now */
    while (!small_load_done(rank, nranks, sends, recvs, big_sends, big_recvs)) {
        step(tcp);
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
    settle(tcp, 2 * (nranks - 1));
    barrier(tcp);
    tcp_destroy(tcp);
    for (int k = 0; k < SMALL_TRANSFERS; ++k) {
        free(data[k]);
        for (int peer = 0; peer < nranks; ++peer) {
            free(in[peer][k]);
        }
    }
}

static void test_small_transfers_3(void **state)
{
    (void) state;
    run_ranks(3, small_load);
}

/* Bulk transfers striped over two links */

static void check_both_links_carried(struct coll_async_tcp *tcp, int peer, bool sent)
{
    struct coll_async_tcp_link_stats stats[COLL_ASYNC_TCP_MAX_LINKS];

    CHECK(2 == coll_async_tcp_link_stats(tcp, (uint32_t) peer, stats, COLL_ASYNC_TCP_MAX_LINKS));
    for (int l = 0; l < 2; ++l) {
        uint64_t bytes = sent ? stats[l].bytes_sent : stats[l].bytes_received;

        if (bytes < CHUNK) {
            fprintf(stderr, "rank %d: link %d %s only %llu bytes\n", my_rank, l,
                    sent ? "sent" : "received", (unsigned long long) bytes);
        }
        CHECK(stats[l].established && bytes >= CHUNK);
    }
}

static void wait_links(struct coll_async_tcp *tcp, int peer)
{
    struct coll_async_tcp_link_stats stats[2] = {{0}};

    while (!stats[0].established || !stats[1].established) {
        step(tcp);
        CHECK(2 == coll_async_tcp_link_stats(tcp, (uint32_t) peer, stats, 2));
    }
}

static void striped(int rank, int nranks)
{
    struct coll_async_tcp *tcp = open_all(rank, nranks, 2);
    struct coll_async_transfer op = {0}, zero = {0};
    uint8_t *data = malloc(STRIPED_BYTES + 100);

    CHECK(NULL != data);
    if (0 == rank) {
        /* An empty transfer opens both links; the data is spread once they are up
         * (a link still connecting would rightly carry less). */
        CHECK(0 == tcp_send(tcp, 1, 8, NULL, 0, &zero));
        wait_links(tcp, 1);
        wait_op(tcp, &zero);
        /* Posted first: chunks land in place. */
        fill(data, STRIPED_BYTES, 0, 1);
        CHECK(0 == tcp_send(tcp, 1, 7, data, STRIPED_BYTES, &op));
        wait_op(tcp, &op);
        CHECK(0 == op.status && 0 == zero.status);
        check_both_links_carried(tcp, 1, true);
        /* Posted late: the transfer goes through staging, or waits for the post. */
        memset(data, 0, STRIPED_BYTES);
        barrier(tcp);
        CHECK(0 == tcp_recv(tcp, 1, 9, data, STRIPED_BYTES + 100, &op));
        wait_op(tcp, &op);
        CHECK(0 == op.status && (1 << 20) + 5 == op.bytes && holds(data, op.bytes, 1, 9));
        if (0 != rendezvous_bytes) { /* it waited for the post: nothing staged */
            struct coll_async_tcp_guard_stats guard;

            coll_async_tcp_guard_stats(tcp, &guard);
            CHECK(0 == guard.staging_copied && 0 == guard.announced);
        }
    } else {
        memset(data, 0, STRIPED_BYTES);
        CHECK(0 == tcp_recv(tcp, 0, 7, data, STRIPED_BYTES, &op));
        CHECK(0 == tcp_recv(tcp, 0, 8, NULL, 0, &zero));
        CHECK(-EBUSY == tcp_recv(tcp, 0, 7, data, STRIPED_BYTES, &op));
        wait_op(tcp, &op);
        wait_op(tcp, &zero);
        CHECK(0 == op.status && STRIPED_BYTES == op.bytes && holds(data, STRIPED_BYTES, 0, 1));
        CHECK(0 == zero.status && 0 == zero.bytes);
        check_both_links_carried(tcp, 0, false);
        fill(data, (1 << 20) + 5, 1, 9);
        CHECK(0 == tcp_send(tcp, 0, 9, data, (1 << 20) + 5, &op));
        barrier(tcp);
        wait_op(tcp, &op);
        CHECK(0 == op.status);
    }
    settle(tcp, 2);
    barrier(tcp);
    tcp_destroy(tcp);
    free(data);
}

static void test_striped_2(void **state)
{
    (void) state;
    run_ranks(2, striped);
}

/* The same with both transfers announced: chunks follow the CTS on both links. */
static void test_striped_rendezvous_2(void **state)
{
    (void) state;
    rendezvous_bytes = 1 << 20;
    run_ranks(2, striped);
}

static int no_rendezvous(void **state)
{
    (void) state;
    rendezvous_bytes = 0; /* also after a failed run */
    return 0;
}

/* Both sides connect at the same moment: one connection per link survives. */

static void simultaneous(int rank, int nranks)
{
    static uint8_t out[256 * 1024], in[256 * 1024];

    for (int round = 0; round < 10; ++round) {
        struct coll_async_tcp *tcp = open_all(rank, nranks, 2);
        struct coll_async_transfer small = {0}, small_in = {0}, send = {0}, recv = {0};
        uint8_t note[8] = {0};
        struct coll_async_tcp_link_stats stats[COLL_ASYNC_TCP_MAX_LINKS] = {{0}};
        int peer = 1 - rank;

        fill(out, sizeof(out), rank, (uint64_t) round);
        CHECK(0 == tcp_recv(tcp, (uint32_t) peer, 1, in, sizeof(in), &recv));
        CHECK(0 == tcp_send(tcp, (uint32_t) peer, 0, out, 8, &small));
        CHECK(0 == tcp_send(tcp, (uint32_t) peer, 1, out, sizeof(out), &send));
        CHECK(0 == tcp_recv(tcp, (uint32_t) peer, 0, note, sizeof(note), &small_in));
        wait_op(tcp, &small);
        wait_op(tcp, &send);
        wait_op(tcp, &recv);
        wait_op(tcp, &small_in);
        CHECK(0 == small.status && 0 == send.status && 0 == recv.status);
        CHECK(0 == small_in.status && 8 == small_in.bytes
              && holds(note, 8, peer, (uint64_t) round));
        CHECK(holds(in, sizeof(in), peer, (uint64_t) round));
        /* Losers of the race close as their handshakes finish: exactly two remain. */
        while (2 != coll_async_tcp_connections(tcp) || !stats[0].established
               || !stats[1].established) {
            step(tcp);
            CHECK(2 == coll_async_tcp_link_stats(tcp, (uint32_t) peer, stats, 2));
        }
        barrier(tcp); /* then the peer may close: no counting after this */
        tcp_destroy(tcp);
    }
}

static void test_simultaneous_connect(void **state)
{
    (void) state;
    run_ranks(2, simultaneous);
}

/* Lazy connects: none before first use, and only to the peer used. */

static void lazy(int rank, int nranks)
{
    struct coll_async_tcp *tcp = open_all(rank, nranks, 2);
    struct coll_async_tcp_link_stats stats[COLL_ASYNC_TCP_MAX_LINKS];
    struct coll_async_transfer op = {0};
    static uint8_t data[256 * 1024];

    for (int i = 0; i < 20; ++i) {
        step(tcp);
    }
    CHECK(0 == coll_async_tcp_connections(tcp));
    barrier(tcp);
    /* A receive connects its link 0, so that a sender that dies fails it. */
    if (1 == rank) {
        CHECK(0 == tcp_recv(tcp, 0, 5, data, sizeof(data), &op));
    }
    settle(tcp, 2 == rank ? 0 : 1);
    while (2 != rank && (2 != coll_async_tcp_link_stats(tcp, (uint32_t) (1 - rank), stats, 2)
                         || !stats[0].established)) {
        step(tcp);
    }
    barrier(tcp);
    /* Link 0 only, between 0 and 1 only. */
    CHECK(coll_async_tcp_connections(tcp) == (2 == rank ? 0 : 1));
    if (2 != rank) {
        CHECK(2 == coll_async_tcp_link_stats(tcp, (uint32_t) (1 - rank), stats, 2));
        CHECK(stats[0].established && !stats[1].connected);
    }
    CHECK(2 != rank || 0 == coll_async_tcp_link_stats(tcp, 0, stats, 2) || !stats[0].connected);
    barrier(tcp);
    /* The send opens the second link. */
    if (0 == rank) {
        CHECK(0 == tcp_send(tcp, 1, 5, data, sizeof(data), &op));
    }
    if (2 != rank) {
        wait_op(tcp, &op);
        CHECK(0 == op.status);
    }
    settle(tcp, 2 == rank ? 0 : 2);
    barrier(tcp);
    CHECK(coll_async_tcp_connections(tcp) == (2 == rank ? 0 : 2));
    barrier(tcp);
    tcp_destroy(tcp);
}

static void test_lazy_connect_3(void **state)
{
    (void) state;
    run_ranks(3, lazy);
}

/* A peer killed mid-transfer */

/* Rank 1: takes part in both transfers, tells the parent once bytes have moved
 * both ways, then stops and waits for SIGKILL. */
static void victim(struct coll_async_tcp *tcp, uint8_t *in, uint8_t *out)
{
    struct coll_async_tcp_link_stats stats[COLL_ASYNC_TCP_MAX_LINKS];
    struct coll_async_transfer send = {0}, recv = {0};
    uint64_t sent = 0, received = 0;

    CHECK(0 == tcp_recv(tcp, 0, 1, in, KILL_BYTES, &recv));
    CHECK(0 == tcp_send(tcp, 0, 2, out, KILL_BYTES, &send));
    while (sent < (1 << 20) || received < (1 << 20)) {
        int links = coll_async_tcp_link_stats(tcp, 0, stats, COLL_ASYNC_TCP_MAX_LINKS);

        step(tcp);
        sent = received = 0;
        for (int l = 0; l < links; ++l) {
            sent += stats[l].bytes_sent;
            received += stats[l].bytes_received;
        }
    }
    victim_cue_then_wait();
}

static void survivor(struct coll_async_tcp *tcp, uint8_t *in, uint8_t *out)
{
    struct coll_async_transfer send = {0}, recv = {0}, late = {0};

    CHECK(0 == tcp_send(tcp, 1, 1, out, KILL_BYTES, &send));
    CHECK(0 == tcp_recv(tcp, 1, 2, in, KILL_BYTES, &recv));
    wait_op(tcp, &send);
    wait_op(tcp, &recv);
    fprintf(stderr, "survivor: send: %s\nsurvivor: recv: %s\n", send.error, recv.error);
    CHECK(send.status < 0 && recv.status < 0);
    CHECK(-ECONNRESET == recv.status || -EPIPE == recv.status);
    CHECK(NULL != strstr(send.error, "peer 1, link") && NULL != strstr(recv.error, "127.0.0."));
    /* Later posts to the dead peer fail at once, with the same reason. */
    CHECK(recv.status == tcp_send(tcp, 1, 3, out, 1, &late));
    CHECK(late.error == recv.error);
    tcp_destroy(tcp);
}

static void killed(int rank, int nranks)
{
    struct coll_async_tcp *tcp = open_all(rank, nranks, 2);
    /* Untouched pages of a large calloc stay unbacked: the sender's source costs nothing. */
    uint8_t *in = calloc(1, KILL_BYTES), *out = calloc(1, KILL_BYTES);

    CHECK(NULL != in && NULL != out);
    if (0 == rank) {
        survivor(tcp, in, out);
    } else {
        victim(tcp, in, out);
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
    /* Well within the connect timeout: the error came from the socket, not a timer. */
    assert_true(seconds < 3);
}

/* Refused and silent peers, in this process */

static struct coll_async_tcp *open_single(int timeout_ms)
{
    struct coll_async_tcp_if ifs[1] = {test_if(0)};
    struct coll_async_tcp_config config = {
        .ifs = ifs, .nifs = 1, .self = 0, .nprocs = 2, .key = test_key(0),
        .connect_timeout_ms = timeout_ms,
    };
    struct coll_async_tcp *tcp;

    assert_int_equal(coll_async_tcp_create(&tcp, &config), 0);
    return tcp;
}

static void wait_op_parent(struct coll_async_tcp *tcp, const struct coll_async_transfer *op)
{
    struct timespec start, now;

    clock_gettime(CLOCK_MONOTONIC, &start);
    while (COLL_ASYNC_TRANSFER_PENDING == op->status) {
        step(tcp);
        clock_gettime(CLOCK_MONOTONIC, &now);
        assert_true(now.tv_sec - start.tv_sec < 10);
    }
}

/* A peer whose port nobody listens on any more. */
static void test_connect_refused(void **state)
{
    struct coll_async_tcp *tcp = open_single(5000), *gone = open_single(5000);
    uint8_t blob[COLL_ASYNC_TCP_ADDRESS_MAX];
    struct coll_async_transfer op = {0};
    int length = tcp_address(gone, blob, sizeof(blob));

    (void) state;
    tcp_destroy(gone);
    assert_int_equal(tcp_add_peer(tcp, 1, test_key_of(1), blob, (size_t) length), 0);
    assert_int_equal(tcp_send(tcp, 1, 0, "x", 1, &op), 0);
    wait_op_parent(tcp, &op);
    assert_int_equal(op.status, -ECONNREFUSED);
    print_message("refused: %s\n", op.error);
    assert_non_null(strstr(op.error, "peer 1, link 0 (lo 127.0.0.1 -> 127.0.0.1:"));
    assert_non_null(strstr(op.error, "connect: Connection refused"));
    assert_int_equal(coll_async_tcp_connections(tcp), 0);
    tcp_destroy(tcp);
}

/* A listener that never answers the hello: the link times out. */
static void test_connect_timeout(void **state)
{
    struct coll_async_tcp *tcp = open_single(300);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    struct coll_async_tcp_addr addr = {.prefix = 8};
    uint8_t blob[COLL_ASYNC_TCP_ADDRESS_MAX];
    struct coll_async_transfer op = {0}, pending = {0};
    int fd = socket(AF_INET, SOCK_STREAM, 0), length;

    (void) state;
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, 4), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *) &sa, &len), 0);
    addr.addr = sa.sin_addr;
    addr.port = ntohs(sa.sin_port);
    length = coll_async_tcp_address_encode(&addr, 1, blob, sizeof(blob));
    assert_int_equal(tcp_add_peer(tcp, 1, test_key_of(1), blob, (size_t) length), 0);
    assert_int_equal(tcp_send(tcp, 1, 0, "x", 1, &op), 0);
    assert_int_equal(tcp_recv(tcp, 1, 0, blob, sizeof(blob), &pending), 0);
    wait_op_parent(tcp, &op);
    wait_op_parent(tcp, &pending);
    assert_int_equal(op.status, -ETIMEDOUT);
    assert_int_equal(pending.status, -ETIMEDOUT);
    print_message("timeout: %s\n", op.error);
    assert_non_null(strstr(op.error, "not established in time"));
    tcp_destroy(tcp);
    close(fd);
}

/* Frames by hand, for the peers and strangers the tests play. */

static void send_all(int fd, const void *data, size_t length)
{
    assert_int_equal(send(fd, data, length, MSG_NOSIGNAL), (ssize_t) length);
}

/* A proven peer 1 of tcp (process 0) on a plain socket, which connects before
 * tcp has added it: the ACK waits for add_peer, then it reads and checks it. */
static int fake_proven_peer(struct coll_async_tcp *tcp)
{
    struct coll_async_tcp_addr nowhere = {.port = 1, .prefix = 8};
    struct coll_async_tcp_hello hello;
    uint8_t challenge[COLL_ASYNC_TCP_NONCE_BYTES], ack[32 + 8], blob[COLL_ASYNC_TCP_ADDRESS_MAX];
    uint64_t tag;
    int fd = connect_to(tcp), length;

    fake_hello(tcp, fd, 1, 0, test_key_of(0), &hello, challenge);
    for (int i = 0; i < 50; ++i) {
        step(tcp);
    }
    assert_int_equal(recv(fd, ack, 1, MSG_DONTWAIT), -1); /* no ACK without the key */
    inet_pton(AF_INET, "127.0.0.1", &nowhere.addr);
    length = coll_async_tcp_address_encode(&nowhere, 1, blob, sizeof(blob));
    assert_int_equal(tcp_add_peer(tcp, 1, test_key_of(1), blob, (size_t) length), 0);
    fake_read(tcp, fd, ack, sizeof(ack));
    assert_int_equal(ack[4], TEST_FRAME_ACK);
    memcpy(&tag, ack + 32, 8);
    assert_true(be64toh(tag) == coll_async_tcp_ack_tag(test_key_of(1), &hello, challenge));
    return fd;
}

/*
 * A hand-made peer on a plain socket, so the test controls how it goes away: it
 * accepts the transport's connection, challenges it, answers its hello with the
 * ACK it proves (under process 0's key), and reads a first one-byte transfer.
 */
struct fake_peer {
    int listener, fd;
};

static struct coll_async_tcp *open_with_fake_peer(struct fake_peer *fake)
{
    struct coll_async_tcp *tcp = open_single(5000);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    struct coll_async_tcp_addr addr = {.prefix = 8};
    uint8_t blob[COLL_ASYNC_TCP_ADDRESS_MAX], frame[32 + COLL_ASYNC_TCP_HELLO_BYTES] = {0};
    uint8_t challenge[COLL_ASYNC_TCP_NONCE_BYTES] = {7};
    struct coll_async_tcp_hello hello;
    struct coll_async_transfer op = {0};
    uint64_t tag;
    int length;

    fake->listener = socket(AF_INET, SOCK_STREAM, 0);
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    assert_int_equal(bind(fake->listener, (struct sockaddr *) &sa, sizeof(sa)), 0);
    assert_int_equal(listen(fake->listener, 4), 0);
    assert_int_equal(getsockname(fake->listener, (struct sockaddr *) &sa, &len), 0);
    addr.addr = sa.sin_addr;
    addr.port = ntohs(sa.sin_port);
    length = coll_async_tcp_address_encode(&addr, 1, blob, sizeof(blob));
    assert_int_equal(tcp_add_peer(tcp, 1, test_key_of(1), blob, (size_t) length), 0);

    assert_int_equal(tcp_send(tcp, 1, 0, "x", 1, &op), 0);
    fake->fd = accept(fake->listener, NULL, NULL);
    assert_true(fake->fd >= 0);
    test_frame_header(frame, TEST_FRAME_CHALLENGE, COLL_ASYNC_TCP_CHALLENGE_BYTES, 0, 0, 0);
    coll_async_tcp_challenge_encode(challenge, frame + 32);
    send_all(fake->fd, frame, 32 + COLL_ASYNC_TCP_CHALLENGE_BYTES);
    fake_read(tcp, fake->fd, frame, sizeof(frame)); /* the hello */
    assert_int_equal(frame[4], TEST_FRAME_HELLO);
    assert_int_equal(coll_async_tcp_hello_decode(frame + 32, &hello), 0);
    assert_true(hello.tag == coll_async_tcp_hello_tag(test_key_of(1), &hello, challenge));
    test_frame_header(frame, TEST_FRAME_ACK, 8, 0, 0, 0);
    tag = htobe64(coll_async_tcp_ack_tag(test_key_of(0), &hello, challenge));
    memcpy(frame + 32, &tag, 8);
    send_all(fake->fd, frame, 40);
    wait_op_parent(tcp, &op);
    assert_int_equal(op.status, 0);
    fake_read(tcp, fake->fd, frame, 33); /* its one chunk */
    assert_int_equal(frame[4], TEST_FRAME_CHUNK);
    assert_int_equal(frame[32], 'x');
    return tcp;
}

static void close_fake_peer(struct fake_peer *fake)
{
    close(fake->fd);
    close(fake->listener);
    nanosleep(&(struct timespec){0, 20000000}, NULL); /* let the FIN arrive */
}

/* A peer that closes cleanly (EOF) fails the receive waiting on it. */
static void test_peer_closed(void **state)
{
    struct fake_peer fake;
    struct coll_async_tcp *tcp = open_with_fake_peer(&fake);
    struct coll_async_transfer recv = {0};
    char buffer[16];

    (void) state;
    assert_int_equal(tcp_recv(tcp, 1, 4, buffer, sizeof(buffer), &recv), 0);
    close_fake_peer(&fake);
    wait_op_parent(tcp, &recv);
    print_message("closed: %s\n", recv.error);
    assert_int_equal(recv.status, -ECONNRESET);
    assert_non_null(strstr(recv.error, "the peer closed the connection"));
    assert_int_equal(coll_async_tcp_connections(tcp), 0);
    tcp_destroy(tcp);
}

/*
 * Writing to a peer that has closed: the first write draws a reset, the second
 * fails with EPIPE, which raises SIGPIPE unless the transport says MSG_NOSIGNAL.
 * Posting writes at once, before progress reads the end of stream.
 */
static void test_write_after_close(void **state)
{
    struct fake_peer fake;
    struct coll_async_tcp *tcp = open_with_fake_peer(&fake);
    struct coll_async_transfer first = {0}, second = {0};

    (void) state;
    close_fake_peer(&fake);
    assert_int_equal(tcp_send(tcp, 1, 1, "y", 1, &first), 0);
    nanosleep(&(struct timespec){0, 20000000}, NULL); /* let the reset arrive */
    assert_int_equal(tcp_send(tcp, 1, 2, "z", 1, &second), 0);
    wait_op_parent(tcp, &second);
    print_message("write after close: %s\n", second.error);
    assert_int_equal(second.status, -EPIPE);
    assert_non_null(strstr(second.error, "send: Broken pipe"));
    tcp_destroy(tcp);
}

/* Strangers and proven peers that break the rules, in this process */

/* Processes 0 and 1 in this process, each knowing the other; process 0 stages
 * at most staging_limit bytes (0: the default); both announce transfers of
 * rendezvous bytes or more (0: none). */
struct pair {
    struct coll_async_tcp *tcp[2];
};

static void open_pair(struct pair *pair, int timeout_ms, size_t staging_limit, size_t rendezvous)
{
    struct coll_async_tcp_if ifs[1] = {test_if(0)};
    uint8_t blob[2][COLL_ASYNC_TCP_ADDRESS_MAX];
    int length[2];

    for (uint32_t id = 0; id < 2; ++id) {
        struct coll_async_tcp_config config = {
            .ifs = ifs, .nifs = 1, .self = id, .nprocs = 2, .key = test_key(id),
            .chunk_size = CHUNK, .connect_timeout_ms = timeout_ms,
            .staging_limit = 0 == id ? staging_limit : 0, .rendezvous_bytes = rendezvous,
        };

        assert_int_equal(coll_async_tcp_create(&pair->tcp[id], &config), 0);
        length[id] = tcp_address(pair->tcp[id], blob[id], sizeof(blob[id]));
    }
    for (uint32_t id = 0; id < 2; ++id) {
        assert_int_equal(tcp_add_peer(pair->tcp[id], 1 - id, test_key_of(1 - id),
                                                 blob[1 - id], (size_t) length[1 - id]),
                         0);
    }
}

static void close_pair(struct pair *pair)
{
    tcp_destroy(pair->tcp[0]);
    tcp_destroy(pair->tcp[1]);
}

/* Both make progress until op completes, within 10 s. */
static void pair_wait(struct pair *pair, const struct coll_async_transfer *op)
{
    struct timespec start, now;

    clock_gettime(CLOCK_MONOTONIC, &start);
    while (COLL_ASYNC_TRANSFER_PENDING == op->status) {
        (void) tcp_progress(pair->tcp[1]);
        step(pair->tcp[0]);
        clock_gettime(CLOCK_MONOTONIC, &now);
        assert_true(now.tv_sec - start.tv_sec < 10);
    }
}

static void pair_steps(struct pair *pair, int count)
{
    for (int i = 0; i < count; ++i) {
        (void) tcp_progress(pair->tcp[1]);
        step(pair->tcp[0]);
    }
}

/* Process 1 sends length bytes with tag to process 0, which receives them. */
static void pair_transfer(struct pair *pair, uint64_t tag, size_t length)
{
    uint8_t *out = malloc(length), *in = calloc(1, length);
    struct coll_async_transfer send = {0}, recv = {0};

    fill(out, length, 1, tag);
    assert_int_equal(tcp_recv(pair->tcp[0], 1, tag, in, length, &recv), 0);
    assert_int_equal(tcp_send(pair->tcp[1], 0, tag, out, length, &send), 0);
    pair_wait(pair, &recv);
    pair_wait(pair, &send);
    assert_int_equal(recv.status, 0);
    assert_true(holds(in, length, 1, tag));
    free(out);
    free(in);
}

static struct coll_async_tcp_guard_stats guard_of(const struct coll_async_tcp *tcp)
{
    struct coll_async_tcp_guard_stats stats;

    coll_async_tcp_guard_stats(tcp, &stats);
    return stats;
}

/* A stranger that knows the protocol but not the key claims to be process 1 on
 * its link 0: refused and closed; the real process 1 connects after it and its
 * transfer arrives whole. */
static void test_stranger_wrong_mac(void **state)
{
    struct pair pair;
    struct coll_async_tcp_hello hello;
    uint8_t challenge[COLL_ASYNC_TCP_NONCE_BYTES];
    struct coll_async_key guess = test_key(7);
    int fd;

    (void) state;
    open_pair(&pair, 5000, 0, 0);
    fd = connect_to(pair.tcp[0]);
    fake_hello(pair.tcp[0], fd, 1, 0, &guess, &hello, challenge);
    wait_closed(pair.tcp[0], fd, 3);
    assert_int_equal(guard_of(pair.tcp[0]).refused, 1);
    assert_int_equal(coll_async_tcp_connections(pair.tcp[0]), 0); /* no link made */
    pair_transfer(&pair, 3, BULK_BYTES);
    close(fd);
    close_pair(&pair);
}

/* A connection that never says hello is closed at the deadline. */
static void test_silent_connection_deadline(void **state)
{
    struct coll_async_tcp *tcp = open_single(300);
    struct timespec start, end;
    int fd = connect_to(tcp);

    (void) state;
    clock_gettime(CLOCK_MONOTONIC, &start);
    wait_closed(tcp, fd, 3);
    clock_gettime(CLOCK_MONOTONIC, &end);
    print_message("silent connection closed after %.2f s\n",
                  end.tv_sec - start.tv_sec + (end.tv_nsec - start.tv_nsec) / 1e9);
    assert_int_equal(coll_async_tcp_connections(tcp), 0);
    assert_int_equal(guard_of(tcp).refused, 1);
    close(fd);
    tcp_destroy(tcp);
}

/* More silent strangers than the cap (64): the oldest are closed, the sockets
 * held stay bounded, and the real peer still connects. */
static void test_unproven_cap(void **state)
{
    enum { STRANGERS = 64 + 6 };
    struct pair pair;
    int fds[STRANGERS];

    (void) state;
    open_pair(&pair, 5000, 0, 0);
    for (int i = 0; i < STRANGERS; ++i) {
        fds[i] = connect_to(pair.tcp[0]);
        pair_steps(&pair, 2);
    }
    pair_steps(&pair, 20);
    print_message("%d strangers: %d sockets open\n", STRANGERS,
                  coll_async_tcp_connections(pair.tcp[0]));
    assert_true(coll_async_tcp_connections(pair.tcp[0]) <= 64);
    for (int i = 0; i < STRANGERS - 64; ++i) {
        wait_closed(pair.tcp[0], fds[i], 3); /* the oldest */
    }
    pair_transfer(&pair, 4, BULK_BYTES);
    for (int i = 0; i < STRANGERS; ++i) {
        close(fds[i]);
    }
    close_pair(&pair);
}

/* A proven peer sends count headers, the last of which breaks the protocol: the
 * receive of tag 9 (16 bytes) fails with expected, a message that says which,
 * before any payload is read, and the connection closes. */
static void proven_peer_breaks(const uint8_t *headers, size_t count, const char *expected)
{
    struct coll_async_tcp *tcp = open_single(5000);
    struct coll_async_transfer recv = {0};
    char buffer[16];
    int fd = fake_proven_peer(tcp);

    assert_int_equal(tcp_recv(tcp, 1, 9, buffer, sizeof(buffer), &recv), 0);
    send_all(fd, headers, 32 * count);
    wait_op_parent(tcp, &recv);
    print_message("%s\n", recv.error);
    assert_int_equal(recv.status, -EPROTO);
    assert_non_null(strstr(recv.error, expected));
    wait_closed(tcp, fd, 3);
    close(fd);
    tcp_destroy(tcp);
}

/* Type 3 was an eager message: no frame of that type is sent any more. */
static void test_unknown_frame_type(void **state)
{
    uint8_t header[32];

    (void) state;
    test_frame_header(header, TEST_FRAME_EAGER, 8, 9, 0, 0);
    proven_peer_breaks(header, 1, "unknown type 3");
}

static void test_chunk_past_total(void **state)
{
    uint8_t header[32];

    (void) state;
    test_frame_header(header, TEST_FRAME_CHUNK, 4096, 12, 1 << 20, (1 << 20) + 100);
    proven_peer_breaks(header, 1, "past its transfer's");
}

/* Announcements and answers out of the protocol, each from a proven peer. */
static void test_rendezvous_frames_checked(void **state)
{
    enum { MANY = 4096 + 1 };
    uint8_t two[2][32], *many = malloc(32 * MANY);

    (void) state;
    test_frame_header(two[0], TEST_FRAME_CTS, 0, 5, 0, 0);
    proven_peer_breaks(two[0], 1, "a CTS for no transfer announced");
    test_frame_header(two[0], TEST_FRAME_CTS, 0, 5, 0, 100);
    proven_peer_breaks(two[0], 1, "a CTS with a payload");
    test_frame_header(two[0], TEST_FRAME_RTS, 0, 5, 0, 0);
    proven_peer_breaks(two[0], 1, "an RTS with a payload");
    test_frame_header(two[0], TEST_FRAME_RTS, 8, 5, 0, 100);
    proven_peer_breaks(two[0], 1, "an RTS with a payload");
    test_frame_header(two[0], TEST_FRAME_RTS, 0, 9, 0, 1000); /* tag 9's receive holds 16 */
    proven_peer_breaks(two[0], 1, "an RTS longer than its receive");
    test_frame_header(two[0], TEST_FRAME_RTS, 0, 10, 0, 100);
    test_frame_header(two[1], TEST_FRAME_RTS, 0, 10, 0, 100);
    proven_peer_breaks(two[0], 2, "already under way");
    test_frame_header(two[1], TEST_FRAME_CHUNK, 0, 10, 0, 100);
    proven_peer_breaks(two[0], 2, "before its CTS");
    for (int i = 0; i < MANY; ++i) {
        test_frame_header(many + 32 * i, TEST_FRAME_RTS, 0, (uint64_t) 100 + i, 0, 1 << 20);
    }
    proven_peer_breaks(many, MANY, "past the most announced transfers");
    free(many);
}

/* Announced transfers: one whose receive comes late stages nothing and waits;
 * one whose receive came first, and a small one behind the waiting one, go at
 * once; all arrive whole. */
static void test_rendezvous(void **state)
{
    enum { BIG = (2 << 20) + 3, SMALL = 1000 };
    static uint8_t out2[BIG], out4[BIG], out3[SMALL], in2[BIG], in4[BIG], in3[SMALL];
    struct coll_async_transfer send[3] = {{0}}, recv2 = {0}, recv3 = {0}, recv4 = {0};
    struct coll_async_tcp_guard_stats guard;
    struct pair pair;

    (void) state;
    open_pair(&pair, 5000, 0, 1 << 20);
    fill(out2, BIG, 1, 2);
    fill(out4, BIG, 1, 4);
    fill(out3, SMALL, 1, 3);
    assert_int_equal(tcp_recv(pair.tcp[0], 1, 4, in4, BIG, &recv4), 0);
    assert_int_equal(tcp_send(pair.tcp[1], 0, 2, out2, BIG, &send[0]), 0);
    assert_int_equal(tcp_send(pair.tcp[1], 0, 3, out3, SMALL, &send[1]), 0);
    assert_int_equal(tcp_send(pair.tcp[1], 0, 4, out4, BIG, &send[2]), 0);
    assert_int_equal(tcp_recv(pair.tcp[0], 1, 3, in3, SMALL, &recv3), 0);
    pair_wait(&pair, &recv3);
    pair_wait(&pair, &recv4);
    pair_steps(&pair, 100);
    guard = guard_of(pair.tcp[0]);
    print_message("before tag 2's post: %zu bytes staged, %d announced\n", guard.staged,
                  guard.announced);
    assert_int_equal(guard.staged, 0);
    assert_int_equal(guard.announced, 1);
    assert_int_equal(send[0].status, COLL_ASYNC_TRANSFER_PENDING); /* waits for the CTS */

    assert_int_equal(tcp_recv(pair.tcp[0], 1, 2, in2, BIG, &recv2), 0);
    pair_wait(&pair, &recv2);
    for (int i = 0; i < 3; ++i) {
        pair_wait(&pair, &send[i]);
        assert_int_equal(send[i].status, 0);
    }
    assert_int_equal(recv2.status, 0);
    assert_int_equal(recv3.status, 0);
    assert_int_equal(recv4.status, 0);
    assert_int_equal(recv2.bytes, BIG);
    assert_true(holds(in2, BIG, 1, 2) && holds(in4, BIG, 1, 4) && holds(in3, SMALL, 1, 3));
    guard = guard_of(pair.tcp[0]);
    assert_int_equal(guard.staging_copied, 0);
    assert_int_equal(guard.announced, 0);
    close_pair(&pair);
}

/* A peer that announced a transfer and then died (reset: its socket's error
 * waits, unread, when the receive is posted): the receive fails instead of
 * waiting for data that will never come. */
static void test_rendezvous_sender_gone(void **state)
{
    struct coll_async_tcp *tcp = open_single(5000);
    struct coll_async_transfer recv = {0};
    struct linger reset = {.l_onoff = 1, .l_linger = 0};
    uint8_t header[32], in[100];
    int fd = fake_proven_peer(tcp), rc;

    (void) state;
    test_frame_header(header, TEST_FRAME_RTS, 0, 10, 0, sizeof(in));
    send_all(fd, header, 32);
    for (int i = 0; i < 50 && 0 == guard_of(tcp).announced; ++i) {
        step(tcp);
    }
    assert_int_equal(guard_of(tcp).announced, 1);
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset)), 0);
    close(fd);
    nanosleep(&(struct timespec){0, 20000000}, NULL); /* let the reset arrive */
    rc = tcp_recv(tcp, 1, 10, in, sizeof(in), &recv);
    if (0 == rc) {
        wait_op_parent(tcp, &recv);
        rc = recv.status;
    }
    print_message("receive after the sender's reset: %s\n", strerror(-rc));
    assert_true(rc < 0);
    tcp_destroy(tcp);
}

/* Staging is bounded: transfers for tags not posted yet take at most the limit;
 * the next one stops its connection (and what follows on it) until a receive
 * is posted, and then everything arrives whole. */
static void test_staging_backpressure(void **state)
{
    enum { LIMIT = 1 << 20, BIG = 600 << 10, SMALL = 1000 };
    static uint8_t out5[BIG], out7[BIG], out6[SMALL], in5[BIG], in7[BIG], in6[SMALL];
    struct coll_async_transfer send[3] = {{0}}, recv5 = {0}, recv6 = {0}, recv7 = {0};
    struct coll_async_tcp_guard_stats guard;
    struct pair pair;

    (void) state;
    open_pair(&pair, 5000, LIMIT, 0);
    fill(out5, BIG, 1, 5);
    fill(out7, BIG, 1, 7);
    fill(out6, SMALL, 1, 6);
    assert_int_equal(tcp_send(pair.tcp[1], 0, 5, out5, BIG, &send[0]), 0);
    assert_int_equal(tcp_send(pair.tcp[1], 0, 7, out7, BIG, &send[1]), 0);
    assert_int_equal(tcp_send(pair.tcp[1], 0, 6, out6, SMALL, &send[2]), 0);
    assert_int_equal(tcp_recv(pair.tcp[0], 1, 6, in6, SMALL, &recv6), 0);
    pair_steps(&pair, 300);
    guard = guard_of(pair.tcp[0]);
    print_message("before the posts: %zu bytes staged, %d connection(s) stalled\n",
                  guard.staged, guard.stalled);
    assert_true(guard.staged <= LIMIT);
    assert_int_equal(guard.staged, BIG);
    assert_int_equal(guard.stalled, 1);
    assert_int_equal(recv6.status, COLL_ASYNC_TRANSFER_PENDING); /* behind tag 7 */

    assert_int_equal(tcp_recv(pair.tcp[0], 1, 5, in5, BIG, &recv5), 0);
    pair_wait(&pair, &recv5);
    pair_wait(&pair, &recv6);
    assert_int_equal(tcp_recv(pair.tcp[0], 1, 7, in7, BIG, &recv7), 0);
    pair_wait(&pair, &recv7);
    for (int i = 0; i < 3; ++i) {
        pair_wait(&pair, &send[i]);
        assert_int_equal(send[i].status, 0);
    }
    assert_int_equal(recv5.status, 0);
    assert_int_equal(recv6.status, 0);
    assert_int_equal(recv7.status, 0);
    assert_true(holds(in5, BIG, 1, 5) && holds(in7, BIG, 1, 7) && holds(in6, SMALL, 1, 6));
    guard = guard_of(pair.tcp[0]);
    assert_int_equal(guard.staged, 0);
    assert_int_equal(guard.stalled, 0);
    close_pair(&pair);
}

/* A receive posted while its transfer is under way (chunks staged, one perhaps
 * half read): what was staged is copied, the rest lands in place, and the
 * whole arrives, at every point of posting tried. */
static void test_receive_posted_midway(void **state)
{
    enum { BIG = (8 << 20) + 7 };
    uint8_t *out = malloc(BIG), *in = malloc(BIG);
    struct pair pair;
    int partial = 0;

    (void) state;
    open_pair(&pair, 5000, 0, 0);
    pair_transfer(&pair, 1, 100); /* connected */
    for (uint64_t tag = 2; tag < 8; ++tag) {
        struct coll_async_transfer send = {0}, recv = {0};
        uint64_t before = guard_of(pair.tcp[0]).staging_copied, copied;

        fill(out, BIG, 1, tag);
        memset(in, 0, BIG);
        assert_int_equal(tcp_send(pair.tcp[1], 0, tag, out, BIG, &send), 0);
        for (int i = 0; 0 == guard_of(pair.tcp[0]).staged; ++i) {
            assert_true(i < 10000); /* an idle step waits at most 1 ms: pair_wait's 10 s */
            pair_steps(&pair, 1);
        }
        pair_steps(&pair, (int) tag % 3); /* a little further each time */
        assert_int_equal(tcp_recv(pair.tcp[0], 1, tag, in, BIG, &recv), 0);
        pair_wait(&pair, &recv);
        pair_wait(&pair, &send);
        assert_int_equal(recv.status, 0);
        assert_int_equal(send.status, 0);
        assert_true(holds(in, BIG, 1, tag));
        copied = guard_of(pair.tcp[0]).staging_copied - before;
        print_message("tag %llu: copied from staging %llu of %d bytes\n",
                      (unsigned long long) tag, (unsigned long long) copied, BIG);
        assert_true(copied > 0);
        partial += copied < BIG;
        assert_int_equal(guard_of(pair.tcp[0]).staged, 0);
    }
    assert_true(partial > 0); /* at least one post came before the transfer's end */
    close_pair(&pair);
    free(out);
    free(in);
}

/* The same by hand, so that a chunk is half read when the receive is posted:
 * its second half lands in staging after the post, and must still arrive.
 * Chunks come at 1000, then 0 (half of it before the post), then 2000. */
static void test_receive_posted_mid_chunk(void **state)
{
    enum { PART = 1000, TOTAL = 3 * PART, TAG = 9 };
    struct coll_async_tcp *tcp = open_single(5000);
    struct coll_async_transfer recv = {0};
    uint8_t header[32], out[TOTAL], in[TOTAL] = {0};
    int fd = fake_proven_peer(tcp);

    (void) state;
    fill(out, TOTAL, 1, TAG);
    test_frame_header(header, TEST_FRAME_CHUNK, PART, TAG, PART, TOTAL);
    send_all(fd, header, 32);
    send_all(fd, out + PART, PART);
    test_frame_header(header, TEST_FRAME_CHUNK, PART, TAG, 0, TOTAL);
    send_all(fd, header, 32);
    send_all(fd, out, PART / 2);
    for (int i = 0; i < 50; ++i) {
        step(tcp);
    }
    assert_int_equal(guard_of(tcp).staged, TOTAL);
    assert_int_equal(tcp_recv(tcp, 1, TAG, in, TOTAL, &recv), 0);
    send_all(fd, out + PART / 2, PART - PART / 2);
    test_frame_header(header, TEST_FRAME_CHUNK, PART, TAG, 2 * PART, TOTAL);
    send_all(fd, header, 32);
    send_all(fd, out + 2 * PART, PART);
    wait_op_parent(tcp, &recv);
    assert_int_equal(recv.status, 0);
    assert_int_equal(recv.bytes, TOTAL);
    assert_memory_equal(in, out, TOTAL);
    /* At the post, up to the end of the chunk at 1000; the half-read chunk again. */
    assert_int_equal(guard_of(tcp).staging_copied, 2 * PART + PART);
    assert_int_equal(guard_of(tcp).staged, 0);
    close(fd);
    tcp_destroy(tcp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_address_roundtrip),
        cmocka_unit_test(test_transport_address),
        cmocka_unit_test(test_if_filter),
        cmocka_unit_test(test_small_transfers_3),
        cmocka_unit_test(test_striped_2),
        cmocka_unit_test_teardown(test_striped_rendezvous_2, no_rendezvous),
        cmocka_unit_test(test_simultaneous_connect),
        cmocka_unit_test(test_lazy_connect_3),
        cmocka_unit_test(test_peer_killed),
        cmocka_unit_test(test_connect_refused),
        cmocka_unit_test(test_connect_timeout),
        cmocka_unit_test(test_peer_closed),
        cmocka_unit_test(test_write_after_close),
        cmocka_unit_test(test_stranger_wrong_mac),
        cmocka_unit_test(test_silent_connection_deadline),
        cmocka_unit_test(test_unproven_cap),
        cmocka_unit_test(test_unknown_frame_type),
        cmocka_unit_test(test_chunk_past_total),
        cmocka_unit_test(test_rendezvous_frames_checked),
        cmocka_unit_test(test_rendezvous),
        cmocka_unit_test(test_rendezvous_sender_gone),
        cmocka_unit_test(test_staging_backpressure),
        cmocka_unit_test(test_receive_posted_midway),
        cmocka_unit_test(test_receive_posted_mid_chunk),
    };

    shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                  0);
    if (MAP_FAILED == shared) {
        return 1;
    }
    if (NULL != getenv("TEST_TCP_ONLY")) {
        cmocka_set_test_filter(getenv("TEST_TCP_ONLY")); /* e.g. "*small*" */
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
