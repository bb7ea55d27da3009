/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the reduction kernels, generated for every (type, op) pair MPI defines
 * on the predefined C types, and the table that finds them.
 *
 * Written as plain loops for the compiler to vectorize: build with -ftree-vectorize or -O3.
 * Plain gcc -O2 uses the very-cheap cost model, which leaves loops of unknown count and
 * aliasing scalar: 4 times slower for float, 14 times for int8.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "coll_async_kernels.h"

/* A lock-based fallback would lock within one process only, not across the shared mapping. */
#if ATOMIC_CHAR_LOCK_FREE != 2 || ATOMIC_SHORT_LOCK_FREE != 2 || \
    ATOMIC_INT_LOCK_FREE != 2 || ATOMIC_LLONG_LOCK_FREE != 2
#error "the atomic kernels need lock-free 1, 2, 4 and 8-byte atomics"
#endif

/*
 * The predefined types: enum name, C type, the type arithmetic is done in, and the
 * operations MPI defines on it. Integer arithmetic is unsigned so that overflow wraps
 * as MPI expects instead of being undefined; it is at least unsigned int so that the
 * promotion of uint16_t to int cannot overflow in a product.
 */
#define CTYPES(X)                          \
    X(INT8, int8_t, uint32_t, INT_OPS)     \
    X(UINT8, uint8_t, uint32_t, INT_OPS)   \
    X(INT16, int16_t, uint32_t, INT_OPS)   \
    X(UINT16, uint16_t, uint32_t, INT_OPS) \
    X(INT32, int32_t, uint32_t, INT_OPS)   \
    X(UINT32, uint32_t, uint32_t, INT_OPS) \
    X(INT64, int64_t, uint64_t, INT_OPS)   \
    X(UINT64, uint64_t, uint64_t, INT_OPS) \
    X(FLOAT, float, float, FLOAT_OPS)      \
    X(DOUBLE, double, double, FLOAT_OPS)

/* Operations with the atomic instruction that applies them; cas is a compare-and-swap loop. */
#define FLOAT_OPS(X, ...)     \
    X(SUM, cas, __VA_ARGS__)  \
    X(PROD, cas, __VA_ARGS__) \
    X(MAX, cas, __VA_ARGS__)  \
    X(MIN, cas, __VA_ARGS__)

#define INT_OPS(X, ...)             \
    X(SUM, fetch_add, __VA_ARGS__)  \
    X(PROD, cas, __VA_ARGS__)       \
    X(MAX, cas, __VA_ARGS__)        \
    X(MIN, cas, __VA_ARGS__)        \
    X(LAND, cas, __VA_ARGS__)       \
    X(LOR, cas, __VA_ARGS__)        \
    X(LXOR, cas, __VA_ARGS__)       \
    X(BAND, fetch_and, __VA_ARGS__) \
    X(BOR, fetch_or, __VA_ARGS__)   \
    X(BXOR, fetch_xor, __VA_ARGS__)

/* a op b computed in W. Logical operations avoid && and || so they stay branch-free. */
#define OP_SUM(W, a, b) ((W) (a) + (W) (b))
#define OP_PROD(W, a, b) ((W) (a) * (W) (b))
#define OP_MAX(W, a, b) ((a) > (b) ? (a) : (b))
#define OP_MIN(W, a, b) ((a) < (b) ? (a) : (b))
#define OP_LAND(W, a, b) (((a) != 0) & ((b) != 0))
#define OP_LOR(W, a, b) (((a) != 0) | ((b) != 0))
#define OP_LXOR(W, a, b) (((a) != 0) ^ ((b) != 0))
#define OP_BAND(W, a, b) ((a) & (b))
#define OP_BOR(W, a, b) ((a) | (b))
#define OP_BXOR(W, a, b) ((a) ^ (b))

/*
 * *p = *p op v atomically. Signed fetch_add wraps like the C11 atomics it implements.
 * The generic compare-exchange compares bytes, which also lets float loops finish on NaN.
 */
