/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of coll_async_kernels.c: every kernel against a scalar reference on values
 * chosen to overflow, the cases Open MPI 4.1.4 gets wrong, and the atomic form under
 * concurrent threads.
 */

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../ompi/mca/coll/async/coll_async_kernels.h"

#define INT_CTYPES(X)          \
    X(INT8, int8_t, true)      \
    X(UINT8, uint8_t, false)   \
    X(INT16, int16_t, true)    \
    X(UINT16, uint16_t, false) \
    X(INT32, int32_t, true)    \
    X(UINT32, uint32_t, false) \
    X(INT64, int64_t, true)    \
    X(UINT64, uint64_t, false)

#define FLOAT_CTYPES(X) \
    X(FLOAT, float)     \
    X(DOUBLE, double)

#define NAME_OF(NAME, ...) [COLL_ASYNC_##NAME] = #NAME,
static const char *const type_names[] = {INT_CTYPES(NAME_OF) FLOAT_CTYPES(NAME_OF)};
static const char *const op_names[] = {"SUM", "PROD", "MAX", "MIN", "LAND",
                                       "LOR", "LXOR", "BAND", "BOR", "BXOR"};

#define MAX_COUNT (1000 + 3)
#define GUARD 4 /* elements past count that no kernel may touch */

static const size_t counts[] = {0, 1, 7, 33, MAX_COUNT};

/* Integers as 64-bit patterns, truncated to each type: its MIN, MAX, -1, carries. */
static const uint64_t int_values[] = {
    0, 1, 2, 3, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000,
    0xffffffff, 0x100000000, INT64_MAX, (uint64_t) INT64_MIN, UINT64_MAX - 1, UINT64_MAX,
    0x5555555555555555,
};
static const double float_values[] = {
    0.0, -0.0, 1.0, -1.0, 0.5, -3.25, 1e30, -1e30, FLT_MAX, -FLT_MAX, 1e-40, INFINITY,
    -INFINITY, NAN,
};
#define NUM_INT_VALUES (sizeof(int_values) / sizeof(int_values[0]))
#define NUM_FLOAT_VALUES (sizeof(float_values) / sizeof(float_values[0]))

static bool is_float(enum coll_async_ctype type)
{
    return type >= COLL_ASYNC_FLOAT;
}

static bool is_signed(enum coll_async_ctype type)
{
    switch (type) {
#define SIGNED_CASE(NAME, T, SIGNED) case COLL_ASYNC_##NAME: return SIGNED;
    INT_CTYPES(SIGNED_CASE)
    default: return true;
    }
}

/* Element i as its two's-complement bits, sign-extended for signed types. */
static uint64_t get_int(enum coll_async_ctype type, const void *p, size_t i)
{
    switch (type) {
#define GET_INT(NAME, T, SIGNED) case COLL_ASYNC_##NAME: return (uint64_t) ((const T *) p)[i];
    INT_CTYPES(GET_INT)
    default: fail_msg("not an integer type"); return 0;
    }
}

/* Stores the low bits of v, which is wrapping arithmetic modulo the type's width. */
static void put_int(enum coll_async_ctype type, void *p, size_t i, uint64_t v)
{
    switch (type) {
#define PUT_INT(NAME, T, SIGNED) case COLL_ASYNC_##NAME: ((T *) p)[i] = (T) v; break;
    INT_CTYPES(PUT_INT)
    default: fail_msg("not an integer type");
    }
}

static double get_float(enum coll_async_ctype type, const void *p, size_t i)
{
    return COLL_ASYNC_FLOAT == type ? ((const float *) p)[i] : ((const double *) p)[i];
}

/* Rounding a float sum or product computed in double gives the float result exactly. */
static void put_float(enum coll_async_ctype type, void *p, size_t i, double v)
{
    if (COLL_ASYNC_FLOAT == type) {
        ((float *) p)[i] = (float) v;
    } else {
        ((double *) p)[i] = v;
    }
}

static uint64_t ref_int(enum coll_async_cop op, bool sign, uint64_t a, uint64_t b)
{
    bool a_greater = sign ? (int64_t) a > (int64_t) b : a > b;
    bool a_less = sign ? (int64_t) a < (int64_t) b : a < b;

    switch (op) {
    case COLL_ASYNC_SUM: return a + b;
    case COLL_ASYNC_PROD: return a * b;
    case COLL_ASYNC_MAX: return a_greater ? a : b;
    case COLL_ASYNC_MIN: return a_less ? a : b;
    case COLL_ASYNC_LAND: return a && b;
    case COLL_ASYNC_LOR: return a || b;
    case COLL_ASYNC_LXOR: return !a != !b;
    case COLL_ASYNC_BAND: return a & b;
    case COLL_ASYNC_BOR: return a | b;
    case COLL_ASYNC_BXOR: return a ^ b;
    default: fail_msg("no such op"); return 0;
    }
}

