/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of coll_async_internode.c's plans without a network: for every
 * leaders' algorithm at 1 to PLAN_RANKS leaders, in ring order and reversed,
 * each send of every rank's rounds must meet exactly one receive of the same
 * step and length at its peer, and each receive a send. TCP delivers an
 * unmatched send into a staging queue, so test_internode's runs cannot see one;
 * verbs would wait for the receiver's READY for ever.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../ompi/mca/coll/async/coll_async_internode.h"
#include "internode_blocks.h"

/* Plans only: nothing is folded. */
void coll_async_reduce(const struct coll_async_reduction *reduction, void *inout, const void *in,
                       size_t count)
{
    (void) reduction;
    (void) inout;
    (void) in;
    (void) count;
}

static const struct coll_async_reduction int_sum = {.size = sizeof(int32_t)};

#define PLAN_RANKS 9

struct plan_case {
    enum coll_async_family kind;
    enum coll_async_alg alg;
    int root;
    size_t amount; /* elements for reductions, bytes for bcast, base block for allgather */
};

static int matching(const struct coll_async_internode *x, int step, int from, int to,
                    size_t *bytes)
{
    int found = 0;

    for (int i = 0; i < x->round_count; ++i) {
        struct coll_async_internode_round_plan p = coll_async_internode_round_plan(x, i);

        if (p.step == step && (from >= 0 ? p.from == from : p.to == to)) {
            *bytes = from >= 0 ? p.recv_bytes : p.send_bytes;
            ++found;
        }
    }
    return found;
}

static void check_plans_pair_up(int n, const int *ring, const struct plan_case *c)
{
    struct coll_async_leaders groups[PLAN_RANKS];
    struct coll_async_internode xs[PLAN_RANKS];
    size_t offset[PLAN_RANKS], block[PLAN_RANKS], total = 0;
    static char data[4 << 20];

    bool elements = COLL_ASYNC_FAMILY_REDUCE_SCATTER == c->kind; /* blocks of int32_t */

    for (int r = 0; r < n; ++r) {
        offset[r] = total;
        block[r] = elements ? sizeof(int32_t) * block_size(r, c->amount / sizeof(int32_t))
                            : block_size(r, c->amount);
        total += block[r];
    }
    for (int r = 0; r < n; ++r) {
        groups[r] = (struct coll_async_leaders){.size = n, .rank = r, .ring = ring};
        xs[r] = (struct coll_async_internode){
            .group = &groups[r], .alg = c->alg, .buf = data,
            .count = elements ? total / sizeof(int32_t) : c->amount,
            .reduction = &int_sum, .bytes = c->amount, .root = c->root,
            .block_offset = offset, .block_bytes = block};
        assert_int_equal(0, coll_async_internode_start(&xs[r], c->kind));
    }
    for (int r = 0; r < n; ++r) {
        for (int i = 0; i < xs[r].round_count; ++i) {
            struct coll_async_internode_round_plan p = coll_async_internode_round_plan(&xs[r], i);
            size_t bytes = 0;

            if (p.to >= 0) {
                if (1 != matching(&xs[p.to], p.step, r, -1, &bytes) || bytes != p.send_bytes) {
                    fail_msg("kind %d alg %d root %d amount %zu, %d ranks: rank %d sends %zu B "
                             "to %d at step %d, which receives that %d times (%zu B)",
                             (int) c->kind, (int) xs[r].alg, c->root, c->amount, n, r,
                             p.send_bytes, p.to, p.step,
                             matching(&xs[p.to], p.step, r, -1, &bytes), bytes);
                }
            }
            if (p.from >= 0) {
                if (1 != matching(&xs[p.from], p.step, -1, r, &bytes) || bytes != p.recv_bytes) {
                    fail_msg("kind %d alg %d root %d amount %zu, %d ranks: rank %d receives "
                             "from %d at step %d, which sends that %d times",
                             (int) c->kind, (int) xs[r].alg, c->root, c->amount, n, r, p.from,
                             p.step, matching(&xs[p.from], p.step, -1, r, &bytes));
                }
            }
        }
    }
    for (int r = 0; r < n; ++r) {
        coll_async_internode_fini(&xs[r]);
    }
}

static void test_plans_pair_up(void **state)
{
    static const struct {
        enum coll_async_family kind;
        enum coll_async_alg alg;
    } algs[] = {
        {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO},
        {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING},
        {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING},
        {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RABENSEIFNER},
        {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_AUTO},
        {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_BINOMIAL},
        {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_SCATTER_ALLGATHER},
        {COLL_ASYNC_FAMILY_REDUCE, COLL_ASYNC_ALG_BINOMIAL},
        {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_AUTO},
        {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RING},
        {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RECURSIVE_DOUBLING},
        {COLL_ASYNC_FAMILY_BARRIER, COLL_ASYNC_ALG_AUTO},
        {COLL_ASYNC_FAMILY_GATHER, COLL_ASYNC_ALG_BINOMIAL},
        {COLL_ASYNC_FAMILY_SCATTER, COLL_ASYNC_ALG_BINOMIAL},
        {COLL_ASYNC_FAMILY_REDUCE_SCATTER, COLL_ASYNC_ALG_AUTO},
    };
    static const size_t amounts[] = {1, 7, 1000, 300 * 1000 + 3};
    int reversed[PLAN_RANKS];

    (void) state;
    for (int n = 1; n <= PLAN_RANKS; ++n) {
        for (int position = 0; position < n; ++position) {
            reversed[position] = n - 1 - position;
        }
        for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); ++a) {
            for (size_t m = 0; m < sizeof(amounts) / sizeof(amounts[0]); ++m) {
                for (int root = 0; root < n; ++root) {
                    struct plan_case c = {algs[a].kind, algs[a].alg, root, amounts[m]};

                    check_plans_pair_up(n, NULL, &c);
                    check_plans_pair_up(n, reversed, &c);
                }
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plans_pair_up),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
