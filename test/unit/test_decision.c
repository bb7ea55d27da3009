/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of coll_async_decision.c: the table's answers pinned, at a grid of
 * (family, bytes, ranks, nodes), to what the component chose before the decision
 * layer existed. The expected strings were printed by the code of commit d0a0ffe
 * (coll_async_internode.c's choose(), coll_async_allreduce.c's and
 * coll_async_schedule.h's begin functions, coll_async_module.c's has_native()),
 * so a change of any choice shows here.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../ompi/mca/coll/async/coll_async_decision.h"

/* The message sizes of the grid; each expected string has one letter per size. */
static const size_t sizes[] = {0, 1, 8, 511, 512, 4095, 4096, 4097, 16383, 16384, 16385,
                               65535, 65536, 65537, 131071, 131072, 131073, 262143, 262144,
                               262145, 1048576, 16777216};
#define NUM_SIZES (sizeof(sizes) / sizeof(sizes[0]))
#define multicast_from coll_async_decision_multicast_from

/* Between nodes: family, its parameter, element size (reductions: count = bytes /
 * element), nodes, and per size R ring, D recursive doubling, A Rabenseifner,
 * B binomial, S scatter-allgather, I dissemination. */
static const struct {
    enum coll_async_family family;
    enum coll_async_alg forced;
    size_t element;
    int nodes;
    const char *expected;
} between[] = {
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 4, 2, "DDDDDDDDDDAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 1, 2, "DDDDDDDDDDAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 4, 3, "DDDDDDDDDDRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 1, 3, "DDDDDDDDDDRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 4, 4, "DDDDDDDDDDAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 1, 4, "DDDDDDDDDDAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 4, 5, "DDDDDDDDDDRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 1, 5, "DDDDDDDDDDRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 4, 6, "DDDDDDDDDDARRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 1, 6, "DDDDDDDDDDARRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 4, 8, "DDDDDDDDDDAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 1, 8, "DDDDDDDDDDAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 4, 16, "DDDDDDDDDDAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 1, 16, "DDDDDDDDDDAAAAAAAAAAAA"},
    /* At scale (bench/simulate): ring on an uneven group only where its 2 (n - 1)
     * latencies pay, from (n - 2 - log2 n) x 10 KiB: 920 KiB at 100 nodes, 9.6 MiB at 1000. */
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 4, 100, "DDDDDDDDDDAAAAAAAAAARR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 4, 1000, "DDDDDDDDDDAAAAAAAAAAAR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 4, 4096, "DDDDDDDDDDAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 4, 2, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 1, 2, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 4, 3, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 1, 3, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 4, 4, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 1, 4, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 4, 5, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 1, 5, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 4, 6, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 1, 6, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 4, 8, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 1, 8, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 4, 16, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 1, 16, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 4, 2, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 1, 2, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 4, 3, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 1, 3, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 4, 4, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 1, 4, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 4, 5, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 1, 5, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 4, 6, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 1, 6, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 4, 8, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 1, 8, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 4, 16, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 1, 16, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RABENSEIFNER, 4, 2, "AAAAAAAAAAAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RABENSEIFNER, 1, 2, "AAAAAAAAAAAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RABENSEIFNER, 4, 3, "AAAAAAAAAAAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RABENSEIFNER, 1, 3, "AAAAAAAAAAAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RABENSEIFNER, 4, 4, "AAAAAAAAAAAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RABENSEIFNER, 1, 4, "AAAAAAAAAAAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RABENSEIFNER, 4, 5, "AAAAAAAAAAAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RABENSEIFNER, 1, 5, "AAAAAAAAAAAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RABENSEIFNER, 4, 6, "AAAAAAAAAAAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RABENSEIFNER, 1, 6, "AAAAAAAAAAAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RABENSEIFNER, 4, 8, "AAAAAAAAAAAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RABENSEIFNER, 1, 8, "AAAAAAAAAAAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RABENSEIFNER, 4, 16, "AAAAAAAAAAAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RABENSEIFNER, 1, 16, "AAAAAAAAAAAAAAAAAAAAAA"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_AUTO, 4, 2, "BBBBBBBBBBBBBBBBBBBBBB"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_AUTO, 4, 3, "BBBBBBBBBBBBBBBBSSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_AUTO, 4, 4, "BBBBBBBBBBBBBBBBSSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_AUTO, 4, 5, "BBBBBBBBBBBBBBBBSSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_AUTO, 4, 6, "BBBBBBBBBBBBBBBBSSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_AUTO, 4, 8, "BBBBBBBBBBBBBBBBSSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_AUTO, 4, 16, "BBBBBBBBBBBBBBBBSSSSSS"},
    /* At scale: scatter-allgather's ring of n - 1 latencies only from
     * (n - 1) / (ceil(log2 n) - 2) x 10 KiB: 157 KiB at 64 nodes, 730 at 512, 4 MiB
     * at 4096. */
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_AUTO, 4, 64, "BBBBBBBBBBBBBBBBBSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_AUTO, 4, 512, "BBBBBBBBBBBBBBBBBBBBSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_AUTO, 4, 4096, "BBBBBBBBBBBBBBBBBBBBBS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_BINOMIAL, 4, 2, "BBBBBBBBBBBBBBBBBBBBBB"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_BINOMIAL, 4, 3, "BBBBBBBBBBBBBBBBBBBBBB"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_BINOMIAL, 4, 4, "BBBBBBBBBBBBBBBBBBBBBB"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_BINOMIAL, 4, 5, "BBBBBBBBBBBBBBBBBBBBBB"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_BINOMIAL, 4, 6, "BBBBBBBBBBBBBBBBBBBBBB"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_BINOMIAL, 4, 8, "BBBBBBBBBBBBBBBBBBBBBB"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_BINOMIAL, 4, 16, "BBBBBBBBBBBBBBBBBBBBBB"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_SCATTER_ALLGATHER, 4, 2, "SSSSSSSSSSSSSSSSSSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_SCATTER_ALLGATHER, 4, 3, "SSSSSSSSSSSSSSSSSSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_SCATTER_ALLGATHER, 4, 4, "SSSSSSSSSSSSSSSSSSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_SCATTER_ALLGATHER, 4, 5, "SSSSSSSSSSSSSSSSSSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_SCATTER_ALLGATHER, 4, 6, "SSSSSSSSSSSSSSSSSSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_SCATTER_ALLGATHER, 4, 8, "SSSSSSSSSSSSSSSSSSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_SCATTER_ALLGATHER, 4, 16, "SSSSSSSSSSSSSSSSSSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_MULTICAST, 4, 2, "BBBBBBBBBBBBBBBBBBBBBB"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_MULTICAST, 4, 3, "BBBBBBBBBBBBBBBBSSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_MULTICAST, 4, 4, "BBBBBBBBBBBBBBBBSSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_MULTICAST, 4, 5, "BBBBBBBBBBBBBBBBSSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_MULTICAST, 4, 6, "BBBBBBBBBBBBBBBBSSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_MULTICAST, 4, 8, "BBBBBBBBBBBBBBBBSSSSSS"},
    {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_MULTICAST, 4, 16, "BBBBBBBBBBBBBBBBSSSSSS"},
    {COLL_ASYNC_FAMILY_REDUCE, COLL_ASYNC_ALG_AUTO, 4, 2, "BBBBBBBBBBBBBBBBBBBBBB"},
    {COLL_ASYNC_FAMILY_REDUCE, COLL_ASYNC_ALG_AUTO, 4, 3, "BBBBBBBBBBBBBBBBBBBBBB"},
    {COLL_ASYNC_FAMILY_REDUCE, COLL_ASYNC_ALG_AUTO, 4, 4, "BBBBBBBBBBBBBBBBBBBBBB"},
    {COLL_ASYNC_FAMILY_REDUCE, COLL_ASYNC_ALG_AUTO, 4, 5, "BBBBBBBBBBBBBBBBBBBBBB"},
    {COLL_ASYNC_FAMILY_REDUCE, COLL_ASYNC_ALG_AUTO, 4, 6, "BBBBBBBBBBBBBBBBBBBBBB"},
    {COLL_ASYNC_FAMILY_REDUCE, COLL_ASYNC_ALG_AUTO, 4, 8, "BBBBBBBBBBBBBBBBBBBBBB"},
    {COLL_ASYNC_FAMILY_REDUCE, COLL_ASYNC_ALG_AUTO, 4, 16, "BBBBBBBBBBBBBBBBBBBBBB"},
    {COLL_ASYNC_FAMILY_BARRIER, COLL_ASYNC_ALG_AUTO, 4, 2, "IIIIIIIIIIIIIIIIIIIIII"},
    {COLL_ASYNC_FAMILY_BARRIER, COLL_ASYNC_ALG_AUTO, 4, 3, "IIIIIIIIIIIIIIIIIIIIII"},
    {COLL_ASYNC_FAMILY_BARRIER, COLL_ASYNC_ALG_AUTO, 4, 4, "IIIIIIIIIIIIIIIIIIIIII"},
    {COLL_ASYNC_FAMILY_BARRIER, COLL_ASYNC_ALG_AUTO, 4, 5, "IIIIIIIIIIIIIIIIIIIIII"},
    {COLL_ASYNC_FAMILY_BARRIER, COLL_ASYNC_ALG_AUTO, 4, 6, "IIIIIIIIIIIIIIIIIIIIII"},
    {COLL_ASYNC_FAMILY_BARRIER, COLL_ASYNC_ALG_AUTO, 4, 8, "IIIIIIIIIIIIIIIIIIIIII"},
    {COLL_ASYNC_FAMILY_BARRIER, COLL_ASYNC_ALG_AUTO, 4, 16, "IIIIIIIIIIIIIIIIIIIIII"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_AUTO, 4, 2, "DDDDDDDDDDDDDRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_AUTO, 4, 3, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_AUTO, 4, 4, "DDDDDDDDDDDDDRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_AUTO, 4, 5, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_AUTO, 4, 6, "RRRRRRRRRRRRRRRRRRRRRR"},
    /* Up to 64 KiB, or 16 KiB per node (bench/simulate: ring's n - 1 latencies). */
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_AUTO, 4, 8, "DDDDDDDDDDDDDDDDRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_AUTO, 4, 16, "DDDDDDDDDDDDDDDDDDDRRR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_AUTO, 4, 512, "DDDDDDDDDDDDDDDDDDDDDR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_AUTO, 4, 4096, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_AUTO, 4, 1000, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RING, 4, 2, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RING, 4, 3, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RING, 4, 4, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RING, 4, 5, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RING, 4, 6, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RING, 4, 8, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RING, 4, 16, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 4, 2, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 4, 3, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 4, 4, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 4, 5, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 4, 6, "RRRRRRRRRRRRRRRRRRRRRR"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 4, 8, "DDDDDDDDDDDDDDDDDDDDDD"},
    {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 4, 16, "DDDDDDDDDDDDDDDDDDDDDD"},
};