static double ref_float(enum coll_async_cop op, double a, double b)
{
    switch (op) {
    case COLL_ASYNC_SUM: return a + b;
    case COLL_ASYNC_PROD: return a * b;
    case COLL_ASYNC_MAX: return a > b ? a : b;
    case COLL_ASYNC_MIN: return a < b ? a : b;
    default: fail_msg("no such op on floating types"); return 0;
    }
}

/* out[i] = a[i] op b[i], one element at a time; out may be a or b. */
static void ref_reduce(enum coll_async_ctype type, enum coll_async_cop op, void *out,
                       const void *a, const void *b, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        if (is_float(type)) {
            put_float(type, out, i, ref_float(op, get_float(type, a, i), get_float(type, b, i)));
        } else {
            put_int(type, out, i,
                    ref_int(op, is_signed(type), get_int(type, a, i), get_int(type, b, i)));
        }
    }
}

static bool exists(enum coll_async_ctype type, enum coll_async_cop op)
{
    return !is_float(type) || op <= COLL_ASYNC_MIN;
}

static uint64_t mix(uint64_t x) /* splitmix64 */
{
    x += 0x9e3779b97f4a7c15;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9;
    x = (x ^ (x >> 27)) * 0x94d049bb133111eb;
    return x ^ (x >> 31);
}

/*
 * Operand `which` of a test. Operands 0 and 1 pair every listed value with every
 * other (index i % n against i / n), then go on at random; others are random. Random
 * floating values are multiples of 1/4 below 32, so that their sums are exact in any order.
 */
static void fill(enum coll_async_ctype type, void *p, size_t count, unsigned which)
{
    for (size_t i = 0; i < count; ++i) {
        size_t n = is_float(type) ? NUM_FLOAT_VALUES : NUM_INT_VALUES;
        size_t k = (0 == which ? i : i / n) % n;
        bool listed = which < 2 && i < n * n;
        uint64_t r = mix(i * 16 + which);

        if (is_float(type)) {
            put_float(type, p, i, listed ? float_values[k] : (int8_t) r / 4.0);
        } else {
            put_int(type, p, i, listed ? int_values[k] : r);
        }
    }
}

static bool same(enum coll_async_ctype type, const void *x, const void *y, size_t i)
{
    size_t size = coll_async_ctype_size(type);

    if (is_float(type) && isnan(get_float(type, x, i)) && isnan(get_float(type, y, i))) {
        return true; /* NaN payloads are not specified */
    }
    return 0 == memcmp((const char *) x + i * size, (const char *) y + i * size, size);
}

static const char *show(enum coll_async_ctype type, const void *p, size_t i, char text[32])
{
    if (is_float(type)) {
        snprintf(text, 32, "%a", get_float(type, p, i));
    } else {
        snprintf(text, 32, "%#" PRIx64, get_int(type, p, i));
    }
    return text;
}

enum form { TWO, THREE, THREE_OUT_IS_A, THREE_OUT_IS_B, ATOMIC };
static const char *const form_names[] = {"kernel", "kernel3", "kernel3 out=a", "kernel3 out=b",
                                         "atomic"};

/* Runs one kernel form on count elements and compares it, guard included, with ref_reduce. */
static void check_form(enum coll_async_ctype type, enum coll_async_cop op, enum form form,
                       size_t count)
{
    static uint64_t a[MAX_COUNT], b[MAX_COUNT], got[MAX_COUNT + GUARD], want[MAX_COUNT + GUARD];
    char text[2][32];
    size_t bytes = count * coll_async_ctype_size(type);

    fill(type, a, count, 0);
    fill(type, b, count, 1);
    memset(got, 0xa5, sizeof(got));
    memset(want, 0xa5, sizeof(want));
    ref_reduce(type, op, want, a, b, count);
    switch (form) {
    case TWO:
        memcpy(got, a, bytes);
        coll_async_kernel(type, op)(got, b, count);
        break;
    case THREE:
        coll_async_kernel3(type, op)(got, a, b, count);
        break;
    case THREE_OUT_IS_A:
        memcpy(got, a, bytes);
        coll_async_kernel3(type, op)(got, got, b, count);
        break;
    case THREE_OUT_IS_B:
        memcpy(got, b, bytes);
        coll_async_kernel3(type, op)(got, a, got, count);
        break;
    case ATOMIC:
        memcpy(got, a, bytes);
        coll_async_kernel_atomic(type, op)(got, b, count);
        break;
    }
    for (size_t i = 0; i < count + GUARD; ++i) {
        if (!same(type, got, want, i)) {
            fail_msg("%s %s %s, count %zu: element %zu is %s, want %s", form_names[form],
                     type_names[type], op_names[op], count, i, show(type, got, i, text[0]),
                     show(type, want, i, text[1]));
        }
    }
}

