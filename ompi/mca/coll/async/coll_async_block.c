/*
 * coll/async: blocks of typed data. See coll_async_block.h.
 */

#include "ompi_config.h"

#include <string.h>

#include "ompi/constants.h"
#include "ompi/datatype/ompi_datatype.h"
#include "opal/datatype/opal_convertor.h"

#include "coll_async_block.h"

void coll_async_block_set(struct coll_async_block *block, const void *base, size_t count,
                          struct ompi_datatype_t *dtype)
{
    size_t size;

    ompi_datatype_type_size(dtype, &size);
    block->base = (char *) base;
    block->dtype = dtype;
    block->count = count;
    block->bytes = size * count;
    block->contiguous = NULL;
    if (ompi_datatype_is_contiguous_memory_layout(dtype, (int32_t) count)) {
        ptrdiff_t true_lb, true_extent;

        ompi_datatype_get_true_extent(dtype, &true_lb, &true_extent);
        block->contiguous = block->base + true_lb;
    }
    OBJ_RETAIN(dtype);
}

void coll_async_block_release(struct coll_async_block *block)
{
    if (NULL != block->dtype) {
        OBJ_RELEASE(block->dtype);
        block->dtype = NULL;
    }
}

/* Packs (pack) or unpacks length bytes at stream position offset through a convertor. */
static int convert(const struct coll_async_block *block, size_t offset, void *memory,
                   size_t length, bool pack)
{
    opal_convertor_t convertor;
    struct iovec iov = {.iov_base = memory, .iov_len = length};
    uint32_t iov_count = 1;
    size_t position = offset, moved = length;
    int rc;

    OBJ_CONSTRUCT(&convertor, opal_convertor_t);
    if (pack) {
        rc = opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor,
                                                      &block->dtype->super, block->count,
                                                      block->base, 0, &convertor);
    } else {
        rc = opal_convertor_copy_and_prepare_for_recv(ompi_mpi_local_convertor,
                                                      &block->dtype->super, block->count,
                                                      block->base, 0, &convertor);
    }
    if (OPAL_SUCCESS == rc) {
        rc = opal_convertor_set_position(&convertor, &position);
    }
    if (OPAL_SUCCESS == rc) {
        rc = pack ? opal_convertor_pack(&convertor, &iov, &iov_count, &moved)
                  : opal_convertor_unpack(&convertor, &iov, &iov_count, &moved);
        rc = rc < 0 || moved != length ? OMPI_ERROR : OMPI_SUCCESS;
    }
    OBJ_DESTRUCT(&convertor);
    return rc;
}

int coll_async_block_pack(const struct coll_async_block *block, size_t offset, void *to,
                          size_t length)
{
    if (NULL != block->contiguous) {
        memcpy(to, block->contiguous + offset, length);
        return OMPI_SUCCESS;
    }
    return convert(block, offset, to, length, true);
}

int coll_async_block_unpack(const struct coll_async_block *block, size_t offset,
                            const void *from, size_t length)
{
    if (NULL != block->contiguous) {
        memcpy(block->contiguous + offset, from, length);
        return OMPI_SUCCESS;
    }
    return convert(block, offset, (void *) from, length, false);
}

int coll_async_block_copy(const struct coll_async_block *from, const struct coll_async_block *to)
{
    if (NULL == from->dtype || NULL == to->dtype || 0 == to->bytes
        || (from->base == to->base && from->dtype == to->dtype)) {
        return OMPI_SUCCESS;
    }
    return ompi_datatype_sndrcv(from->base, (int32_t) from->count, from->dtype, to->base,
                                (int32_t) to->count, to->dtype);
}