static char between_letter(enum coll_async_alg alg)
{
    switch (alg) {
    case COLL_ASYNC_ALG_RING: return 'R';
    case COLL_ASYNC_ALG_RECURSIVE_DOUBLING: return 'D';
    case COLL_ASYNC_ALG_RABENSEIFNER: return 'A';
    case COLL_ASYNC_ALG_BINOMIAL: return 'B';
    case COLL_ASYNC_ALG_SCATTER_ALLGATHER: return 'S';
    case COLL_ASYNC_ALG_DISSEMINATION: return 'I';
    default: return '?';
    }
}

static void test_between_nodes(void **state)
{
    (void) state;
    for (size_t row = 0; row < sizeof(between) / sizeof(between[0]); ++row) {
        char got[NUM_SIZES + 1] = "";

        for (size_t i = 0; i < NUM_SIZES; ++i) {
            got[i] = between_letter(coll_async_decision_between(
                between[row].family, between[row].forced, sizes[i],
                sizes[i] / between[row].element, between[row].nodes));
        }
        if (0 != strcmp(got, between[row].expected)) {
            print_error("row %zu (family %d, %s, %d nodes): %s, expected %s\n", row,
                        (int) between[row].family, coll_async_alg_names[between[row].forced],
                        between[row].nodes, got, between[row].expected);
        }
        assert_string_equal(got, between[row].expected);
    }
}

/* Inside a node, reduce mode auto: family, ranks on the node, root (-1: none),
 * single copy, slot size, and per size e/r/l/a the small modes each, root, lock,
 * atomic, c single copy, s staged, k rooted chunks. */
