/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: blocks of typed data. See coll_async_block.h.
 */

#include "ompi_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ompi/constants.h"
#include "ompi/datatype/ompi_datatype.h"
#include "opal/datatype/opal_convertor.h"

#include "coll_async_block.h"
#include "transport/coll_async_shm.h"

bool coll_async_block_contiguous(struct ompi_datatype_t *dtype, size_t count)
{
    /* count elements are contiguous when one is and the next starts where it ends. */
    return ompi_datatype_is_contiguous_memory_layout(dtype, 1)
           && (count <= 1 || ompi_datatype_is_contiguous_memory_layout(dtype, 2));
}

static void describe(struct coll_async_block *block, const void *base, size_t count,
                     struct ompi_datatype_t *dtype)
{
    size_t size;

    ompi_datatype_type_size(dtype, &size);
    block->base = (char *) base;
    block->dtype = dtype;
    block->count = count;
    block->bytes = size * count;
    block->contiguous = NULL;
    if (coll_async_block_contiguous(dtype, count)) {
        ptrdiff_t true_lb, true_extent;

        ompi_datatype_get_true_extent(dtype, &true_lb, &true_extent);
        block->contiguous = block->base + true_lb;
    }
}

void coll_async_block_set(struct coll_async_block *block, const void *base, size_t count,
                          struct ompi_datatype_t *dtype)
{
    describe(block, base, count, dtype);
    block->borrowed = false;
    OBJ_RETAIN(dtype);
}

void coll_async_block_borrow(struct coll_async_block *block, const void *base, size_t count,
                             struct ompi_datatype_t *dtype)
{
    describe(block, base, count, dtype);
    block->borrowed = true;
}

void coll_async_block_release(struct coll_async_block *block)
{
    if (NULL != block->dtype && !block->borrowed) {
        OBJ_RELEASE(block->dtype);
    }
    block->dtype = NULL;
}

/* A convertor over the block, at stream position *position. A send convertor
 * only stops between predefined elements, so it may settle before *position. */
static int open_convertor(const struct coll_async_block *block, bool pack, size_t *position,
                          opal_convertor_t *convertor)
{
    int rc;

    OBJ_CONSTRUCT(convertor, opal_convertor_t);
    if (pack) {
        rc = opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor,
                                                      &block->dtype->super, block->count,
                                                      block->base, 0, convertor);
    } else {
        rc = opal_convertor_copy_and_prepare_for_recv(ompi_mpi_local_convertor,
                                                      &block->dtype->super, block->count,
                                                      block->base, 0, convertor);
    }
    return OPAL_SUCCESS == rc ? opal_convertor_set_position(convertor, position) : rc;
}

/* One convertor step into or out of [memory, memory + length); *moved: bytes done. */
static int convert_step(opal_convertor_t *convertor, bool pack, void *memory, size_t length,
                        size_t *moved)
{
    struct iovec iov = {.iov_base = memory, .iov_len = length};
    uint32_t iov_count = 1;
    int rc;

    *moved = length;
    rc = pack ? opal_convertor_pack(convertor, &iov, &iov_count, moved)
              : opal_convertor_unpack(convertor, &iov, &iov_count, moved);
    return rc < 0 ? OMPI_ERROR : OMPI_SUCCESS;
}

/* The convertor packs whole predefined elements only, so a range that starts or
 * ends inside one (a chunk boundary through an MPI_SHORT_INT, say) packs that
 * element into scratch and keeps the part inside the range. */
static int pack_range(const struct coll_async_block *block, size_t offset, char *to,
                      size_t length)
{
    char scratch[64]; /* more than the largest predefined element */
    opal_convertor_t convertor;
    size_t position = offset, moved;
    int rc = open_convertor(block, true, &position, &convertor);
    size_t skip = offset - position; /* bytes of the first element before the range */
    bool stage = skip > 0;

    while (OMPI_SUCCESS == rc && length > 0) {
        if (!stage) {
            rc = convert_step(&convertor, true, to, length, &moved);
            to += moved, length -= moved;
            stage = 0 == moved; /* less than one element left */
            continue;
        }
        rc = convert_step(&convertor, true, scratch, sizeof(scratch), &moved);
        if (OMPI_SUCCESS == rc && moved <= skip) {
            rc = OMPI_ERROR; /* the range runs past the end of the block */
        } else if (OMPI_SUCCESS == rc) {
            size_t keep = moved - skip < length ? moved - skip : length;

            memcpy(to, scratch + skip, keep);
            to += keep, length -= keep;
            skip = 0, stage = false;
        }
    }
    OBJ_DESTRUCT(&convertor);
    return rc;
}

