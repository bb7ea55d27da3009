/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: element-wise reduction kernels for the predefined C types and operations.
 *
 * Pure C with no Open MPI dependency, so the unit tests exercise it without MPI.
 * Results follow MPI: integer SUM and PROD wrap, MAX and MIN respect signedness,
 * logical operations yield 0 or 1, floating MAX is (a > b) ? a : b with a the
 * accumulated value.
 */

#ifndef MCA_COLL_ASYNC_KERNELS_H
#define MCA_COLL_ASYNC_KERNELS_H

#include <stddef.h>

enum coll_async_ctype {
    COLL_ASYNC_INT8,
    COLL_ASYNC_UINT8,
    COLL_ASYNC_INT16,
    COLL_ASYNC_UINT16,
    COLL_ASYNC_INT32,
    COLL_ASYNC_UINT32,
    COLL_ASYNC_INT64,
    COLL_ASYNC_UINT64,
    COLL_ASYNC_FLOAT,
    COLL_ASYNC_DOUBLE,
    COLL_ASYNC_NUM_CTYPES
};

enum coll_async_cop {
    COLL_ASYNC_SUM,
    COLL_ASYNC_PROD,
    COLL_ASYNC_MAX,
    COLL_ASYNC_MIN,
    COLL_ASYNC_LAND,
    COLL_ASYNC_LOR,
    COLL_ASYNC_LXOR,
    COLL_ASYNC_BAND,
    COLL_ASYNC_BOR,
    COLL_ASYNC_BXOR,
    COLL_ASYNC_NUM_COPS
};

/* inout[i] = inout[i] op in[i] for count elements; the buffers must not overlap. */
typedef void (*coll_async_kernel_fn)(void *inout, const void *in, size_t count);

/* out[i] = a[i] op b[i]; out may be exactly a or b, otherwise no overlap. */
typedef void (*coll_async_kernel3_fn)(void *out, const void *a, const void *b, size_t count);

/*
 * shared[i] = shared[i] op in[i], atomically per element, while other processes do
 * the same on the same memory. Relaxed ordering: the caller publishes the result
 * with its own release/acquire flag or barrier.
 */
typedef void (*coll_async_kernel_atomic_fn)(void *shared, const void *in, size_t count);

/*
 * Each returns NULL where MPI defines no such reduction here: logical and bitwise
 * operations on float and double, and out-of-range arguments. All three exist for
 * exactly the same (type, op) pairs.
 */
coll_async_kernel_fn coll_async_kernel(enum coll_async_ctype type, enum coll_async_cop op);
coll_async_kernel3_fn coll_async_kernel3(enum coll_async_ctype type, enum coll_async_cop op);
coll_async_kernel_atomic_fn coll_async_kernel_atomic(enum coll_async_ctype type,
                                                     enum coll_async_cop op);

/* Bytes per element, 0 for an out-of-range type. */
size_t coll_async_ctype_size(enum coll_async_ctype type);

#endif /* MCA_COLL_ASYNC_KERNELS_H */