static void check_all(enum form form)
{
    for (enum coll_async_ctype type = 0; type < COLL_ASYNC_NUM_CTYPES; ++type) {
        for (enum coll_async_cop op = 0; op < COLL_ASYNC_NUM_COPS; ++op) {
            for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]) && exists(type, op); ++c) {
                check_form(type, op, form, counts[c]);
            }
        }
    }
}

static void test_kernel(void **state)
{
    (void) state;
    check_all(TWO);
}

static void test_kernel3(void **state)
{
    (void) state;
    check_all(THREE);
    check_all(THREE_OUT_IS_A);
    check_all(THREE_OUT_IS_B);
}

static void test_atomic_single(void **state)
{
    (void) state;
    check_all(ATOMIC);
}

/* The three forms exist for the same pairs: all but logical and bitwise on floating types. */
static void test_lookup(void **state)
{
    (void) state;
    for (enum coll_async_ctype type = 0; type < COLL_ASYNC_NUM_CTYPES; ++type) {
        for (enum coll_async_cop op = 0; op < COLL_ASYNC_NUM_COPS; ++op) {
            bool want = exists(type, op);
            assert_int_equal(NULL != coll_async_kernel(type, op), want);
            assert_int_equal(NULL != coll_async_kernel3(type, op), want);
            assert_int_equal(NULL != coll_async_kernel_atomic(type, op), want);
        }
    }
    assert_null(coll_async_kernel(COLL_ASYNC_NUM_CTYPES, COLL_ASYNC_SUM));
    assert_null(coll_async_kernel3(COLL_ASYNC_INT32, COLL_ASYNC_NUM_COPS));
    assert_null(coll_async_kernel_atomic(-1, COLL_ASYNC_SUM));
    assert_int_equal(coll_async_ctype_size(COLL_ASYNC_INT8), 1);
    assert_int_equal(coll_async_ctype_size(COLL_ASYNC_UINT16), 2);
    assert_int_equal(coll_async_ctype_size(COLL_ASYNC_FLOAT), 4);
    assert_int_equal(coll_async_ctype_size(COLL_ASYNC_UINT64), 8);
    assert_int_equal(coll_async_ctype_size(COLL_ASYNC_DOUBLE), 8);
    assert_int_equal(coll_async_ctype_size(COLL_ASYNC_NUM_CTYPES), 0);
}

/* a op b == want in every element, over enough elements to take the vector loop. */
static void check_pair(enum coll_async_ctype type, enum coll_async_cop op, uint64_t a, uint64_t b,
                       uint64_t want)
{
    enum { N = 67 };
    uint64_t x[N], y[N], z[N];

    for (size_t i = 0; i < N; ++i) {
        put_int(type, x, i, a);
        put_int(type, y, i, b);
    }
    coll_async_kernel3(type, op)(z, x, y, N);
    coll_async_kernel(type, op)(x, y, N);
    for (size_t i = 0; i < N; ++i) {
        assert_int_equal(get_int(type, x, i), want);
        assert_int_equal(get_int(type, z, i), want);
    }
}

/* Open MPI 4.1.4's AVX path saturates these. */
static void test_small_sums_wrap(void **state)
{
    (void) state;
    check_pair(COLL_ASYNC_INT8, COLL_ASYNC_SUM, 100, 100, (uint64_t) -56);
    check_pair(COLL_ASYNC_INT8, COLL_ASYNC_SUM, (uint64_t) INT8_MIN, (uint64_t) -1, INT8_MAX);
    check_pair(COLL_ASYNC_UINT8, COLL_ASYNC_SUM, 200, 100, 44);
    check_pair(COLL_ASYNC_INT16, COLL_ASYNC_SUM, 30000, 30000, (uint64_t) -5536);
    check_pair(COLL_ASYNC_UINT16, COLL_ASYNC_SUM, UINT16_MAX, 2, 1);
    check_pair(COLL_ASYNC_UINT16, COLL_ASYNC_PROD, UINT16_MAX, UINT16_MAX, 1);
    check_pair(COLL_ASYNC_INT32, COLL_ASYNC_SUM, INT32_MAX, 1, (uint64_t) INT32_MIN);
    check_pair(COLL_ASYNC_INT64, COLL_ASYNC_SUM, INT64_MAX, 1, (uint64_t) INT64_MIN);
}