static const struct {
    enum coll_async_family family;
    int nranks, root;
    int single_copy;
    size_t slot;
    const char *expected;
} shm[] = {
    {COLL_ASYNC_FAMILY_ALLREDUCE, 2, -1, 0, 262144, "eeeerrrsssssssssssssss"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, 2, -1, 0, 4096, "eeeerrrsssssssssssssss"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, 2, -1, 1, 262144, "eeeerrrssssssssssssccc"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, 2, -1, 1, 4096, "eeeerrrccccccccccccccc"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, 3, -1, 0, 262144, "eeeeeeesssssssssssssss"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, 3, -1, 0, 4096, "eeeeeeesssssssssssssss"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, 3, -1, 1, 262144, "eeeeeeessssssssssssccc"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, 3, -1, 1, 4096, "eeeeeeeccccccccccccccc"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, 4, -1, 0, 262144, "eeeeeeesssssssssssssss"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, 4, -1, 0, 4096, "eeeeeeesssssssssssssss"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, 4, -1, 1, 262144, "eeeeeeessssssssssssccc"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, 4, -1, 1, 4096, "eeeeeeeccccccccccccccc"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, 8, -1, 0, 262144, "eeeeeeesssssssssssssss"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, 8, -1, 0, 4096, "eeeeeeesssssssssssssss"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, 8, -1, 1, 262144, "eeeeeeessssssssssssccc"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, 8, -1, 1, 4096, "eeeeeeeccccccccccccccc"},
    {COLL_ASYNC_FAMILY_BCAST, 2, 0, 0, 262144, "ssssssssssssssssssssss"},
    {COLL_ASYNC_FAMILY_BCAST, 2, 0, 0, 4096, "ssssssssssssssssssssss"},
    {COLL_ASYNC_FAMILY_BCAST, 2, 1, 0, 262144, "ssssssssssssssssssssss"},
    {COLL_ASYNC_FAMILY_BCAST, 2, 1, 0, 4096, "ssssssssssssssssssssss"},
    {COLL_ASYNC_FAMILY_BCAST, 2, 0, 1, 262144, "sssssssssssssssssssccc"},
    {COLL_ASYNC_FAMILY_BCAST, 2, 0, 1, 4096, "sssssssccccccccccccccc"},
    {COLL_ASYNC_FAMILY_BCAST, 2, 1, 1, 262144, "sssssssssssssssssssccc"},
    {COLL_ASYNC_FAMILY_BCAST, 2, 1, 1, 4096, "sssssssccccccccccccccc"},
    {COLL_ASYNC_FAMILY_BCAST, 3, 0, 0, 262144, "ssssssssssssssssssssss"},
    {COLL_ASYNC_FAMILY_BCAST, 3, 0, 0, 4096, "ssssssssssssssssssssss"},
    {COLL_ASYNC_FAMILY_BCAST, 3, 1, 0, 262144, "ssssssssssssssssssssss"},
    {COLL_ASYNC_FAMILY_BCAST, 3, 1, 0, 4096, "ssssssssssssssssssssss"},
    {COLL_ASYNC_FAMILY_BCAST, 3, 0, 1, 262144, "sssssssssssssssssssccc"},
    {COLL_ASYNC_FAMILY_BCAST, 3, 0, 1, 4096, "sssssssccccccccccccccc"},
    {COLL_ASYNC_FAMILY_BCAST, 3, 1, 1, 262144, "sssssssssssssssssssccc"},
    {COLL_ASYNC_FAMILY_BCAST, 3, 1, 1, 4096, "sssssssccccccccccccccc"},
    {COLL_ASYNC_FAMILY_BCAST, 4, 0, 0, 262144, "ssssssssssssssssssssss"},
    {COLL_ASYNC_FAMILY_BCAST, 4, 0, 0, 4096, "ssssssssssssssssssssss"},
    {COLL_ASYNC_FAMILY_BCAST, 4, 1, 0, 262144, "ssssssssssssssssssssss"},
    {COLL_ASYNC_FAMILY_BCAST, 4, 1, 0, 4096, "ssssssssssssssssssssss"},
    {COLL_ASYNC_FAMILY_BCAST, 4, 0, 1, 262144, "sssssssssssssssssssccc"},
    {COLL_ASYNC_FAMILY_BCAST, 4, 0, 1, 4096, "sssssssccccccccccccccc"},
    {COLL_ASYNC_FAMILY_BCAST, 4, 1, 1, 262144, "sssssssssssssssssssccc"},
    {COLL_ASYNC_FAMILY_BCAST, 4, 1, 1, 4096, "sssssssccccccccccccccc"},
    {COLL_ASYNC_FAMILY_BCAST, 8, 0, 0, 262144, "ssssssssssssssssssssss"},
    {COLL_ASYNC_FAMILY_BCAST, 8, 0, 0, 4096, "ssssssssssssssssssssss"},
    {COLL_ASYNC_FAMILY_BCAST, 8, 1, 0, 262144, "ssssssssssssssssssssss"},
    {COLL_ASYNC_FAMILY_BCAST, 8, 1, 0, 4096, "ssssssssssssssssssssss"},
    {COLL_ASYNC_FAMILY_BCAST, 8, 0, 1, 262144, "sssssssssssssssssssccc"},
    {COLL_ASYNC_FAMILY_BCAST, 8, 0, 1, 4096, "sssssssccccccccccccccc"},
    {COLL_ASYNC_FAMILY_BCAST, 8, 1, 1, 262144, "sssssssssssssssssssccc"},
    {COLL_ASYNC_FAMILY_BCAST, 8, 1, 1, 4096, "sssssssccccccccccccccc"},
    {COLL_ASYNC_FAMILY_REDUCE, 2, 0, 0, 262144, "rrrrrrrkkkkkkkkkkkkkkk"},
    {COLL_ASYNC_FAMILY_REDUCE, 2, 0, 0, 4096, "rrrrrrrkkkkkkkkkkkkkkk"},
    {COLL_ASYNC_FAMILY_REDUCE, 2, 1, 0, 262144, "rrrrrrrkkkkkkkkkkkkkkk"},
    {COLL_ASYNC_FAMILY_REDUCE, 2, 1, 0, 4096, "rrrrrrrkkkkkkkkkkkkkkk"},
    {COLL_ASYNC_FAMILY_REDUCE, 2, 0, 1, 262144, "rrrrrrrkkkkkkkkkkkkccc"},
    {COLL_ASYNC_FAMILY_REDUCE, 2, 0, 1, 4096, "rrrrrrrccccccccccccccc"},
    {COLL_ASYNC_FAMILY_REDUCE, 2, 1, 1, 262144, "rrrrrrrkkkkkkkkkkkkccc"},
    {COLL_ASYNC_FAMILY_REDUCE, 2, 1, 1, 4096, "rrrrrrrccccccccccccccc"},
    {COLL_ASYNC_FAMILY_REDUCE, 3, 0, 0, 262144, "rrrrrrrkkkkkkkkkkkkkkk"},
    {COLL_ASYNC_FAMILY_REDUCE, 3, 0, 0, 4096, "rrrrrrrkkkkkkkkkkkkkkk"},
    {COLL_ASYNC_FAMILY_REDUCE, 3, 1, 0, 262144, "rrrrrrrkkkkkkkkkkkkkkk"},
    {COLL_ASYNC_FAMILY_REDUCE, 3, 1, 0, 4096, "rrrrrrrkkkkkkkkkkkkkkk"},
    {COLL_ASYNC_FAMILY_REDUCE, 3, 0, 1, 262144, "rrrrrrrkkkkkkkkkkkkccc"},
    {COLL_ASYNC_FAMILY_REDUCE, 3, 0, 1, 4096, "rrrrrrrccccccccccccccc"},
    {COLL_ASYNC_FAMILY_REDUCE, 3, 1, 1, 262144, "rrrrrrrkkkkkkkkkkkkccc"},
    {COLL_ASYNC_FAMILY_REDUCE, 3, 1, 1, 4096, "rrrrrrrccccccccccccccc"},
    {COLL_ASYNC_FAMILY_REDUCE, 4, 0, 0, 262144, "rrrrrrrkkkkkkkkkkkkkkk"},
    {COLL_ASYNC_FAMILY_REDUCE, 4, 0, 0, 4096, "rrrrrrrkkkkkkkkkkkkkkk"},
    {COLL_ASYNC_FAMILY_REDUCE, 4, 1, 0, 262144, "rrrrrrrkkkkkkkkkkkkkkk"},
    {COLL_ASYNC_FAMILY_REDUCE, 4, 1, 0, 4096, "rrrrrrrkkkkkkkkkkkkkkk"},
    {COLL_ASYNC_FAMILY_REDUCE, 4, 0, 1, 262144, "rrrrrrrkkkkkkkkkkkkccc"},
    {COLL_ASYNC_FAMILY_REDUCE, 4, 0, 1, 4096, "rrrrrrrccccccccccccccc"},
    {COLL_ASYNC_FAMILY_REDUCE, 4, 1, 1, 262144, "rrrrrrrkkkkkkkkkkkkccc"},
    {COLL_ASYNC_FAMILY_REDUCE, 4, 1, 1, 4096, "rrrrrrrccccccccccccccc"},
    {COLL_ASYNC_FAMILY_REDUCE, 8, 0, 0, 262144, "rrrrrrrkkkkkkkkkkkkkkk"},
    {COLL_ASYNC_FAMILY_REDUCE, 8, 0, 0, 4096, "rrrrrrrkkkkkkkkkkkkkkk"},
    {COLL_ASYNC_FAMILY_REDUCE, 8, 1, 0, 262144, "rrrrrrrkkkkkkkkkkkkkkk"},
    {COLL_ASYNC_FAMILY_REDUCE, 8, 1, 0, 4096, "rrrrrrrkkkkkkkkkkkkkkk"},
    {COLL_ASYNC_FAMILY_REDUCE, 8, 0, 1, 262144, "rrrrrrrkkkkkkkkkkkkccc"},
    {COLL_ASYNC_FAMILY_REDUCE, 8, 0, 1, 4096, "rrrrrrrccccccccccccccc"},
    {COLL_ASYNC_FAMILY_REDUCE, 8, 1, 1, 262144, "rrrrrrrkkkkkkkkkkkkccc"},
    {COLL_ASYNC_FAMILY_REDUCE, 8, 1, 1, 4096, "rrrrrrrccccccccccccccc"},
};

