/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of transport/coll_async_verbs_cache.c with fake registration
 * functions (no RDMA device): reuse of a covering entry, page rounding, LRU
 * eviction order, held entries surviving eviction, invalidation (deferred while
 * held, deregistered on the owner's thread), failures of reg, and invalidate
 * from other threads while the owner acquires and releases, and registrations
 * of memory no hook watches lasting only while held.
 *
 * The addresses are made up: the cache never touches the memory, only the fakes
 * would, and they only count.
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../ompi/mca/coll/async/transport/coll_async_verbs_cache.h"

#define MAX_HANDLES 100000

/* The fake driver: handle k (1-based) is the k-th registration. */
struct fake {
    uintptr_t start[MAX_HANDLES + 1];
    size_t length[MAX_HANDLES + 1];
    bool live[MAX_HANDLES + 1];
    int registered, deregistered;
    int last_dereg; /* handle */
    int order[64];  /* deregistered handles, in order (the first 64) */
    int fail_next;  /* -errno for the next reg, 0: succeed */
};

static struct fake fake;
static size_t page;

static int fake_reg(void *context, void *address, size_t length, void **handle)
{
    int k;

    assert_ptr_equal(context, &fake);
    if (0 != fake.fail_next) {
        int rc = fake.fail_next;

        fake.fail_next = 0;
        return rc;
    }
    k = ++fake.registered;
    assert_true(k <= MAX_HANDLES);
    fake.start[k] = (uintptr_t) address;
    fake.length[k] = length;
    fake.live[k] = true;
    *handle = (void *) (uintptr_t) k;
    return 0;
}

static void fake_dereg(void *context, void *handle)
{
    int k = (int) (uintptr_t) handle;

    assert_ptr_equal(context, &fake);
    assert_true(k >= 1 && k <= fake.registered);
    assert_true(fake.live[k]); /* never twice */
    fake.live[k] = false;
    if (fake.deregistered < 64) {
        fake.order[fake.deregistered] = k;
    }
    ++fake.deregistered;
    fake.last_dereg = k;
}

/* Ranges from page 100 on stand for memory no hook watches (the heap below
 * the program break): not lasting. */
static int fake_lasting(void *context, uintptr_t start, uintptr_t end)
{
    assert_ptr_equal(context, &fake);
    assert_true(start < end);
    assert_int_equal(start % page, 0);
    assert_int_equal(end % page, 0);
    return end <= 0x10000000u + 100 * page;
}

static const struct coll_async_verbs_cache_ops fake_ops = {fake_reg, fake_dereg, fake_lasting};

static struct coll_async_verbs_cache *new_cache(size_t capacity)
{
    struct coll_async_verbs_cache *cache;

    memset(&fake, 0, sizeof(fake));
    page = (size_t) sysconf(_SC_PAGESIZE);
    assert_int_equal(coll_async_verbs_cache_create(&cache, &fake_ops, &fake, capacity), 0);
    return cache;
}

/* A made-up address: page p, plus offset. */
static const void *at(size_t p, size_t offset)
{
    return (const void *) (uintptr_t) (0x10000000u + p * page + offset);
}

static int handle_of(const struct coll_async_verbs_cache_entry *entry)
{
    return (int) (uintptr_t) coll_async_verbs_cache_handle(entry);
}

static int acquire(struct coll_async_verbs_cache *cache, const void *address, size_t length,
                   struct coll_async_verbs_cache_entry **entry)
{
    assert_int_equal(coll_async_verbs_cache_acquire(cache, address, length, entry), 0);
    return handle_of(*entry);
}

/* Acquires and releases at once: a transfer that came and went. */
static int touch(struct coll_async_verbs_cache *cache, const void *address, size_t length)
{
    struct coll_async_verbs_cache_entry *entry;
    int k = acquire(cache, address, length, &entry);

    coll_async_verbs_cache_release(cache, entry);
    return k;
}

static struct coll_async_verbs_cache_stats stats_of(struct coll_async_verbs_cache *cache)
{
    struct coll_async_verbs_cache_stats stats;

    coll_async_verbs_cache_stats(cache, &stats);
    return stats;
}

static void test_reuse_and_rounding(void **state)
{
    struct coll_async_verbs_cache *cache = new_cache(1 << 30);
    struct coll_async_verbs_cache_entry *a, *b, *c;

    (void) state;
    /* 200 bytes straddling no page boundary: one page registered. */
    assert_int_equal(acquire(cache, at(3, 100), 200, &a), 1);
    assert_int_equal(fake.start[1], (uintptr_t) at(3, 0));
    assert_int_equal(fake.length[1], page);
    /* Inside the same page: the same entry, no new registration. */
    assert_int_equal(acquire(cache, at(3, 1000), 50, &b), 1);
    assert_ptr_equal(a, b);
    /* Straddling into the next page: not covered, a new two-page entry. */
    assert_int_equal(acquire(cache, at(3, page - 10), 20, &c), 2);
    assert_int_equal(fake.start[2], (uintptr_t) at(3, 0));
    assert_int_equal(fake.length[2], 2 * page);
    /* Now the bigger entry (most recent) covers the first range too. */
    assert_int_equal(touch(cache, at(3, 100), 200), 2);
    assert_int_equal(touch(cache, at(4, 5), 5), 2);
    assert_int_equal(stats_of(cache).hits, 3);
    assert_int_equal(stats_of(cache).registrations, 2);
    assert_int_equal(stats_of(cache).bytes, 3 * page);
    coll_async_verbs_cache_release(cache, a);
    coll_async_verbs_cache_release(cache, b);
    coll_async_verbs_cache_release(cache, c);
    assert_int_equal(fake.deregistered, 0); /* cached, under capacity */
    assert_int_equal(coll_async_verbs_cache_acquire(cache, at(1, 0), 0, &a), -EINVAL);
    coll_async_verbs_cache_destroy(cache);
    assert_int_equal(fake.deregistered, 2);
}

static void test_eviction_order(void **state)
{
    struct coll_async_verbs_cache *cache = new_cache(3 * page);

    (void) state;
    assert_int_equal(touch(cache, at(0, 0), 1), 1);  /* A */
    assert_int_equal(touch(cache, at(2, 0), 1), 2);  /* B */
    assert_int_equal(touch(cache, at(4, 0), 1), 3);  /* C */
    assert_int_equal(touch(cache, at(0, 9), 1), 1);  /* A again: B is now the oldest */
    assert_int_equal(fake.deregistered, 0);
    assert_int_equal(touch(cache, at(6, 0), 1), 4);  /* D: 4 pages > 3, B goes */
    assert_int_equal(fake.deregistered, 1);
    assert_int_equal(fake.order[0], 2);
    assert_int_equal(touch(cache, at(8, 0), 1), 5);  /* E: C goes (A was used after it) */
    assert_int_equal(fake.order[1], 3);
    assert_int_equal(touch(cache, at(2, 0), 1), 6);  /* B was evicted: registered anew */
    assert_int_equal(fake.order[2], 1);              /* ... and A, now the oldest, goes */
    assert_int_equal(stats_of(cache).evictions, 3);
    assert_int_equal(stats_of(cache).entries, 3);
    assert_int_equal(stats_of(cache).bytes, 3 * page);
    coll_async_verbs_cache_destroy(cache);
    assert_int_equal(fake.deregistered, fake.registered);
}

static void test_held_entries_survive(void **state)
{
    struct coll_async_verbs_cache *cache = new_cache(2 * page);
    struct coll_async_verbs_cache_entry *a, *b, *c;

    (void) state;
    acquire(cache, at(0, 0), 1, &a);
    acquire(cache, at(2, 0), 1, &b);
    acquire(cache, at(4, 0), 1, &c); /* over capacity, but all three are held */
    assert_int_equal(fake.deregistered, 0);
    assert_int_equal(stats_of(cache).bytes, 3 * page);
    coll_async_verbs_cache_release(cache, b); /* B unheld: evicted now */
    assert_int_equal(fake.deregistered, 1);
    assert_int_equal(fake.last_dereg, handle_of(a) + 1);
    assert_int_equal(touch(cache, at(0, 5), 1), handle_of(a)); /* A is still there */
    coll_async_verbs_cache_release(cache, c);
    coll_async_verbs_cache_release(cache, a);
    assert_int_equal(stats_of(cache).bytes, 2 * page);
    coll_async_verbs_cache_destroy(cache);
    assert_int_equal(fake.deregistered, fake.registered);
}

static void test_invalidate(void **state)
{
    struct coll_async_verbs_cache *cache = new_cache(1 << 30);
    struct coll_async_verbs_cache_entry *held, *fresh;
    int a, b;

    (void) state;
    a = touch(cache, at(0, 0), 3 * page); /* pages 0-2 */
    b = touch(cache, at(5, 0), page);     /* page 5 */
    /* Freeing one byte of page 1 drops the entry over pages 0-2, not page 5. */
    coll_async_verbs_cache_invalidate(cache, at(1, 17), 1);
    assert_int_equal(stats_of(cache).entries, 1);
    assert_int_equal(stats_of(cache).invalidations, 1);
    assert_int_equal(fake.deregistered, 0); /* deferred to the owner's thread */
    coll_async_verbs_cache_collect(cache);
    assert_int_equal(fake.deregistered, 1);
    assert_int_equal(fake.last_dereg, a);
    /* The same addresses again: registered anew. */
    assert_int_equal(touch(cache, at(0, 0), 3 * page), b + 1);
    assert_int_equal(touch(cache, at(5, 100), 10), b);
    /* Ranges that end where an entry starts, or start where it ends, overlap nothing. */
    coll_async_verbs_cache_invalidate(cache, at(4, 0), page);
    coll_async_verbs_cache_invalidate(cache, at(6, 0), page);
    coll_async_verbs_cache_invalidate(cache, at(5, 0), 0);
    assert_int_equal(stats_of(cache).entries, 2);

    /* Held while freed: no longer found, deregistered at its last release. */
    acquire(cache, at(5, 0), 8, &held);
    coll_async_verbs_cache_invalidate(cache, at(5, 4), 1);
    coll_async_verbs_cache_collect(cache);
    assert_int_equal(fake.deregistered, 1);
    acquire(cache, at(5, 0), 8, &fresh);
    assert_int_not_equal(handle_of(fresh), handle_of(held));
    assert_true(fake.live[handle_of(held)]);
    coll_async_verbs_cache_release(cache, held);
    assert_int_equal(fake.deregistered, 2);
    assert_int_equal(fake.last_dereg, b);
    coll_async_verbs_cache_release(cache, fresh);
    coll_async_verbs_cache_destroy(cache);
    assert_int_equal(fake.deregistered, fake.registered);
}

/* Held and invalidated at destroy (the owner forgot a release): still deregistered. */
static void test_destroy_releases_everything(void **state)
{
    struct coll_async_verbs_cache *cache = new_cache(1 << 30);
    struct coll_async_verbs_cache_entry *held, *doomed;

    (void) state;
    acquire(cache, at(0, 0), 1, &held);
    acquire(cache, at(2, 0), 1, &doomed);
    touch(cache, at(4, 0), 1);
    touch(cache, at(6, 0), 1);
    coll_async_verbs_cache_invalidate(cache, at(2, 0), 1);
    coll_async_verbs_cache_invalidate(cache, at(6, 0), 1);
    coll_async_verbs_cache_destroy(cache);
    assert_int_equal(fake.registered, 4);
    assert_int_equal(fake.deregistered, 4);
}

static void test_reg_failure(void **state)
{
    struct coll_async_verbs_cache *cache = new_cache(1 << 30);
    struct coll_async_verbs_cache_entry *entry = (void *) 1;

    (void) state;
    fake.fail_next = -EFAULT;
    assert_int_equal(coll_async_verbs_cache_acquire(cache, at(0, 0), 1, &entry), -EFAULT);
    assert_null(entry);
    assert_int_equal(stats_of(cache).entries, 0);
    assert_int_equal(touch(cache, at(0, 0), 1), 1);
    coll_async_verbs_cache_destroy(cache);
}

/* Invalidate from two other threads while the owner acquires and releases. */

struct storm {
    struct coll_async_verbs_cache *cache;
    bool stop; /* atomic */
    unsigned seed;
};

static void *invalidator(void *arg)
{
    struct storm *storm = arg;
    unsigned seed = storm->seed;

    while (!__atomic_load_n(&storm->stop, __ATOMIC_ACQUIRE)) {
        size_t p = (size_t) rand_r(&seed) % 64;

        coll_async_verbs_cache_invalidate(storm->cache, at(p, (size_t) rand_r(&seed) % page),
                                          (size_t) rand_r(&seed) % (2 * page) + 1);
    }
    return NULL;
}

static void test_invalidate_from_threads(void **state)
{
    struct coll_async_verbs_cache *cache = new_cache(16 * page);
    struct storm storms[2] = {{cache, false, 1}, {cache, false, 2}};
    struct coll_async_verbs_cache_entry *held[4] = {NULL};
    pthread_t threads[2];
    unsigned seed = 3;

    (void) state;
    for (int t = 0; t < 2; ++t) {
        assert_int_equal(pthread_create(&threads[t], NULL, invalidator, &storms[t]), 0);
    }
    /* At least 20000 rounds and 1000 invalidations (threads may start late, or
     * take turns, as under valgrind). */
    for (int i = 0; (i < 20000 || stats_of(cache).invalidations < 1000)
                    && fake.registered < MAX_HANDLES - 10;
         ++i) {
        int slot = i % 4;

        if (i % 64 == 0) {
            sched_yield();
        }
        if (i >= 20000) {
            /* The invalidators are behind (a loaded machine gave them 9 in all once,
             * and the handles ran out): let them run before taking more. */
            usleep(100);
        }
        size_t p = (size_t) rand_r(&seed) % 64, length = (size_t) rand_r(&seed) % (3 * page) + 1;

        if (NULL != held[slot]) {
            coll_async_verbs_cache_release(cache, held[slot]);
        }
        acquire(cache, at(p, 0), length, &held[slot]);
        assert_true(fake.live[handle_of(held[slot])]);
    }
    __atomic_store_n(&storms[0].stop, true, __ATOMIC_RELEASE);
    __atomic_store_n(&storms[1].stop, true, __ATOMIC_RELEASE);
    for (int t = 0; t < 2; ++t) {
        pthread_join(threads[t], NULL);
    }
    for (int slot = 0; slot < 4; ++slot) {
        coll_async_verbs_cache_release(cache, held[slot]);
    }
    print_message("%d registrations, %zu invalidated, %zu evicted\n", fake.registered,
                  stats_of(cache).invalidations, stats_of(cache).evictions);
    assert_true(stats_of(cache).invalidations >= 1000);
    coll_async_verbs_cache_destroy(cache);
    assert_int_equal(fake.deregistered, fake.registered);
}

/* Memory that may be freed without invalidate (the heap of the program break):
 * its registration serves the transfers that hold it, overlapping ones
 * included, and goes with the last release; the next transfer registers the
 * pages it finds then. Other memory stays cached. */
static void test_not_lasting(void **state)
{
    struct coll_async_verbs_cache *cache = new_cache(1 << 30);
    struct coll_async_verbs_cache_entry *a, *b;
    struct coll_async_verbs_cache_stats stats;

    (void) state;
    assert_int_equal(acquire(cache, at(100, 16), 3 * page, &a), 1);
    assert_int_equal(acquire(cache, at(101, 0), page, &b), 1); /* held: found */
    coll_async_verbs_cache_release(cache, b);
    assert_int_equal(fake.deregistered, 0);
    coll_async_verbs_cache_release(cache, a);
    assert_int_equal(fake.deregistered, 1); /* the last release */
    assert_int_equal(fake.last_dereg, 1);
    assert_int_equal(touch(cache, at(100, 16), 3 * page), 2); /* registered anew */
    assert_int_equal(fake.deregistered, 2);
    /* Straddling into the watched memory makes it not lasting as a whole. */
    assert_int_equal(touch(cache, at(99, 0), 2 * page), 3);
    assert_int_equal(fake.deregistered, 3);
    /* Watched memory is cached as before. */
    assert_int_equal(touch(cache, at(10, 0), page), 4);
    assert_int_equal(touch(cache, at(10, 0), page), 4);
    stats = stats_of(cache);
    assert_int_equal(stats.transients, 3);
    assert_int_equal(stats.entries, 1);
    assert_int_equal(stats.bytes, page);
    assert_int_equal(stats.registrations, 4);
    assert_int_equal(stats.deregistrations, 3);
    /* A not-lasting entry invalidated while held goes at its release, once. */
    assert_int_equal(acquire(cache, at(120, 0), page, &a), 5);
    coll_async_verbs_cache_invalidate(cache, at(120, 0), page);
    coll_async_verbs_cache_release(cache, a);
    assert_int_equal(fake.deregistered, 4);
    assert_false(fake.live[5]);
    coll_async_verbs_cache_destroy(cache);
    assert_int_equal(fake.deregistered, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reuse_and_rounding),
        cmocka_unit_test(test_eviction_order),
        cmocka_unit_test(test_held_entries_survive),
        cmocka_unit_test(test_invalidate),
        cmocka_unit_test(test_destroy_releases_everything),
        cmocka_unit_test(test_reg_failure),
        cmocka_unit_test(test_invalidate_from_threads),
        cmocka_unit_test(test_not_lasting),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