/* Open MPI 4.1.4 compares unsigned long as signed. */
static void test_unsigned_max_min(void **state)
{
    const uint64_t big = (uint64_t) INT64_MAX + 2;

    (void) state;
    check_pair(COLL_ASYNC_UINT64, COLL_ASYNC_MAX, big, 1, big);
    check_pair(COLL_ASYNC_UINT64, COLL_ASYNC_MAX, INT64_MAX, UINT64_MAX, UINT64_MAX);
    check_pair(COLL_ASYNC_UINT64, COLL_ASYNC_MIN, big, 1, 1);
    check_pair(COLL_ASYNC_INT64, COLL_ASYNC_MAX, (uint64_t) -1, 1, 1);
    check_pair(COLL_ASYNC_UINT32, COLL_ASYNC_MAX, UINT32_MAX, 1, UINT32_MAX);
    check_pair(COLL_ASYNC_UINT8, COLL_ASYNC_MIN, 0x80, 0x7f, 0x7f);
    check_pair(COLL_ASYNC_INT8, COLL_ASYNC_MIN, 0x80, 0x7f, (uint64_t) INT8_MIN);
}

static void test_logical_is_0_or_1(void **state)
{
    (void) state;
    check_pair(COLL_ASYNC_INT32, COLL_ASYNC_LAND, 5, (uint64_t) -3, 1);
    check_pair(COLL_ASYNC_INT64, COLL_ASYNC_LAND, 0x100000000, 2, 1);
    check_pair(COLL_ASYNC_UINT8, COLL_ASYNC_LOR, 0, 0x40, 1);
    check_pair(COLL_ASYNC_INT16, COLL_ASYNC_LXOR, 2, 4, 0);
    check_pair(COLL_ASYNC_UINT64, COLL_ASYNC_LXOR, 0, (uint64_t) INT64_MIN, 1);
}

#define THREADS 4
#define ROUNDS 1000
#define SHARED_COUNT 257

struct worker {
    coll_async_kernel_atomic_fn reduce;
    void *shared;
    uint64_t in[SHARED_COUNT];
    int *waiting;
};

static void *work(void *arg)
{
    struct worker *w = arg;

    /* Spinning rather than sleeping on a barrier releases the threads together, so they
     * race on the same elements even when the rounds are short. */
    __atomic_sub_fetch(w->waiting, 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(w->waiting, __ATOMIC_ACQUIRE) > 0) {
        sched_yield();
    }
    for (int r = 0; r < ROUNDS; ++r) {
        w->reduce(w->shared, w->in, SHARED_COUNT);
    }
    return NULL;
}

/* Threads reducing into one array lose no update. */
static void check_threads(enum coll_async_ctype type, enum coll_async_cop op)
{
    static struct worker workers[THREADS];
    static uint64_t shared[SHARED_COUNT], want[SHARED_COUNT];
    pthread_t threads[THREADS];
    int waiting = THREADS;
    char text[2][32];

    fill(type, shared, SHARED_COUNT, 2);
    memcpy(want, shared, sizeof(shared));
    for (unsigned t = 0; t < THREADS; ++t) {
        struct worker *w = &workers[t];

        *w = (struct worker){coll_async_kernel_atomic(type, op), shared, {0}, &waiting};
        fill(type, w->in, SHARED_COUNT, 3 + t);
        for (int r = 0; r < ROUNDS; ++r) {
            ref_reduce(type, op, want, want, w->in, SHARED_COUNT);
        }
        assert_int_equal(pthread_create(&threads[t], NULL, work, w), 0);
    }
    for (unsigned t = 0; t < THREADS; ++t) {
        pthread_join(threads[t], NULL);
    }
    for (size_t i = 0; i < SHARED_COUNT; ++i) {
        if (!same(type, shared, want, i)) {
            fail_msg("atomic %s %s with %d threads: element %zu is %s, want %s",
                     type_names[type], op_names[op], THREADS, i, show(type, shared, i, text[0]),
                     show(type, want, i, text[1]));
        }
    }
}

/* Floating products are left out: whether they overflow depends on the order. */
static void test_atomic_threads(void **state)
{
    (void) state;
    for (enum coll_async_ctype type = 0; type < COLL_ASYNC_NUM_CTYPES; ++type) {
        for (enum coll_async_cop op = 0; op < COLL_ASYNC_NUM_COPS; ++op) {
            if (exists(type, op) && !(is_float(type) && COLL_ASYNC_PROD == op)) {
                check_threads(type, op);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup),           cmocka_unit_test(test_kernel),
        cmocka_unit_test(test_kernel3),          cmocka_unit_test(test_atomic_single),
        cmocka_unit_test(test_small_sums_wrap),  cmocka_unit_test(test_unsigned_max_min),
        cmocka_unit_test(test_logical_is_0_or_1), cmocka_unit_test(test_atomic_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