static void test_shared_memory(void **state)
{
    static const char letters[] = "erlacsk";

    (void) state;
    for (size_t row = 0; row < sizeof(shm) / sizeof(shm[0]); ++row) {
        struct coll_async_decision_shm channel = {.nranks = shm[row].nranks,
                                                  .slot_size = shm[row].slot,
                                                  .single_copy = shm[row].single_copy,
                                                  .reduce_mode = COLL_ASYNC_REDUCE_AUTO,
                                                  .small_reduce_bytes = 4096,
                                                  .has_atomic = true};
        char got[NUM_SIZES + 1] = "";

        for (size_t i = 0; i < NUM_SIZES; ++i) {
            got[i] = letters[coll_async_decision_shm(shm[row].family, sizes[i], shm[row].root,
                                                     &channel)];
        }
        if (0 != strcmp(got, shm[row].expected)) {
            print_error("row %zu: %s, expected %s\n", row, got, shm[row].expected);
        }
        assert_string_equal(got, shm[row].expected);
    }
}

static void test_reduce_modes(void **state)
{
    struct coll_async_decision_shm channel = {.nranks = 4, .slot_size = 262144,
                                              .small_reduce_bytes = 4096};

    (void) state;
    channel.reduce_mode = COLL_ASYNC_REDUCE_EACH;
    assert_int_equal(coll_async_decision_shm(COLL_ASYNC_FAMILY_REDUCE, 64, 0, &channel),
                     COLL_ASYNC_SHM_SMALL_EACH);
    channel.reduce_mode = COLL_ASYNC_REDUCE_LOCK;
    assert_int_equal(coll_async_decision_shm(COLL_ASYNC_FAMILY_ALLREDUCE, 64, -1, &channel),
                     COLL_ASYNC_SHM_SMALL_LOCK);
    channel.reduce_mode = COLL_ASYNC_REDUCE_ATOMIC;
    assert_int_equal(coll_async_decision_shm(COLL_ASYNC_FAMILY_ALLREDUCE, 64, -1, &channel),
                     COLL_ASYNC_SHM_SMALL_LOCK); /* no atomic kernel */
    channel.has_atomic = true;
    assert_int_equal(coll_async_decision_shm(COLL_ASYNC_FAMILY_ALLREDUCE, 64, -1, &channel),
                     COLL_ASYNC_SHM_SMALL_ATOMIC);
    /* Past small_reduce_bytes the mode no longer matters. */
    assert_int_equal(coll_async_decision_shm(COLL_ASYNC_FAMILY_ALLREDUCE, 8192, -1, &channel),
                     COLL_ASYNC_SHM_STAGED);
    assert_int_equal(coll_async_decision_shm(COLL_ASYNC_FAMILY_BARRIER, 0, -1, &channel),
                     COLL_ASYNC_SHM_FLAGS);
    /* reduce streams from stream_bytes up to 64 KiB only. */
    assert_false(coll_async_decision_reduce_streams(16383, 16384));
    assert_true(coll_async_decision_reduce_streams(16384, 16384));
    assert_true(coll_async_decision_reduce_streams(65536, 16384));
    assert_false(coll_async_decision_reduce_streams(65537, 16384));
    assert_false(coll_async_decision_reduce_streams(65536, 0));
}

