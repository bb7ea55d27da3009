/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of bench/simulate_model.c: that the simulator prices the plans the
 * component really builds. At 2 to 8 leaders, every family and algorithm, the
 * rounds, messages and bytes the simulator counts per rank are those the ranks'
 * own round plans carry (what the mapper's counters count when they run), and
 * on cases whose cost is known in closed form the simulator's time is that.
 */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../bench/simulate_model.h"

#define MAX_RANKS 8

static const struct sim_params params = {.latency = 1.0e-6, .overhead = 0.25e-6,
                                         .gap = 0.1e-9, .reduce = 0.3e-9, .ack = 0.5e-6,
                                         .verbs = true};

/* What rank r's own plan carries, counted here apart from the simulator. */
static struct sim_rank_counts plan_counts(const struct sim_case *c, int r, enum coll_async_alg *ran)
{
    static char data[MAX_RANKS * (1 << 20) + 64];
    size_t offset[MAX_RANKS], block[MAX_RANKS];
    struct coll_async_leaders group = {.size = c->nodes, .rank = r};
    struct coll_async_reduction element = {.size = SIM_ELEMENT_BYTES};
    struct sim_rank_counts counts = {0};
    struct coll_async_internode x;

    for (int i = 0; i < c->nodes; ++i) {
        offset[i] = (size_t) i * c->bytes;
        block[i] = c->bytes;
    }
    x = (struct coll_async_internode){.group = &group, .alg = c->alg, .buf = data,
                                      .count = c->bytes / SIM_ELEMENT_BYTES,
                                      .reduction = &element, .bytes = c->bytes, .root = c->root,
                                      .block_offset = offset, .block_bytes = block};
    assert_int_equal(0, coll_async_internode_start(&x, c->family));
    *ran = x.alg;
    for (int i = 0; i < x.round_count; ++i) {
        struct coll_async_internode_round_plan p = coll_async_internode_round_plan(&x, i);

        counts.rounds += 1;
        counts.sends += p.to >= 0;
        counts.receives += p.from >= 0;
        counts.sent += p.to >= 0 ? p.send_bytes : 0;
        counts.received += p.from >= 0 ? p.recv_bytes : 0;
        counts.reduced += p.from >= 0 && p.reduces ? p.recv_bytes : 0;
    }
    coll_async_internode_fini(&x);
    return counts;
}

static void test_counts_match_the_plans(void **state)
{
    static const struct {
        enum coll_async_family family;
        enum coll_async_alg alg;
    } algs[] = {
        {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING},
        {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING},
        {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RABENSEIFNER},
        {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO},
        {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_BINOMIAL},
        {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_SCATTER_ALLGATHER},
        {COLL_ASYNC_FAMILY_REDUCE, COLL_ASYNC_ALG_BINOMIAL},
        {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RING},
        {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RECURSIVE_DOUBLING},
        {COLL_ASYNC_FAMILY_BARRIER, COLL_ASYNC_ALG_DISSEMINATION},
    };
    static const size_t sizes[] = {8, 4100, 1 << 20};
    struct sim_rank_counts counts[MAX_RANKS];

    (void) state;
    for (int n = 2; n <= MAX_RANKS; ++n) {
        for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); ++a) {
            for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
                struct sim_case c = {.family = algs[a].family, .alg = algs[a].alg, .nodes = n,
                                     .bytes = sizes[s], .root = n > 2 ? 2 : 1};
                struct sim_result result;
                uint64_t sent = 0, received = 0;

                assert_int_equal(0, sim_plans(&c, &params, &result, counts));
                assert_null(result.error);
                assert_true(result.time > 0.0);
                for (int r = 0; r < n; ++r) {
                    enum coll_async_alg ran;
                    struct sim_rank_counts own = plan_counts(&c, r, &ran);

                    assert_int_equal(result.ran, ran);
                    assert_int_equal(own.rounds, counts[r].rounds);
                    assert_int_equal(own.sends, counts[r].sends);
                    assert_int_equal(own.receives, counts[r].receives);
                    assert_int_equal(own.sent, counts[r].sent);
                    assert_int_equal(own.received, counts[r].received);
                    assert_int_equal(own.reduced, counts[r].reduced);
                    assert_true(own.rounds <= result.rounds);
                    sent += counts[r].sent;
                    received += counts[r].received;
                }
                assert_int_equal(sent, received);
            }
        }
    }
}

/* Known totals: a binomial bcast delivers the message once to each non-root, a
 * ring allreduce sends 2 (n - 1) / n of the vector from each rank. */
static void test_bytes_known(void **state)
{
    struct sim_rank_counts counts[MAX_RANKS];
    struct sim_result result;
    struct sim_case bcast = {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_BINOMIAL, 7, 1000, 3};
    struct sim_case ring = {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 4, 4096, 0};

    (void) state;
    assert_int_equal(0, sim_plans(&bcast, &params, &result, counts));
    for (int r = 0; r < 7; ++r) {
        assert_int_equal(3 == r ? 0 : 1000, counts[r].received);
    }
    assert_int_equal(0, sim_plans(&ring, &params, &result, counts));
    for (int r = 0; r < 4; ++r) {
        assert_int_equal(2 * 3 * 1024, counts[r].sent);
        assert_int_equal(3 * 1024, counts[r].reduced);
        assert_int_equal(6, counts[r].rounds);
    }
}

