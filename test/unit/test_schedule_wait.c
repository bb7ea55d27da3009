/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of the schedules' waits for the ranks of a node (schedule_all_of in
 * coll_async_schedule.h): each answer is the one a full scan of the flags gives,
 * a wait reads each rank O(1) times in all however often it is polled (not once
 * per poll, which made a call O(ranks^2)), a wait for some of the ranks is not
 * taken for a wait for all of them, and a wait for all that an earlier one
 * answered reads no line again.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../ompi/mca/coll/async/coll_async_schedule.h"

#define RANKS 64

/* A node of RANKS ranks with only its control lines: the waits read nothing else. */
struct node {
    struct coll_async_channel channel;
    struct coll_async_shm_control *control;
};

static void node_init(struct node *node, int nranks)
{
    memset(node, 0, sizeof(*node));
    node->control = aligned_alloc(COLL_ASYNC_SHM_LINE,
                                  sizeof(struct coll_async_shm_control) * RANKS);
    assert_non_null(node->control);
    memset(node->control, 0, sizeof(struct coll_async_shm_control) * RANKS);
    node->channel.shm.nranks = nranks;
    node->channel.shm.control = node->control;
}

static void publish(struct node *node, int rank, enum coll_async_shm_flag flag, uint64_t seq)
{
    node->control[rank].flag[flag] = seq;
}

/* Counts the ranks a wait asks about; waits for every one. */
static int asked;

static bool every_rank_counted(const struct coll_async_sched *op, int rank)
{
    (void) op;
    (void) rank;
    ++asked;
    return true;
}

/* The odd ranks only. */
static bool odd_ranks(const struct coll_async_sched *op, int rank)
{
    (void) op;
    return rank % 2;
}

/* Once a wait for all has seen seq, a later op's wait for seq or below is
 * answered from that memory: the lines are not read (here, wiped to prove it),
 * while a wait for a later seq still reads them. */
static void test_seen_not_read_again(void **state)
{
    struct node node;
    struct coll_async_sched first = {0}, later = {0};

    (void) state;
    node_init(&node, RANKS);
    first.channel = later.channel = &node.channel;
    for (int rank = 0; rank < RANKS; ++rank) {
        publish(&node, rank, COLL_ASYNC_SHM_ARRIVED, 7);
    }
    assert_true(schedule_all(&first, COLL_ASYNC_SHM_ARRIVED, 7));
    memset(node.control, 0, sizeof(struct coll_async_shm_control) * RANKS);
    assert_true(schedule_all(&later, COLL_ASYNC_SHM_ARRIVED, 6));
    assert_true(schedule_all(&later, COLL_ASYNC_SHM_ARRIVED, 7));
    assert_false(schedule_all(&later, COLL_ASYNC_SHM_ARRIVED, 8));
    assert_false(schedule_all(&later, COLL_ASYNC_SHM_READY, 1));
    free(node.control);
}

/* Ranks arrive in a random order, some at later sequence numbers; at every step
 * the wait answers as a full scan does. */
static void test_same_answers(void **state)
{
    struct node node;
    struct coll_async_sched op = {0};

    (void) state;
    srand(19);
    node_init(&node, RANKS);
    op.channel = &node.channel;
    for (uint64_t seq = 1; seq <= 50; ++seq) {
        int order[RANKS];

        for (int i = 0; i < RANKS; ++i) {
            order[i] = i;
        }
        for (int i = RANKS - 1; i > 0; --i) {
            int j = rand() % (i + 1), t = order[i];

            order[i] = order[j];
            order[j] = t;
        }
        for (int i = 0; i < RANKS; ++i) {
            enum coll_async_shm_flag flag = (enum coll_async_shm_flag) (seq % 3);

            assert_int_equal(schedule_all(&op, flag, seq),
                             coll_async_shm_all_reached(&node.channel.shm, flag, seq));
            publish(&node, order[i], flag, rand() % 4 ? seq : seq + 1);
            assert_int_equal(schedule_all(&op, flag, seq),
                             coll_async_shm_all_reached(&node.channel.shm, flag, seq));
        }
        assert_true(schedule_all(&op, (enum coll_async_shm_flag) (seq % 3), seq));
    }
    free(node.control);
}

/* Ranks arrive first to last, one per poll: a scan from rank 0 at every poll
 * would ask RANKS^2 / 2 times. The wait asks about each rank once, plus once per
 * poll that fails. */
static void test_linear_per_wait(void **state)
{
    struct node node;
    struct coll_async_sched op = {0};

    (void) state;
    node_init(&node, RANKS);
    op.channel = &node.channel;
    asked = 0;
    for (int rank = 0; rank < RANKS; ++rank) {
        assert_false(schedule_all_of(&op, COLL_ASYNC_SHM_ARRIVED, 1, every_rank_counted));
        publish(&node, rank, COLL_ASYNC_SHM_ARRIVED, 1);
    }
    assert_true(schedule_all_of(&op, COLL_ASYNC_SHM_ARRIVED, 1, every_rank_counted));
    assert_true(asked <= 2 * RANKS + 1);
    free(node.control);
}

/* A wait for the odd ranks that has passed says nothing of the even ones: a wait
 * for all of the same flag and sequence number reads them. */
static void test_some_then_all(void **state)
{
    struct node node;
    struct coll_async_sched op = {0};

    (void) state;
    node_init(&node, 8);
    op.channel = &node.channel;
    for (int rank = 1; rank < 8; rank += 2) {
        publish(&node, rank, COLL_ASYNC_SHM_ARRIVED, 5);
    }
    assert_true(schedule_all_of(&op, COLL_ASYNC_SHM_ARRIVED, 5, odd_ranks));
    assert_false(schedule_all(&op, COLL_ASYNC_SHM_ARRIVED, 5));
    for (int rank = 0; rank < 8; rank += 2) {
        publish(&node, rank, COLL_ASYNC_SHM_ARRIVED, 5);
    }
    assert_true(schedule_all(&op, COLL_ASYNC_SHM_ARRIVED, 5));
    /* Another flag, or another sequence number, is another wait. */
    assert_false(schedule_all(&op, COLL_ASYNC_SHM_READY, 5));
    assert_false(schedule_all(&op, COLL_ASYNC_SHM_ARRIVED, 6));
    free(node.control);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seen_not_read_again),
        cmocka_unit_test(test_same_answers),
        cmocka_unit_test(test_linear_per_wait),
        cmocka_unit_test(test_some_then_all),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