/* Native or delegated: per family, for its parameter auto then delegate, nodes 1
 * to 3, ranks per node 1 to 3: n native, d delegated (a node's channel open).
 * Every family runs natively across nodes too (hierarchically or over the
 * mapper); before the exchange over the mapper, only the five hierarchical ones
 * did ("nnnddd..." for the others). */
static const struct {
    enum coll_async_family family;
    const char *expected;
} paths[] = {
    {COLL_ASYNC_FAMILY_ALLGATHER, "nnnnnnnnnddddddddd"},
    {COLL_ASYNC_FAMILY_ALLGATHERV, "nnnnnnnnnddddddddd"},
    {COLL_ASYNC_FAMILY_ALLREDUCE, "nnnnnnnnnddddddddd"},
    {COLL_ASYNC_FAMILY_ALLTOALL, "nnnnnnnnnddddddddd"},
    {COLL_ASYNC_FAMILY_ALLTOALLV, "nnnnnnnnnddddddddd"},
    {COLL_ASYNC_FAMILY_ALLTOALLW, "nnnnnnnnnddddddddd"},
    {COLL_ASYNC_FAMILY_BARRIER, "nnnnnnnnnddddddddd"},
    {COLL_ASYNC_FAMILY_BCAST, "nnnnnnnnnddddddddd"},
    {COLL_ASYNC_FAMILY_EXSCAN, "nnnnnnnnnddddddddd"},
    {COLL_ASYNC_FAMILY_GATHER, "nnnnnnnnnddddddddd"},
    {COLL_ASYNC_FAMILY_GATHERV, "nnnnnnnnnddddddddd"},
    {COLL_ASYNC_FAMILY_REDUCE, "nnnnnnnnnddddddddd"},
    {COLL_ASYNC_FAMILY_REDUCE_SCATTER_BLOCK, "nnnnnnnnnddddddddd"},
    {COLL_ASYNC_FAMILY_REDUCE_SCATTER, "nnnnnnnnnddddddddd"},
    {COLL_ASYNC_FAMILY_SCAN, "nnnnnnnnnddddddddd"},
    {COLL_ASYNC_FAMILY_SCATTER, "nnnnnnnnnddddddddd"},
    {COLL_ASYNC_FAMILY_SCATTERV, "nnnnnnnnnddddddddd"},
};

static void test_native_or_delegated(void **state)
{
    (void) state;
    for (size_t row = 0; row < sizeof(paths) / sizeof(paths[0]); ++row) {
        char got[19] = "";
        int i = 0;

        for (int delegate = 0; delegate < 2; ++delegate) {
            for (int nodes = 1; nodes <= 3; ++nodes) {
                for (int ranks = 1; ranks <= 3; ++ranks) {
                    struct coll_async_decision_comm comm = {
                        .size = nodes * ranks,
                        .has_channel = 1 == nodes && ranks > 1,
                        .spans_nodes = nodes > 1};

                    got[i++] = coll_async_decision_native(
                                   paths[row].family,
                                   delegate ? COLL_ASYNC_ALG_DELEGATE : COLL_ASYNC_ALG_AUTO, &comm)
                                   ? 'n' : 'd';
                }
            }
        }
        assert_string_equal(got, paths[row].expected);
    }
}

static void test_wanted(void **state)
{
    enum coll_async_alg algs[COLL_ASYNC_NUM_FAMILIES];

    (void) state;
    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES; ++family) {
        algs[family] = COLL_ASYNC_ALG_DELEGATE;
    }
    assert_false(coll_async_decision_wanted(algs));
    algs[COLL_ASYNC_FAMILY_ALLTOALL] = COLL_ASYNC_ALG_AUTO;
    assert_true(coll_async_decision_wanted(algs));
}

/* A schedule named in the parameter runs inside the node at every size where the
 * channel can run it (single_copy: CMA), else the table chooses; between nodes
 * the leaders' algorithm stays AUTO's. */
