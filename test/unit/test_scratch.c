/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of coll_async_scratch.c: a buffer given back is the next one taken,
 * the smallest that fits is chosen, the limit holds (smaller buffers dropped for
 * a larger one), small buffers and a zero limit keep nothing, and threads taking
 * and giving at once never share a buffer.
 */

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../ompi/mca/coll/async/transport/coll_async_scratch.h"

#define MiB (1024 * 1024)

static int reset(void **state)
{
    (void) state;
    coll_async_scratch_drain();
    coll_async_scratch_limit(64 * MiB);
    return 0;
}

static void test_given_back_is_taken_again(void **state)
{
    (void) state;
    char *a = coll_async_scratch_take(3 * MiB), *b;

    assert_non_null(a);
    assert_int_equal(0, (uintptr_t) a % 64);
    memset(a, 1, 3 * MiB);
    coll_async_scratch_give(a);
    assert_int_equal(3 * MiB, coll_async_scratch_kept());
    b = coll_async_scratch_take(2 * MiB);
    assert_ptr_equal(a, b);
    assert_int_equal(0, coll_async_scratch_kept());
    coll_async_scratch_give(b);
}

static void test_smallest_that_fits(void **state)
{
    (void) state;
    char *big = coll_async_scratch_take(8 * MiB), *mid = coll_async_scratch_take(2 * MiB);
    char *small = coll_async_scratch_take(MiB);

    coll_async_scratch_give(big);
    coll_async_scratch_give(small);
    coll_async_scratch_give(mid);
    assert_ptr_equal(mid, coll_async_scratch_take(MiB + 1));
    assert_ptr_equal(small, coll_async_scratch_take(MiB));
    /* None of 8 MiB left but the big one: a larger need is a new buffer. */
    char *bigger = coll_async_scratch_take(9 * MiB);
    assert_ptr_not_equal(big, bigger);
    coll_async_scratch_give(bigger);
    coll_async_scratch_give(mid);
    coll_async_scratch_give(small);
}

static void test_limit_drops_smaller_first(void **state)
{
    (void) state;
    char *a = coll_async_scratch_take(MiB), *b = coll_async_scratch_take(MiB);
    char *c = coll_async_scratch_take(MiB), *large = coll_async_scratch_take(3 * MiB);

    coll_async_scratch_limit(3 * MiB);
    coll_async_scratch_give(a);
    coll_async_scratch_give(b);
    coll_async_scratch_give(c);
    assert_int_equal(3 * MiB, coll_async_scratch_kept());
    coll_async_scratch_give(large); /* the three small ones go to keep it */
    assert_int_equal(3 * MiB, coll_async_scratch_kept());
    assert_ptr_equal(large, coll_async_scratch_take(2 * MiB));
    assert_int_equal(0, coll_async_scratch_kept());
    coll_async_scratch_give(large);
    /* Over the limit alone: freed, and the kept one stays. */
    coll_async_scratch_give(coll_async_scratch_take(4 * MiB));
    assert_int_equal(3 * MiB, coll_async_scratch_kept());
}

static void test_nothing_kept(void **state)
{
    (void) state;
    coll_async_scratch_give(coll_async_scratch_take(1000)); /* from malloc's heap */
    coll_async_scratch_give(coll_async_scratch_take(0));
    assert_int_equal(0, coll_async_scratch_kept());
    coll_async_scratch_limit(0);
    coll_async_scratch_give(coll_async_scratch_take(MiB));
    assert_int_equal(0, coll_async_scratch_kept());
    coll_async_scratch_give(NULL);
    assert_null(coll_async_scratch_take(SIZE_MAX)); /* no overflow into a small buffer */
}

/* Each thread writes its mark over the buffer it holds and checks it is still
 * there before giving it back: a buffer handed to two threads at once fails. */
static void *churn(void *arg)
{
    unsigned char mark = (unsigned char) (uintptr_t) arg;

    for (int i = 0; i < 2000; ++i) {
        size_t bytes = (size_t) (64 * 1024) << (i % 5);
        unsigned char *p = coll_async_scratch_take(bytes);

        if (NULL == p) {
            return (void *) 1;
        }
        memset(p, mark, bytes);
        for (size_t k = 0; k < bytes; k += 4096) {
            if (p[k] != mark || p[bytes - 1] != mark) {
                return (void *) 1;
            }
        }
        coll_async_scratch_give(p);
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void) state;
    pthread_t threads[4];
    void *result;

    for (uintptr_t t = 0; t < 4; ++t) {
        assert_int_equal(0, pthread_create(&threads[t], NULL, churn, (void *) (t + 1)));
    }
    for (int t = 0; t < 4; ++t) {
        assert_int_equal(0, pthread_join(threads[t], &result));
        assert_null(result);
    }
    assert_true(coll_async_scratch_kept() <= 64 * MiB);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_given_back_is_taken_again, reset),
        cmocka_unit_test_setup(test_smallest_that_fits, reset),
        cmocka_unit_test_setup(test_limit_drops_smaller_first, reset),
        cmocka_unit_test_setup(test_nothing_kept, reset),
        cmocka_unit_test_setup(test_threads, reset),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);

    coll_async_scratch_drain();
    return failed;
}
