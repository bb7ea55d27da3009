/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: mapping MPI datatypes and operations to kernels. See
 * coll_async_reduction.h.
 */

#include "ompi_config.h"

#include <string.h>

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/datatype/ompi_datatype_internal.h"
#include "ompi/op/op.h"

#include "coll_async_reduction.h"

/* The C element type behind a predefined datatype, or -1 when the kernels do not
 * cover it (pairs, complex, long double, bool, Fortran types). */
static int ctype_of(const struct ompi_datatype_t *dtype)
{
    switch (dtype->id) {
    case OMPI_DATATYPE_MPI_INT8_T: return COLL_ASYNC_INT8;
    case OMPI_DATATYPE_MPI_UINT8_T: return COLL_ASYNC_UINT8;
    case OMPI_DATATYPE_MPI_INT16_T: return COLL_ASYNC_INT16;
    case OMPI_DATATYPE_MPI_UINT16_T: return COLL_ASYNC_UINT16;
    case OMPI_DATATYPE_MPI_INT32_T: return COLL_ASYNC_INT32;
    case OMPI_DATATYPE_MPI_UINT32_T: return COLL_ASYNC_UINT32;
    case OMPI_DATATYPE_MPI_INT64_T: return COLL_ASYNC_INT64;
    case OMPI_DATATYPE_MPI_UINT64_T: return COLL_ASYNC_UINT64;
    case OMPI_DATATYPE_MPI_FLOAT: return COLL_ASYNC_FLOAT;
    case OMPI_DATATYPE_MPI_DOUBLE: return COLL_ASYNC_DOUBLE;
    /* MPI_LONG and friends have ids of their own; map them by size and sign. */
    case OMPI_DATATYPE_MPI_LONG:
    case OMPI_DATATYPE_MPI_AINT:
    case OMPI_DATATYPE_MPI_OFFSET:
    case OMPI_DATATYPE_MPI_COUNT:
        return 8 == dtype->super.size ? COLL_ASYNC_INT64 : COLL_ASYNC_INT32;
    case OMPI_DATATYPE_MPI_UNSIGNED_LONG:
        return 8 == dtype->super.size ? COLL_ASYNC_UINT64 : COLL_ASYNC_UINT32;
    default:
        return -1;
    }
}

static int cop_of(const struct ompi_op_t *op)
{
    switch (op->op_type) {
    case OMPI_OP_SUM: return COLL_ASYNC_SUM;
    case OMPI_OP_PROD: return COLL_ASYNC_PROD;
    case OMPI_OP_MAX: return COLL_ASYNC_MAX;
    case OMPI_OP_MIN: return COLL_ASYNC_MIN;
    case OMPI_OP_LAND: return COLL_ASYNC_LAND;
    case OMPI_OP_LOR: return COLL_ASYNC_LOR;
    case OMPI_OP_LXOR: return COLL_ASYNC_LXOR;
    case OMPI_OP_BAND: return COLL_ASYNC_BAND;
    case OMPI_OP_BOR: return COLL_ASYNC_BOR;
    case OMPI_OP_BXOR: return COLL_ASYNC_BXOR;
    default: return -1;
    }
}

bool coll_async_reduction_supported(struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    /* The MPI layer has checked that op is defined on dtype. Pairs with padding
     * (MPI_DOUBLE_INT, ...) are not plain arrays of their size: handed on. */
    return ompi_op_is_intrinsic(op) && ompi_datatype_is_predefined(dtype)
           && (ptrdiff_t) dtype->super.size == dtype->super.ub - dtype->super.lb;
}

void coll_async_reduction_resolve(struct coll_async_reduction *reduction,
                                  struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    int ctype, cop;

    memset(reduction, 0, sizeof(*reduction));
    reduction->op = op;
    reduction->dtype = dtype;
    reduction->size = dtype->super.size;
    ctype = ctype_of(dtype);
    cop = cop_of(op);
    if (ctype >= 0 && cop >= 0) {
        reduction->kernel = coll_async_kernel(ctype, cop);
        reduction->kernel3 = coll_async_kernel3(ctype, cop);
        reduction->kernel_atomic = coll_async_kernel_atomic(ctype, cop);
    }
}

void coll_async_reduce(const struct coll_async_reduction *reduction, void *inout,
                       const void *in, size_t count)
{
    if (NULL != reduction->kernel) {
        reduction->kernel(inout, in, count);
    } else {
        ompi_op_reduce(reduction->op, (void *) in, inout, count, reduction->dtype);
    }
}

void coll_async_reduce3(const struct coll_async_reduction *reduction, void *out, const void *a,
                        const void *b, size_t count)
{
    if (NULL != reduction->kernel3) {
        reduction->kernel3(out, a, b, count);
        return;
    }
    /* out = a op b, with Open MPI's op taking (in, inout). */
    if (out == b) {
        ompi_op_reduce(reduction->op, (void *) a, out, count, reduction->dtype);
        return;
    }
    if (out != a) {
        memcpy(out, a, count * reduction->size);
    }
    ompi_op_reduce(reduction->op, (void *) b, out, count, reduction->dtype);
}
