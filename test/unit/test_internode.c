/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of coll_async_internode.c: the leaders' algorithms between nodes,
 * run by forked processes over the TCP transport on loopback, every kind and
 * algorithm at group sizes 1 to 5, against references each rank computes
 * itself; a profiled (reversed) ring; two collectives in flight at once; a peer
 * killed mid-collective, which must end in an error, not a hang; and that what
 * a real run asks the mapper to move is what bench/simulate prices. Their plans'
 * pairing, without a network, is test_internode_plans.c's.
 */

#define _GNU_SOURCE

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_keys.h"

#include "../../bench/simulate_model.h"
#include "../../ompi/mca/coll/async/coll_async_internode.h"
#include "../../ompi/mca/coll/async/transport/coll_async_tcp.h"
#include "forked_ranks.h"
#include "internode_blocks.h"

#define MAX_RANKS 5
#define BIG_COUNT (300 * 1000 + 3) /* int32 elements: about 1.2 MB */

/* The reductions of this test: int32 sum (the component's kernels are tested
 * elsewhere; this stands in for coll_async_reduction.c, which needs Open MPI). */
void coll_async_reduce(const struct coll_async_reduction *reduction, void *inout, const void *in,
                       size_t count)
{
    int32_t *a = inout;
    const int32_t *b = in;

    (void) reduction;
    for (size_t i = 0; i < count; ++i) {
        a[i] += b[i];
    }
}

static const struct coll_async_reduction int_sum = {.size = sizeof(int32_t)};

/* The pretend modex and barrier. */
static struct {
    struct forked_barrier barrier;
    size_t blob_length[MAX_RANKS];
    uint8_t blob[MAX_RANKS][COLL_ASYNC_TCP_ADDRESS_MAX];
} *shared;

static void barrier(int nranks)
{
    forked_barrier_wait(&shared->barrier, nranks, NULL, NULL);
}

/* The leaders' mapper, over TCP on loopback. */
static struct coll_async_net *open_group(int rank, int nranks, uint32_t *peer)
{
    struct coll_async_tcp_if lo = {"lo", {0}, 8, true};
    struct coll_async_tcp_config config = {.ifs = &lo, .nifs = 1, .self = (uint32_t) rank,
                                           .key = test_key((uint32_t) rank),
                                           .nprocs = (uint32_t) nranks,
                                           .connect_timeout_ms = 5000};
    struct coll_async_transport *tcp;
    struct coll_async_tcp *handle;
    struct coll_async_net *net;
    int length;

    inet_pton(AF_INET, "127.0.0.1", &lo.addr);
    CHECK(0 == coll_async_tcp_create(&handle, &config));
    tcp = coll_async_tcp_transport(handle);
    length = tcp->ops->address(tcp, shared->blob[rank], COLL_ASYNC_TCP_ADDRESS_MAX);
    CHECK(length > 0);
    shared->blob_length[rank] = (size_t) length;
    CHECK(0 == coll_async_net_create(&net, (uint32_t) nranks, &tcp, 1));
    barrier(nranks);
    for (int other = 0; other < nranks; ++other) {
        peer[other] = (uint32_t) other;
        if (other != rank) {
            struct coll_async_net_blob blob = {shared->blob[other], shared->blob_length[other]};

            CHECK(0 == coll_async_net_add_peer(net, (uint32_t) other, test_key_of((uint32_t) other),
                                               &blob));
            CHECK(0 == strcmp("tcp", coll_async_net_peer_via(net, (uint32_t) other)));
        }
    }
    return net;
}

/* Drives x until it ends; its result. */
static int run(struct coll_async_net *net, struct coll_async_internode *x,
               enum coll_async_family kind)
{
    int rc = coll_async_internode_start(x, kind);

    while (0 == rc && COLL_ASYNC_INTERNODE_AGAIN == (rc = coll_async_internode_progress(x))) {
        struct pollfd pfd = {.fd = coll_async_net_fd(net), .events = POLLIN};

        rc = 0;
        if (0 == coll_async_net_progress(net)) {
            (void) poll(&pfd, 1, 1);
        }
    }
    if (0 != rc) {
        fprintf(stderr, "rank %d: %s: %s\n", my_rank, strerror(-rc), x->error ? x->error : "");
    }
    coll_async_internode_fini(x);
    return rc;
}