/* A receive convertor takes partial elements itself. */
static int unpack_range(const struct coll_async_block *block, size_t offset, const void *from,
                        size_t length)
{
    opal_convertor_t convertor;
    size_t position = offset, moved = 0;
    int rc = open_convertor(block, false, &position, &convertor);

    if (OMPI_SUCCESS == rc && position == offset) {
        rc = convert_step(&convertor, false, (void *) from, length, &moved);
    }
    OBJ_DESTRUCT(&convertor);
    return OMPI_SUCCESS == rc && moved == length ? OMPI_SUCCESS : OMPI_ERROR;
}

int coll_async_block_pack(const struct coll_async_block *block, size_t offset, void *to,
                          size_t length)
{
    if (NULL != block->contiguous) {
        coll_async_shm_copy(to, block->contiguous + offset, length);
        return OMPI_SUCCESS;
    }
    return pack_range(block, offset, to, length);
}

int coll_async_block_unpack(const struct coll_async_block *block, size_t offset,
                            const void *from, size_t length)
{
    if (NULL != block->contiguous) {
        coll_async_shm_copy(block->contiguous + offset, from, length);
        return OMPI_SUCCESS;
    }
    return unpack_range(block, offset, from, length);
}

/* bytes of from's stream into to's, past what Open MPI's own copy takes (int32_t
 * counts before 6.0): through a bounce buffer, a slice at a time. */
static int copy_through(const struct coll_async_block *from, const struct coll_async_block *to,
                        size_t bytes)
{
    enum { SLICE = 4 << 20 };
    char *bounce = malloc(SLICE);
    int rc = NULL == bounce ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;

    for (size_t done = 0; OMPI_SUCCESS == rc && done < bytes; done += SLICE) {
        size_t length = bytes - done < SLICE ? bytes - done : SLICE;

        rc = coll_async_block_pack(from, done, bounce, length);
        if (OMPI_SUCCESS == rc) {
            rc = coll_async_block_unpack(to, done, bounce, length);
        }
    }
    free(bounce);
    return rc;
}

/* The bytes a copy of from into to moves: none when either is empty or both are
 * the same data. */
static size_t copy_bytes(const struct coll_async_block *from, const struct coll_async_block *to)
{
    if (NULL == from->dtype || NULL == to->dtype
        || (from->base == to->base && from->dtype == to->dtype)) {
        return 0;
    }
    return from->bytes < to->bytes ? from->bytes : to->bytes;
}

int coll_async_block_copy(const struct coll_async_block *from, const struct coll_async_block *to)
{
    size_t bytes = copy_bytes(from, to);

    if (0 == bytes) {
        return OMPI_SUCCESS;
    }
    if (NULL != from->contiguous && NULL != to->contiguous) {
        memmove(to->contiguous, from->contiguous, bytes);
        return OMPI_SUCCESS;
    }
    if (from->count > INT32_MAX || to->count > INT32_MAX) {
        return copy_through(from, to, bytes);
    }
    return ompi_datatype_sndrcv(from->base, (int32_t) from->count, from->dtype, to->base,
                                (int32_t) to->count, to->dtype);
}

int coll_async_block_copy_part(const struct coll_async_block *from,
                               const struct coll_async_block *to, size_t *copied, size_t most)
{
    size_t bytes = copy_bytes(from, to), length;

    if (*copied >= bytes) {
        *copied = bytes;
        return OMPI_SUCCESS;
    }
    /* Overlapping ranges (not legal MPI, but memmove keeps them whole) go at once. */
    if (NULL == from->contiguous || NULL == to->contiguous
        || (from->contiguous < to->contiguous + bytes && to->contiguous < from->contiguous + bytes)) {
        *copied = bytes;
        return coll_async_block_copy(from, to);
    }
    length = bytes - *copied < most ? bytes - *copied : most;
    memcpy(to->contiguous + *copied, from->contiguous + *copied, length);
    *copied += length;
    return OMPI_SUCCESS;
}