static void test_forced_in_node(void **state)
{
    static const char letters[] = "erlacsk";
    static const struct {
        enum coll_async_family family;
        enum coll_async_alg forced;
        int root;
        bool single_copy;
        const char *expected;
    } forced[] = {
        {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_SINGLE_COPY, -1, true,
         "cccccccccccccccccccccc"},
        {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_STAGED, -1, true, "ssssssssssssssssssssss"},
        {COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_STAGED, -1, false, "ssssssssssssssssssssss"},
        {COLL_ASYNC_FAMILY_REDUCE, COLL_ASYNC_ALG_SINGLE_COPY, 1, true, "cccccccccccccccccccccc"},
        {COLL_ASYNC_FAMILY_REDUCE, COLL_ASYNC_ALG_ROOTED_CHUNKS, 1, true, "kkkkkkkkkkkkkkkkkkkkkk"},
        {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_SINGLE_COPY, 0, true, "cccccccccccccccccccccc"},
        {COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_STAGED, 0, true, "ssssssssssssssssssssss"},
        {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_SINGLE_COPY, -1, true,
         "cccccccccccccccccccccc"},
        {COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_STAGED, -1, true, "ssssssssssssssssssssss"},
    };

    (void) state;
    for (size_t row = 0; row < sizeof(forced) / sizeof(forced[0]); ++row) {
        struct coll_async_decision_shm channel = {.nranks = 4, .slot_size = 262144,
                                                  .single_copy = forced[row].single_copy,
                                                  .small_reduce_bytes = 4096,
                                                  .forced = forced[row].forced};
        char got[NUM_SIZES + 1] = "";

        for (size_t i = 0; i < NUM_SIZES; ++i) {
            got[i] = letters[coll_async_decision_shm(forced[row].family, sizes[i],
                                                     forced[row].root, &channel)];
        }
        if (0 != strcmp(got, forced[row].expected)) {
            print_error("row %zu: %s, expected %s\n", row, got, forced[row].expected);
        }
        assert_string_equal(got, forced[row].expected);
        assert_false(coll_async_decision_shm_fallback(forced[row].family, forced[row].forced,
                                                      forced[row].single_copy));
    }

    /* single_copy without CMA, or a schedule the family has not: as AUTO. */
    for (size_t i = 0; i < NUM_SIZES; ++i) {
        struct coll_async_decision_shm with = {.nranks = 4, .slot_size = 262144,
                                               .small_reduce_bytes = 4096,
                                               .forced = COLL_ASYNC_ALG_SINGLE_COPY};
        struct coll_async_decision_shm without = with;

        without.forced = COLL_ASYNC_ALG_AUTO;
        assert_int_equal(coll_async_decision_shm(COLL_ASYNC_FAMILY_ALLREDUCE, sizes[i], -1, &with),
                         coll_async_decision_shm(COLL_ASYNC_FAMILY_ALLREDUCE, sizes[i], -1,
                                                 &without));
        with.forced = COLL_ASYNC_ALG_ROOTED_CHUNKS;
        assert_int_equal(coll_async_decision_shm(COLL_ASYNC_FAMILY_ALLREDUCE, sizes[i], -1, &with),
                         coll_async_decision_shm(COLL_ASYNC_FAMILY_ALLREDUCE, sizes[i], -1,
                                                 &without));
        with.forced = COLL_ASYNC_ALG_STAGED;
        assert_int_equal(coll_async_decision_shm(COLL_ASYNC_FAMILY_BARRIER, sizes[i], -1, &with),
                         COLL_ASYNC_SHM_FLAGS);
    }
    assert_true(coll_async_decision_shm_fallback(COLL_ASYNC_FAMILY_BCAST,
                                                 COLL_ASYNC_ALG_SINGLE_COPY, false));
    assert_false(coll_async_decision_shm_fallback(COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_AUTO,
                                                  false));
    assert_false(coll_async_decision_shm_fallback(COLL_ASYNC_FAMILY_BCAST,
                                                  COLL_ASYNC_ALG_BINOMIAL, false));
    assert_false(coll_async_decision_accepts(COLL_ASYNC_FAMILY_REDUCE, COLL_ASYNC_ALG_STAGED));
    assert_false(coll_async_decision_accepts(COLL_ASYNC_FAMILY_ALLREDUCE,
                                             COLL_ASYNC_ALG_ROOTED_CHUNKS));
    assert_false(coll_async_decision_accepts(COLL_ASYNC_FAMILY_BARRIER, COLL_ASYNC_ALG_STAGED));
    assert_false(coll_async_decision_accepts(COLL_ASYNC_FAMILY_ALLTOALL,
                                             COLL_ASYNC_ALG_SINGLE_COPY));

    /* Between nodes an in-node name is AUTO: no fallback, AUTO's algorithms. */
    for (int alg = COLL_ASYNC_ALG_SINGLE_COPY; alg < COLL_ASYNC_NUM_ALGS; ++alg) {
        enum coll_async_alg instead;

        assert_false(coll_async_decision_between_nodes(alg));
        assert_true(coll_async_decision_in_node(alg));
        assert_false(coll_async_decision_fallback(COLL_ASYNC_FAMILY_ALLREDUCE, alg, 1, &instead));
        for (int n = 2; n <= 9; ++n) {
            for (size_t i = 0; i < NUM_SIZES; ++i) {
                assert_int_equal(coll_async_decision_between(COLL_ASYNC_FAMILY_ALLREDUCE, alg,
                                                             sizes[i], sizes[i] / 8, n),
                                 coll_async_decision_between(COLL_ASYNC_FAMILY_ALLREDUCE,
                                                             COLL_ASYNC_ALG_AUTO, sizes[i],
                                                             sizes[i] / 8, n));
            }
        }
        assert_true(65536 == multicast_from(alg, 16, 16, 128, 65536, true));
    }
    assert_false(coll_async_decision_in_node(COLL_ASYNC_ALG_MULTICAST));
    assert_false(coll_async_decision_in_node(COLL_ASYNC_ALG_AUTO));
}

/* The values the parameters accept, the enums generated from them, and what
 * verbose level 1 prints for 3 nodes (as coll_async_internode_describe did). */
static void test_values_and_words(void **state)
{
    char text[256];

    (void) state;
    coll_async_decision_values(COLL_ASYNC_FAMILY_ALLREDUCE, text, sizeof(text));
    assert_string_equal(text,
                        "auto, delegate, ring, recursive_doubling, rabenseifner, "
                        "single_copy, staged, numa, flat");
    coll_async_decision_values(COLL_ASYNC_FAMILY_BCAST, text, sizeof(text));
    assert_string_equal(text,
                        "auto, delegate, binomial, scatter_allgather, multicast, "
                        "single_copy, staged, numa, flat");
    coll_async_decision_values(COLL_ASYNC_FAMILY_ALLGATHER, text, sizeof(text));
    assert_string_equal(text, "auto, delegate, ring, recursive_doubling, single_copy, staged, "
                              "numa, flat");
    coll_async_decision_values(COLL_ASYNC_FAMILY_REDUCE, text, sizeof(text));
    assert_string_equal(text,
                        "auto, delegate, binomial, single_copy, rooted_chunks, numa, flat");
    coll_async_decision_values(COLL_ASYNC_FAMILY_BARRIER, text, sizeof(text));
    assert_string_equal(text, "auto, delegate, dissemination, numa, flat");
    coll_async_decision_values(COLL_ASYNC_FAMILY_ALLTOALL, text, sizeof(text));
    assert_string_equal(text, "auto, delegate, pairwise");
    coll_async_decision_values(COLL_ASYNC_FAMILY_GATHER, text, sizeof(text));
    assert_string_equal(text, "auto, delegate, binomial");
    coll_async_decision_values(COLL_ASYNC_FAMILY_ALLTOALLV, text, sizeof(text));
    assert_string_equal(text, "auto, delegate");
    assert_false(coll_async_decision_accepts(COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_RING));

    coll_async_decision_describe(COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 3, text,
                                 sizeof(text));
    assert_string_equal(text, "recursive_doubling up to 16384 B, then ring");
    coll_async_decision_describe(COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 4, text,
                                 sizeof(text));
    assert_string_equal(text, "recursive_doubling up to 16384 B, then rabenseifner");
    coll_async_decision_describe(COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 6, text,
                                 sizeof(text));
    assert_string_equal(text,
                        "recursive_doubling up to 16384 B, rabenseifner up to 20479 B, then ring");
    coll_async_decision_describe(COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_AUTO, 512, text,
                                 sizeof(text));
    assert_string_equal(text, "binomial up to 747519 B, then scatter_allgather");
    coll_async_decision_describe(COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_AUTO, 3, text,
                                 sizeof(text));
    assert_string_equal(text, "binomial up to 131072 B, then scatter_allgather");
    coll_async_decision_describe(COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_AUTO, 2, text,
                                 sizeof(text));
    assert_string_equal(text, "binomial");
    coll_async_decision_describe(COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_AUTO, 3, text,
                                 sizeof(text));
    assert_string_equal(text, "ring");
    coll_async_decision_describe(COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_AUTO, 4, text,
                                 sizeof(text));
    assert_string_equal(text, "recursive_doubling up to 65536 B, then ring");
    coll_async_decision_describe(COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_AUTO, 64, text,
                                 sizeof(text));
    assert_string_equal(text, "recursive_doubling up to 1048576 B, then ring");
    coll_async_decision_describe(COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_RECURSIVE_DOUBLING,
                                 4, text, sizeof(text));
    assert_string_equal(text, "recursive_doubling");
}