/* Rank r's input element i. */
static int32_t input(int rank, size_t i)
{
    return (int32_t) (rank * 1000003 + (int) (i * 7 % 1009) - 500);
}

/* A vector of rank's inputs, count elements. */
static int32_t *inputs(int rank, size_t count)
{
    int32_t *buf = malloc(sizeof(int32_t) * (count + 1));

    CHECK(NULL != buf);
    for (size_t i = 0; i < count; ++i) {
        buf[i] = input(rank, i);
    }
    return buf;
}

/* The sum over n ranks of element i. */
static int32_t reference(int n, size_t i)
{
    int32_t sum = 0;

    for (int r = 0; r < n; ++r) {
        sum += input(r, i);
    }
    return sum;
}

struct group {
    struct coll_async_net *net;
    struct coll_async_leaders leaders;
    uint32_t peer[MAX_RANKS];
    int reversed[MAX_RANKS];
    uint64_t next_tag;
};

static void new_collective(struct group *g, struct coll_async_internode *x,
                           enum coll_async_alg alg)
{
    *x = (struct coll_async_internode){.group = &g->leaders, .alg = alg,
                                      .tag = g->next_tag, .reduction = &int_sum};
    g->next_tag += COLL_ASYNC_INTERNODE_TAG_STEPS;
}

static const size_t counts[] = {0, 1, 7, 4, 1000, BIG_COUNT};

static void check_allreduce(struct group *g, enum coll_async_alg alg, size_t count)
{
    int32_t *buf = inputs(g->leaders.rank, count);
    struct coll_async_internode x;

    new_collective(g, &x, alg);
    x.buf = buf;
    x.count = count;
    CHECK(0 == run(g->net, &x, COLL_ASYNC_FAMILY_ALLREDUCE));
    for (size_t i = 0; i < count; ++i) {
        CHECK(reference(g->leaders.size, i) == buf[i]);
    }
    free(buf);
}

static void check_reduce(struct group *g, int root, size_t count)
{
    int32_t *buf = inputs(g->leaders.rank, count);
    struct coll_async_internode x;

    new_collective(g, &x, COLL_ASYNC_ALG_BINOMIAL);
    x.buf = buf;
    x.count = count;
    x.root = root;
    CHECK(0 == run(g->net, &x, COLL_ASYNC_FAMILY_REDUCE));
    for (size_t i = 0; i < count && g->leaders.rank == root; ++i) {
        CHECK(reference(g->leaders.size, i) == buf[i]);
    }
    free(buf);
}

static void check_bcast(struct group *g, enum coll_async_alg alg, int root,
                        size_t bytes)
{
    uint8_t *buf = malloc(bytes + 1);
    struct coll_async_internode x;

    CHECK(NULL != buf);
    for (size_t i = 0; i < bytes; ++i) {
        buf[i] = g->leaders.rank == root ? (uint8_t) (i * 13 + 5) : 0xee;
    }
    new_collective(g, &x, alg);
    x.buf = buf;
    x.bytes = bytes;
    x.root = root;
    CHECK(0 == run(g->net, &x, COLL_ASYNC_FAMILY_BCAST));
    for (size_t i = 0; i < bytes; ++i) {
        CHECK((uint8_t) (i * 13 + 5) == buf[i]);
    }
    free(buf);
}