/* One message of b bytes from a rank that starts when its peer does. */
static double message(double bytes)
{
    return 2 * params.overhead + params.latency + bytes * params.gap;
}

static void assert_time(double expected, const struct sim_case *c)
{
    struct sim_result result;

    assert_int_equal(0, sim_plans(c, &params, &result, NULL));
    if (result.time < expected * (1 - 1e-9) || result.time > expected * (1 + 1e-9)) {
        fail_msg("family %d alg %d, %d nodes, %zu B: %.6g s, expected %.6g s", (int) c->family,
                 (int) c->alg, c->nodes, c->bytes, result.time, expected);
    }
}

static void test_times_in_closed_form(void **state)
{
    struct sim_case bcast = {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_BINOMIAL, 8, 1 << 20, 0};
    struct sim_case ring = {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 4, 1 << 20, 0};
    struct sim_case doubling = {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING,
                                8, 4096, 0};
    struct sim_case barrier = {COLL_ASYNC_FAMILY_BARRIER, COLL_ASYNC_ALG_DISSEMINATION, 5, 0, 0};
    double block = (1 << 20) / 4.0;

    (void) state;
    /* log2 8 = 3 rounds down the tree, one whole message each. */
    assert_time(3 * message(1 << 20), &bcast);
    /* 2 (n - 1) rounds of one block; the first n - 1 reduce it. */
    assert_time(6 * message(block) + 3 * block * params.reduce, &ring);
    /* 3 exchanges of the whole vector, each reduced. */
    assert_time(3 * (message(4096) + 4096 * params.reduce), &doubling);
    /* ceil(log2 5) = 3 rounds of a 1-byte token. */
    assert_time(3 * message(1), &barrier);
    /* Multicast, one packet to one receiver: its send, its acknowledgement. */
    assert_true(sim_multicast(2, 4096, &params)
                == params.overhead + 4096 * params.gap + params.latency + params.overhead
                       + params.overhead + params.latency + params.ack);
}

/* A fixed cost per call delays every rank's first round, and so the end, by
 * itself: nothing else in the closed forms moves. */
static void test_call_cost(void **state)
{
    static const struct sim_case cases[] = {
        {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_BINOMIAL, 8, 1 << 20, 0},
        {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 4, 1 << 20, 0},
        {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 5, 4096, 0},
        {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RING, 3, 100, 0},
        {COLL_ASYNC_FAMILY_BARRIER, COLL_ASYNC_ALG_DISSEMINATION, 5, 0, 0},
    };
    struct sim_params with_call = params;

    (void) state;
    with_call.call = 7e-6;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        struct sim_result without, with;

        assert_int_equal(0, sim_plans(&cases[i], &params, &without, NULL));
        assert_int_equal(0, sim_plans(&cases[i], &with_call, &with, NULL));
        assert_true(fabs(with.time - (without.time + with_call.call)) < 1e-15);
    }
    /* 2 nodes, ring allreduce: 2 rounds of half the vector; the first reduces. */
    {
        struct sim_case ring = {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 2, 4096, 0};
        struct sim_result result;

        assert_int_equal(0, sim_plans(&ring, &with_call, &result, NULL));
        assert_true(fabs(result.time - (with_call.call + 2 * message(2048) + 2048 * params.reduce))
                    < 1e-15);
    }
    assert_true(fabs(sim_multicast(2, 4096, &with_call) - sim_multicast(2, 4096, &params)
                     - with_call.call) < 1e-15);
}

/* auto as the hierarchy runs it: multicast only for bcast, with verbs, on enough
 * nodes and bytes. */
static void test_auto(void **state)
{
    struct sim_case c = {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_AUTO, SIM_MCAST_MIN_NODES,
                         SIM_MCAST_MIN_BYTES, 0};
    struct sim_params no_verbs = params;

    (void) state;
    no_verbs.verbs = false;
    assert_int_equal(COLL_ASYNC_ALG_MULTICAST, sim_auto(&c, &params));
    assert_int_not_equal(COLL_ASYNC_ALG_MULTICAST, sim_auto(&c, &no_verbs));
    c.nodes = SIM_MCAST_MIN_NODES - 1;
    assert_int_not_equal(COLL_ASYNC_ALG_MULTICAST, sim_auto(&c, &params));
    c.family = COLL_ASYNC_FAMILY_ALLREDUCE;
    c.bytes = 8;
    assert_int_equal(COLL_ASYNC_ALG_RECURSIVE_DOUBLING, sim_auto(&c, &params));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_match_the_plans),
        cmocka_unit_test(test_bytes_known),
        cmocka_unit_test(test_times_in_closed_form),
        cmocka_unit_test(test_call_cost),
        cmocka_unit_test(test_auto),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