/* NUMA stages: the five families, from 2 domains, under auto and numa; flat or a
 * schedule named keeps the node's one channel; numa and flat name no schedule. */
static void test_numa(void **state)
{
    enum coll_async_alg algs[COLL_ASYNC_NUM_FAMILIES] = {COLL_ASYNC_ALG_AUTO};

    (void) state;
    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES; ++family) {
        bool staged = COLL_ASYNC_FAMILY_ALLREDUCE == family || COLL_ASYNC_FAMILY_BCAST == family
                      || COLL_ASYNC_FAMILY_REDUCE == family
                      || COLL_ASYNC_FAMILY_ALLGATHER == family
                      || COLL_ASYNC_FAMILY_BARRIER == family;

        assert_int_equal(staged, coll_async_decision_accepts(family, COLL_ASYNC_ALG_NUMA));
        assert_int_equal(staged, coll_async_decision_accepts(family, COLL_ASYNC_ALG_FLAT));
        for (int domains = 0; domains <= 8; ++domains) {
            bool want = staged && domains >= 2;

            assert_int_equal(want, coll_async_decision_numa(family, COLL_ASYNC_ALG_AUTO, domains));
            assert_int_equal(want, coll_async_decision_numa(family, COLL_ASYNC_ALG_NUMA, domains));
            assert_false(coll_async_decision_numa(family, COLL_ASYNC_ALG_FLAT, domains));
            assert_false(coll_async_decision_numa(family, COLL_ASYNC_ALG_STAGED, domains));
            assert_false(coll_async_decision_numa(family, COLL_ASYNC_ALG_DELEGATE, domains));
        }
    }
    for (int alg = COLL_ASYNC_ALG_NUMA; alg <= COLL_ASYNC_ALG_FLAT; ++alg) {
        assert_true(coll_async_decision_numa_name(alg));
        assert_false(coll_async_decision_schedule_name(alg));
        assert_int_equal(COLL_ASYNC_ALG_AUTO, coll_async_decision_leaders(alg));
        assert_int_equal(COLL_ASYNC_ALG_AUTO,
                         coll_async_decision_shm_forced(COLL_ASYNC_FAMILY_ALLREDUCE, alg, true));
        assert_false(coll_async_decision_shm_fallback(COLL_ASYNC_FAMILY_ALLREDUCE, alg, false));
    }
    assert_true(coll_async_decision_schedule_name(COLL_ASYNC_ALG_STAGED));
    assert_true(coll_async_decision_numa_wanted(algs));
    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES; ++family) {
        algs[family] = COLL_ASYNC_ALG_FLAT;
    }
    assert_false(coll_async_decision_numa_wanted(algs));
    algs[COLL_ASYNC_FAMILY_BARRIER] = COLL_ASYNC_ALG_NUMA;
    assert_true(coll_async_decision_numa_wanted(algs));
}

/* Forced algorithms that cannot run, what runs instead; leaders; multicast. */
static void test_fallbacks_and_thresholds(void **state)
{
    enum coll_async_alg instead = COLL_ASYNC_NUM_ALGS;

    (void) state;
    assert_true(coll_async_decision_fallback(COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 1,
                                             &instead));
    assert_int_equal(instead, COLL_ASYNC_ALG_AUTO);
    assert_false(coll_async_decision_fallback(COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_RING, 3,
                                              &instead));
    assert_false(coll_async_decision_fallback(COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 1,
                                              &instead));
    assert_false(coll_async_decision_fallback(COLL_ASYNC_FAMILY_BCAST,
                                              COLL_ASYNC_ALG_DELEGATE, 1, &instead));
    assert_true(coll_async_decision_fallback(COLL_ASYNC_FAMILY_ALLGATHER,
                                             COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 3, &instead));
    assert_int_equal(instead, COLL_ASYNC_ALG_RING);
    assert_false(coll_async_decision_fallback(COLL_ASYNC_FAMILY_ALLGATHER,
                                              COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 4, &instead));
    assert_true(coll_async_decision_fallback(COLL_ASYNC_FAMILY_ALLGATHERV,
                                             COLL_ASYNC_ALG_RECURSIVE_DOUBLING, 3, &instead));
    assert_int_equal(instead, COLL_ASYNC_ALG_RING);

    assert_int_equal(coll_async_decision_leader_parts(65535, 65536, 2), 1);
    assert_int_equal(coll_async_decision_leader_parts(65536, 65536, 2), 2);

    /* (alg, nodes, min_nodes, max_nodes, min_bytes, every leader has verbs) */
    assert_true(1 == multicast_from(COLL_ASYNC_ALG_MULTICAST, 3, 16, 128, 65536, false));
    assert_true(SIZE_MAX == multicast_from(COLL_ASYNC_ALG_AUTO, 15, 16, 128, 65536, true));
    assert_true(65536 == multicast_from(COLL_ASYNC_ALG_AUTO, 16, 16, 128, 65536, true));
    assert_true(SIZE_MAX == multicast_from(COLL_ASYNC_ALG_AUTO, 16, 16, 128, 65536, false));
    assert_true(SIZE_MAX == multicast_from(COLL_ASYNC_ALG_AUTO, 16, 0, 128, 65536, true));
    /* bench/simulate's band: up to 128 nodes by default; 0, no bound. */
    assert_true(65536 == multicast_from(COLL_ASYNC_ALG_AUTO, 128, 16, 128, 65536, true));
    assert_true(SIZE_MAX == multicast_from(COLL_ASYNC_ALG_AUTO, 129, 16, 128, 65536, true));
    assert_true(65536 == multicast_from(COLL_ASYNC_ALG_AUTO, 1000, 16, 0, 65536, true));
    assert_true(1 == multicast_from(COLL_ASYNC_ALG_MULTICAST, 1000, 16, 128, 65536, true));
    assert_true(SIZE_MAX == multicast_from(COLL_ASYNC_ALG_BINOMIAL, 16, 16, 128, 65536, true));
}