static void check_allgather(struct group *g, enum coll_async_alg alg, size_t base)
{
    int n = g->leaders.size;
    size_t offset[MAX_RANKS], bytes[MAX_RANKS], total = 0;
    uint8_t *buf;
    struct coll_async_internode x;

    for (int r = 0; r < n; ++r) {
        offset[r] = total;
        bytes[r] = block_size(r, base);
        total += bytes[r];
    }
    buf = malloc(total + 1);
    CHECK(NULL != buf);
    memset(buf, 0xee, total);
    for (size_t i = 0; i < bytes[g->leaders.rank]; ++i) {
        buf[offset[g->leaders.rank] + i] = (uint8_t) (g->leaders.rank * 31 + i);
    }
    new_collective(g, &x, alg);
    x.buf = buf;
    x.block_offset = offset;
    x.block_bytes = bytes;
    CHECK(0 == run(g->net, &x, COLL_ASYNC_FAMILY_ALLGATHER));
    for (int r = 0; r < n; ++r) {
        for (size_t i = 0; i < bytes[r]; ++i) {
            CHECK((uint8_t) (r * 31 + i) == buf[offset[r] + i]);
        }
    }
    free(buf);
}

/* Reduce_scatter: block_size(r, base) elements of the vector end reduced at r. */
static void check_reduce_scatter(struct group *g, size_t base)
{
    int n = g->leaders.size, me = g->leaders.rank;
    size_t offset[MAX_RANKS], bytes[MAX_RANKS], total = 0;
    int32_t *buf;
    struct coll_async_internode x;

    for (int r = 0; r < n; ++r) {
        offset[r] = total * sizeof(int32_t);
        bytes[r] = block_size(r, base) * sizeof(int32_t);
        total += block_size(r, base);
    }
    buf = inputs(me, total);
    new_collective(g, &x, COLL_ASYNC_ALG_AUTO);
    x.buf = buf;
    x.count = total;
    x.block_offset = offset;
    x.block_bytes = bytes;
    CHECK(0 == run(g->net, &x, COLL_ASYNC_FAMILY_REDUCE_SCATTER));
    for (size_t i = offset[me] / sizeof(int32_t); i < (offset[me] + bytes[me]) / sizeof(int32_t);
         ++i) {
        CHECK(reference(n, i) == buf[i]);
    }
    free(buf);
}

/* Gather and scatter: the blocks by rank relative to the root (block_size of the
 * relative rank), each rank's at the offset of its relative rank. */
static void check_rooted(struct group *g, bool scatter, int root, size_t base)
{
    int n = g->leaders.size, me = (g->leaders.rank - root + n) % n;
    size_t offset[MAX_RANKS], bytes[MAX_RANKS], total = 0;
    uint8_t *buf;
    struct coll_async_internode x;

    for (int v = 0; v < n; ++v) {
        offset[v] = total;
        bytes[v] = block_size(v, base);
        total += bytes[v];
    }
    buf = malloc(total + 1);
    CHECK(NULL != buf);
    memset(buf, 0xee, total);
    for (int v = 0; v < n; ++v) {
        for (size_t i = 0; i < bytes[v] && (scatter ? 0 == me : v == me); ++i) {
            buf[offset[v] + i] = (uint8_t) (v * 31 + i);
        }
    }
    new_collective(g, &x, COLL_ASYNC_ALG_BINOMIAL);
    x.buf = buf;
    x.root = root;
    x.block_offset = offset;
    x.block_bytes = bytes;
    CHECK(0 == run(g->net, &x, scatter ? COLL_ASYNC_FAMILY_SCATTER : COLL_ASYNC_FAMILY_GATHER));
    for (int v = 0; v < n; ++v) {
        for (size_t i = 0; i < bytes[v] && (scatter ? v == me : 0 == me); ++i) {
            CHECK((uint8_t) (v * 31 + i) == buf[offset[v] + i]);
        }
    }
    free(buf);
}

/* Alltoall between leaders: the block between leaders a and b has a size of
 * both (as the node-pair aggregates, R_a x R_b blocks), empty for 0 and 1. */
static size_t pair_size(int a, int b, size_t base)
{
    return (0 == a && 1 == b) || (1 == a && 0 == b) ? 0 : base * (size_t) ((a + 1) * (b + 1));
}

