/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: a reduction as the algorithms apply it.
 *
 * Resolved once per call from the MPI datatype and operation: the component's own
 * kernels where it has them (coll_async_kernels.c), Open MPI's op otherwise.
 */

#ifndef MCA_COLL_ASYNC_REDUCTION_H
#define MCA_COLL_ASYNC_REDUCTION_H

#include <stdbool.h>
#include <stddef.h>

#include "coll_async_kernels.h"

struct ompi_datatype_t;
struct ompi_op_t;

struct coll_async_reduction {
    coll_async_kernel_fn kernel;               /* NULL: use op through Open MPI */
    coll_async_kernel3_fn kernel3;
    coll_async_kernel_atomic_fn kernel_atomic; /* NULL: no atomic form */
    size_t size;                               /* bytes per element */
    struct ompi_op_t *op;
    struct ompi_datatype_t *dtype;
};

/* Whether the component reduces this pair natively: not for user-defined
 * operations, derived datatypes or padded pairs. */
bool coll_async_reduction_supported(struct ompi_datatype_t *dtype, struct ompi_op_t *op);

/* Fills *reduction for a supported pair. */
void coll_async_reduction_resolve(struct coll_async_reduction *reduction,
                                  struct ompi_datatype_t *dtype, struct ompi_op_t *op);

/* inout[i] = inout[i] op in[i]. */
void coll_async_reduce(const struct coll_async_reduction *reduction, void *inout,
                       const void *in, size_t count);

/* out[i] = a[i] op b[i]; out may be a or b. */
void coll_async_reduce3(const struct coll_async_reduction *reduction, void *out, const void *a,
                        const void *b, size_t count);

#endif /* MCA_COLL_ASYNC_REDUCTION_H */