/* Gather and scatter aggregated by node: binomial forces it at any size on 2 or
 * more nodes; auto up to 4 KiB per rank where the root's transfers with other
 * nodes that it saves outnumber 5 (ceil(log2 nodes) + 1); never for another
 * family that is not hierarchical, always for those that are. */
static void test_aggregated(void **state)
{
    const enum coll_async_family gather = COLL_ASYNC_FAMILY_GATHER;

    (void) state;
    assert_true(coll_async_decision_aggregated(gather, COLL_ASYNC_ALG_BINOMIAL, 1 << 20, 4, 2));
    assert_true(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_SCATTER,
                                               COLL_ASYNC_ALG_BINOMIAL, 1, 2, 2));
    assert_false(coll_async_decision_aggregated(gather, COLL_ASYNC_ALG_BINOMIAL, 0, 4, 2));
    assert_false(coll_async_decision_aggregated(gather, COLL_ASYNC_ALG_BINOMIAL, 8, 4, 1));
    /* 8 ranks on 2 or 4 nodes, as measured over loopback: flat. */
    assert_false(coll_async_decision_aggregated(gather, COLL_ASYNC_ALG_AUTO, 8, 8, 2));
    assert_false(coll_async_decision_aggregated(gather, COLL_ASYNC_ALG_AUTO, 8, 8, 4));
    /* 2 nodes: 5 x 2 = 10 ranks elsewhere are not enough, 11 are. */
    assert_false(coll_async_decision_aggregated(gather, COLL_ASYNC_ALG_AUTO, 8, 20, 2));
    assert_true(coll_async_decision_aggregated(gather, COLL_ASYNC_ALG_AUTO, 8, 22, 2));
    assert_true(coll_async_decision_aggregated(gather, COLL_ASYNC_ALG_AUTO, 4096, 64 * 32, 64));
    assert_false(coll_async_decision_aggregated(gather, COLL_ASYNC_ALG_AUTO, 4097, 64 * 32, 64));
    /* One rank per node: the binomial tree alone, 63 transfers against 6 latencies. */
    assert_true(coll_async_decision_aggregated(gather, COLL_ASYNC_ALG_AUTO, 8, 64, 64));
    assert_false(coll_async_decision_aggregated(gather, COLL_ASYNC_ALG_AUTO, 8, 4, 4));
    assert_false(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_GATHERV, COLL_ASYNC_ALG_AUTO, 8,
                                                4096, 64));
    assert_true(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_AUTO,
                                               8, 8, 2));
    /* allgatherv and reduce_scatter(_block) by node: auto up to 4 KiB per rank
     * (measured), a leaders' algorithm named forces it; never on one node. */
    assert_true(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_ALLGATHERV, COLL_ASYNC_ALG_AUTO,
                                               4096, 8, 2));
    assert_false(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_ALLGATHERV,
                                                COLL_ASYNC_ALG_AUTO, 4097, 8, 4));
    assert_true(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_ALLGATHERV, COLL_ASYNC_ALG_RING,
                                               1 << 20, 8, 4));
    assert_true(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_REDUCE_SCATTER,
                                               COLL_ASYNC_ALG_RABENSEIFNER, 1 << 20, 5, 3));
    assert_true(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_REDUCE_SCATTER_BLOCK,
                                               COLL_ASYNC_ALG_AUTO, 8, 5, 3));
    assert_false(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_REDUCE_SCATTER_BLOCK,
                                                COLL_ASYNC_ALG_AUTO, 8, 5, 1));
    assert_false(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_REDUCE_SCATTER,
                                                COLL_ASYNC_ALG_AUTO, 8192, 16, 2));
    assert_true(coll_async_decision_accepts(COLL_ASYNC_FAMILY_ALLGATHERV,
                                            COLL_ASYNC_ALG_RECURSIVE_DOUBLING));
    assert_false(coll_async_decision_accepts(COLL_ASYNC_FAMILY_ALLGATHERV,
                                             COLL_ASYNC_ALG_RABENSEIFNER));
    assert_true(coll_async_decision_accepts(COLL_ASYNC_FAMILY_REDUCE_SCATTER_BLOCK,
                                            COLL_ASYNC_ALG_RABENSEIFNER));
    /* scan and exscan: in node order wherever they can be (the caller checks). */
    assert_true(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_SCAN, COLL_ASYNC_ALG_AUTO,
                                               1 << 20, 4, 2));
    assert_true(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_EXSCAN, COLL_ASYNC_ALG_AUTO, 8,
                                               4, 2));
    /* alltoall, 2 or more ranks per node: up to 256 B (measured), or up to 1 KiB
     * where R (n - R) transfers out saved outweigh 5 (nodes - 1) latencies and 4 R n
     * blocks copied, 2000 B an overhead. */
    assert_true(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_ALLTOALL,
                                               COLL_ASYNC_ALG_PAIRWISE, 1 << 20, 4, 2));
    assert_true(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_ALLTOALL, COLL_ASYNC_ALG_AUTO,
                                               256, 8, 4));
    assert_false(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_ALLTOALL, COLL_ASYNC_ALG_AUTO,
                                                257, 8, 4));
    assert_false(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_ALLTOALL, COLL_ASYNC_ALG_AUTO,
                                                257, 8, 2)); /* 11 x 2000 < 4 x 32 x 257 */
    assert_false(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_ALLTOALL, COLL_ASYNC_ALG_AUTO,
                                                8, 8, 8)); /* one rank per node */
    assert_false(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_ALLTOALL, COLL_ASYNC_ALG_AUTO,
                                                2048, 64 * 32, 64));
    assert_true(coll_async_decision_aggregated(COLL_ASYNC_FAMILY_ALLTOALL, COLL_ASYNC_ALG_AUTO,
                                               256, 64 * 32, 64));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_between_nodes),      cmocka_unit_test(test_shared_memory),
        cmocka_unit_test(test_forced_in_node),
        cmocka_unit_test(test_reduce_modes),       cmocka_unit_test(test_native_or_delegated),
        cmocka_unit_test(test_wanted),             cmocka_unit_test(test_values_and_words),
        cmocka_unit_test(test_fallbacks_and_thresholds), cmocka_unit_test(test_numa),
        cmocka_unit_test(test_aggregated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