static void check_alltoall(struct group *g, size_t base)
{
    int n = g->leaders.size, me = g->leaders.rank;
    size_t offset[MAX_RANKS], bytes[MAX_RANKS], total = 0;
    uint8_t *out, *in;
    struct coll_async_internode x;

    for (int b = 0; b < n; ++b) {
        offset[b] = total;
        bytes[b] = pair_size(me, b, base);
        total += bytes[b];
    }
    out = malloc(total + 1);
    in = malloc(total + 1);
    CHECK(NULL != out && NULL != in);
    memset(in, 0xee, total);
    for (int b = 0; b < n; ++b) {
        for (size_t i = 0; i < bytes[b]; ++i) {
            out[offset[b] + i] = (uint8_t) (me * 31 + b * 7 + i);
        }
    }
    new_collective(g, &x, COLL_ASYNC_ALG_PAIRWISE);
    x.buf = out;
    x.recv_buf = in;
    x.block_offset = offset;
    x.block_bytes = bytes;
    CHECK(0 == run(g->net, &x, COLL_ASYNC_FAMILY_ALLTOALL));
    for (int a = 0; a < n; ++a) {
        for (size_t i = 0; i < bytes[a] && a != me; ++i) {
            CHECK((uint8_t) (a * 31 + me * 7 + i) == in[offset[a] + i]);
        }
    }
    free(out);
    free(in);
}

static void every_kind(struct group *g)
{
    static const enum coll_async_alg allreduce_algs[] = {
        COLL_ASYNC_ALG_AUTO, COLL_ASYNC_ALG_RING,
        COLL_ASYNC_ALG_RECURSIVE_DOUBLING, COLL_ASYNC_ALG_RABENSEIFNER};
    static const enum coll_async_alg bcast_algs[] = {
        COLL_ASYNC_ALG_AUTO, COLL_ASYNC_ALG_BINOMIAL,
        COLL_ASYNC_ALG_SCATTER_ALLGATHER};
    static const enum coll_async_alg allgather_algs[] = {
        COLL_ASYNC_ALG_AUTO, COLL_ASYNC_ALG_RING,
        COLL_ASYNC_ALG_RECURSIVE_DOUBLING};
    int n = g->leaders.size, roots[2] = {0, n - 1};
    struct coll_async_internode x;

    for (size_t a = 0; a < sizeof(allreduce_algs) / sizeof(allreduce_algs[0]); ++a) {
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); ++c) {
            check_allreduce(g, allreduce_algs[a], counts[c]);
        }
    }
    for (int r = 0; r < 2; ++r) {
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); ++c) {
            check_reduce(g, roots[r], counts[c]);
            for (size_t a = 0; a < sizeof(bcast_algs) / sizeof(bcast_algs[0]); ++a) {
                check_bcast(g, bcast_algs[a], roots[r], counts[c] * 4 + 3);
            }
        }
        check_rooted(g, false, roots[r], 5);
        check_rooted(g, false, roots[r], 200 * 1000);
        check_rooted(g, true, roots[r], 5);
        check_rooted(g, true, roots[r], 200 * 1000);
    }
    for (size_t a = 0; a < sizeof(allgather_algs) / sizeof(allgather_algs[0]); ++a) {
        check_allgather(g, allgather_algs[a], 5);
        check_allgather(g, allgather_algs[a], 200 * 1000);
    }
    check_alltoall(g, 3);
    check_alltoall(g, 30 * 1000);
    check_reduce_scatter(g, 3);
    check_reduce_scatter(g, 50 * 1000);
    new_collective(g, &x, COLL_ASYNC_ALG_AUTO);
    CHECK(0 == run(g->net, &x, COLL_ASYNC_FAMILY_BARRIER));
}

static void all_collectives(int rank, void *context)
{
    int nranks = *(const int *) context;
    struct group g = {.leaders = {.size = nranks, .rank = rank}};

    g.net = open_group(rank, nranks, g.peer);
    g.leaders.net = g.net;
    g.leaders.peer = g.peer;
    every_kind(&g);
    /* The same with the ring profiled in reverse order. */
    for (int position = 0; position < nranks; ++position) {
        g.reversed[position] = nranks - 1 - position;
    }
    g.leaders.ring = g.reversed;
    every_kind(&g);
    barrier(nranks); /* nobody closes while another still reads */
    coll_async_net_destroy(g.net);
}