#define ATOMIC_fetch_add(OP, T, W, p, v) __atomic_fetch_add(p, v, __ATOMIC_RELAXED)
#define ATOMIC_fetch_and(OP, T, W, p, v) __atomic_fetch_and(p, v, __ATOMIC_RELAXED)
#define ATOMIC_fetch_or(OP, T, W, p, v) __atomic_fetch_or(p, v, __ATOMIC_RELAXED)
#define ATOMIC_fetch_xor(OP, T, W, p, v) __atomic_fetch_xor(p, v, __ATOMIC_RELAXED)
#define ATOMIC_cas(OP, T, W, p, v)                                                           \
    do {                                                                                     \
        T old, next;                                                                         \
        __atomic_load(p, &old, __ATOMIC_RELAXED);                                            \
        do {                                                                                 \
            next = (T) OP_##OP(W, old, v);                                                   \
        } while (!__atomic_compare_exchange(p, &old, &next, true, __ATOMIC_RELAXED,          \
                                            __ATOMIC_RELAXED));                              \
    } while (0)

/*
 * The three kernels of one (type, op). The three-buffer loop has no restrict, since out
 * may be a or b; gcc versions it with a runtime overlap check that lets exact aliasing
 * through to the vector loop.
 */
#define DEFINE_KERNELS(OP, HOW, NAME, T, W)                                                  \
    static void reduce_##NAME##_##OP(void *inout_, const void *in_, size_t count)            \
    {                                                                                        \
        T *restrict inout = inout_;                                                          \
        const T *restrict in = in_;                                                          \
        for (size_t i = 0; i < count; ++i) {                                                 \
            inout[i] = (T) OP_##OP(W, inout[i], in[i]);                                      \
        }                                                                                    \
    }                                                                                        \
    static void reduce3_##NAME##_##OP(void *out_, const void *a_, const void *b_,            \
                                      size_t count)                                          \
    {                                                                                        \
        T *out = out_;                                                                       \
        const T *a = a_, *b = b_;                                                            \
        for (size_t i = 0; i < count; ++i) {                                                 \
            out[i] = (T) OP_##OP(W, a[i], b[i]);                                             \
        }                                                                                    \
    }                                                                                        \
    static void atomic_##NAME##_##OP(void *shared_, const void *in_, size_t count)           \
    {                                                                                        \
        T *shared = shared_;                                                                 \
        const T *in = in_;                                                                   \
        for (size_t i = 0; i < count; ++i) {                                                 \
            ATOMIC_##HOW(OP, T, W, &shared[i], in[i]);                                       \
        }                                                                                    \
    }

#define DEFINE_TYPE(NAME, T, W, OPS) OPS(DEFINE_KERNELS, NAME, T, W)

CTYPES(DEFINE_TYPE)

struct kernels {
    coll_async_kernel_fn two;
    coll_async_kernel3_fn three;
    coll_async_kernel_atomic_fn atomic;
};

#define TABLE_ENTRY(OP, HOW, NAME, T, W)                                                     \
    [COLL_ASYNC_##NAME][COLL_ASYNC_##OP] = {reduce_##NAME##_##OP, reduce3_##NAME##_##OP,     \
                                            atomic_##NAME##_##OP},
#define TABLE_TYPE(NAME, T, W, OPS) OPS(TABLE_ENTRY, NAME, T, W)

static const struct kernels table[COLL_ASYNC_NUM_CTYPES][COLL_ASYNC_NUM_COPS] = {
    CTYPES(TABLE_TYPE)
};

#define SIZE_ENTRY(NAME, T, W, OPS) [COLL_ASYNC_##NAME] = sizeof(T),

static const size_t sizes[COLL_ASYNC_NUM_CTYPES] = {CTYPES(SIZE_ENTRY)};

static const struct kernels *lookup(enum coll_async_ctype type, enum coll_async_cop op)
{
    static const struct kernels none;

    if ((unsigned) type >= COLL_ASYNC_NUM_CTYPES || (unsigned) op >= COLL_ASYNC_NUM_COPS) {
        return &none;
    }
    return &table[type][op];
}

coll_async_kernel_fn coll_async_kernel(enum coll_async_ctype type, enum coll_async_cop op)
{
    return lookup(type, op)->two;
}

coll_async_kernel3_fn coll_async_kernel3(enum coll_async_ctype type, enum coll_async_cop op)
{
    return lookup(type, op)->three;
}

coll_async_kernel_atomic_fn coll_async_kernel_atomic(enum coll_async_ctype type,
                                                     enum coll_async_cop op)
{
    return lookup(type, op)->atomic;
}

size_t coll_async_ctype_size(enum coll_async_ctype type)
{
    return (unsigned) type < COLL_ASYNC_NUM_CTYPES ? sizes[type] : 0;
}