static void run_group(int nranks, void (*body)(int, void *))
{
    pid_t pids[MAX_RANKS];
    int status[MAX_RANKS];

    memset(shared, 0, sizeof(*shared));
    for (int rank = 0; rank < nranks; ++rank) {
        pids[rank] = spawn_rank(rank, body, &nranks);
    }
    wait_ranks(nranks, pids, status);
    assert_ranks_exited_cleanly(nranks, pids, status);
}

/* bench/simulate prices what a real run moves: per rank, the transfers and bytes
 * the mapper was asked for (coll_async_net_counts) are those the simulator counts
 * on its own plans of the same case. Messages of zero bytes count as messages in
 * both. */
static const struct sim_case priced_cases[] = {
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 0, 4000, 0},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 0, 40000, 0},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RABENSEIFNER, 0, 40000, 0},
    {COLL_ASYNC_FAMILY_REDUCE, COLL_ASYNC_ALG_BINOMIAL, 0, 4000, 1},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_BINOMIAL, 0, 10000, 1},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_SCATTER_ALLGATHER, 0, 100000, 0},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RING, 0, 1000, 0},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 0, 1000, 0},
    {COLL_ASYNC_FAMILY_BARRIER, COLL_ASYNC_ALG_DISSEMINATION, 0, 0, 0},
};

static void run_priced(struct group *g, const struct sim_case *c)
{
    static const struct sim_params params = {.latency = 1e-6, .overhead = 1e-7, .gap = 1e-10};
    int n = g->leaders.size, me = g->leaders.rank;
    size_t offset[MAX_RANKS], block[MAX_RANKS];
    struct sim_rank_counts priced[MAX_RANKS];
    struct coll_async_net_counts before = coll_async_net_counts(g->net), after;
    struct sim_result result;
    struct sim_case forced = *c;
    struct coll_async_internode x;
    uint8_t *buf = calloc(c->bytes * (size_t) n + 1, 1);

    CHECK(NULL != buf);
    forced.nodes = n;
    forced.root = c->root % n;
    for (int r = 0; r < n; ++r) {
        offset[r] = (size_t) r * c->bytes;
        block[r] = c->bytes;
    }
    new_collective(g, &x, c->alg);
    x.buf = buf;
    x.count = c->bytes / sizeof(int32_t);
    x.bytes = COLL_ASYNC_FAMILY_BCAST == c->family ? c->bytes : 0;
    x.root = forced.root;
    x.block_offset = offset;
    x.block_bytes = block;
    CHECK(0 == run(g->net, &x, c->family));
    after = coll_async_net_counts(g->net);
    CHECK(0 == sim_plans(&forced, &params, &result, priced));
    CHECK((uint64_t) priced[me].sends == after.sends - before.sends);
    CHECK((uint64_t) priced[me].receives == after.receives - before.receives);
    CHECK(priced[me].sent == after.bytes_sent - before.bytes_sent);
    CHECK(priced[me].received == after.bytes_received - before.bytes_received);
    free(buf);
}

static void priced_runs(int rank, void *context)
{
    int nranks = *(const int *) context;
    struct group g = {.leaders = {.size = nranks, .rank = rank}};

    g.net = open_group(rank, nranks, g.peer);
    g.leaders.net = g.net;
    g.leaders.peer = g.peer;
    for (size_t i = 0; i < sizeof(priced_cases) / sizeof(priced_cases[0]); ++i) {
        run_priced(&g, &priced_cases[i]);
    }
    barrier(nranks);
    coll_async_net_destroy(g.net);
}

static void test_runs_move_what_the_simulator_prices(void **state)
{
    (void) state;
    for (int nranks = 2; nranks <= 5; ++nranks) {
        run_group(nranks, priced_runs);
    }
}

static void test_group_of_1(void **state) { (void) state; run_group(1, all_collectives); }
static void test_group_of_2(void **state) { (void) state; run_group(2, all_collectives); }
static void test_group_of_3(void **state) { (void) state; run_group(3, all_collectives); }
static void test_group_of_4(void **state) { (void) state; run_group(4, all_collectives); }
static void test_group_of_5(void **state) { (void) state; run_group(5, all_collectives); }

/* Two allreduces in flight on one group, progressed side by side. */
static void two_in_flight(int rank, void *context)
{
    int nranks = *(const int *) context;
    struct group g = {.leaders = {.size = nranks, .rank = rank}};
    static int32_t a[BIG_COUNT], b[BIG_COUNT];
    struct coll_async_internode x, y;
    int rx, ry;

    g.net = open_group(rank, nranks, g.peer);
    g.leaders.net = g.net;
    g.leaders.peer = g.peer;
    for (size_t i = 0; i < BIG_COUNT; ++i) {
        a[i] = input(rank, i);
        b[i] = -input(rank, i);
    }
    new_collective(&g, &x, COLL_ASYNC_ALG_RING);
    new_collective(&g, &y, COLL_ASYNC_ALG_RECURSIVE_DOUBLING);
    x.buf = a;
    y.buf = b;
    x.count = y.count = BIG_COUNT;
    CHECK(0 == coll_async_internode_start(&x, COLL_ASYNC_FAMILY_ALLREDUCE));
    CHECK(0 == coll_async_internode_start(&y, COLL_ASYNC_FAMILY_ALLREDUCE));
    do {
        coll_async_net_progress(g.net);
        rx = coll_async_internode_progress(&x);
        ry = coll_async_internode_progress(&y);
    } while (COLL_ASYNC_INTERNODE_AGAIN == rx || COLL_ASYNC_INTERNODE_AGAIN == ry);
    CHECK(0 == rx && 0 == ry);
    for (size_t i = 0; i < BIG_COUNT; ++i) {
        CHECK(reference(nranks, i) == a[i] && -reference(nranks, i) == b[i]);
    }
    coll_async_internode_fini(&x);
    coll_async_internode_fini(&y);
    barrier(nranks);
    coll_async_net_destroy(g.net);
}

static void test_two_in_flight(void **state)
{
    (void) state;
    run_group(3, two_in_flight);
}

/* Rank 1 dies once the allreduce has begun; the others end with an error that
 * names it, within the alarm of forked_ranks.h. */
static void peer_killed(int rank, void *context)
{
    int nranks = *(const int *) context;
    struct group g = {.leaders = {.size = nranks, .rank = rank}};
    static int32_t buf[BIG_COUNT];
    struct coll_async_internode x;
    int rc;

    g.net = open_group(rank, nranks, g.peer);
    g.leaders.net = g.net;
    g.leaders.peer = g.peer;
    new_collective(&g, &x, COLL_ASYNC_ALG_RING);
    x.buf = buf;
    x.count = BIG_COUNT;
    CHECK(0 == coll_async_internode_start(&x, COLL_ASYNC_FAMILY_ALLREDUCE));
    if (1 == rank) {
        coll_async_net_progress(g.net);
        _exit(0); /* the sockets close with the process */
    }
    while (COLL_ASYNC_INTERNODE_AGAIN == (rc = coll_async_internode_progress(&x))) {
        coll_async_net_progress(g.net);
    }
    CHECK(rc < 0);
    CHECK(NULL != x.error && NULL != strstr(x.error, "peer 1"));
    /* A survivor that closed now would fail the other one's transfers to it, and
     * that error would name this survivor instead of the dead peer. */
    barrier(nranks - 1);
    coll_async_internode_fini(&x);
    coll_async_net_destroy(g.net);
}

static void test_peer_killed(void **state)
{
    (void) state;
    run_group(3, peer_killed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_of_1), cmocka_unit_test(test_group_of_2),
        cmocka_unit_test(test_group_of_3), cmocka_unit_test(test_group_of_4),
        cmocka_unit_test(test_group_of_5), cmocka_unit_test(test_two_in_flight),
        cmocka_unit_test(test_peer_killed),
        cmocka_unit_test(test_runs_move_what_the_simulator_prices),
    };

    shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                  0);
    if (MAP_FAILED == shared) {
        return 1;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
