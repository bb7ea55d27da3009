/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: one rank's data for one peer, as the MPI arguments describe it.
 *
 * A block is (buffer, count, datatype). The exchange schedules move it as a
 * stream of bytes in the datatype's type map order: copied straight where the
 * data is contiguous in memory, packed and unpacked through Open MPI's convertor
 * where it is not. A block holds a reference on its datatype, so a nonblocking or
 * persistent collective outlives the user's MPI_Type_free.
 */

#ifndef MCA_COLL_ASYNC_BLOCK_H
#define MCA_COLL_ASYNC_BLOCK_H

#include <stdbool.h>
#include <stddef.h>

struct ompi_datatype_t;

struct coll_async_block {
    char *base;                    /* the buffer as the user gave it */
    struct ompi_datatype_t *dtype; /* NULL: an empty block */
    size_t count;
    size_t bytes;                  /* packed size */
    char *contiguous;              /* first byte when the data is contiguous, else NULL */
    bool borrowed;                 /* dtype not retained: another block keeps it */
};

/* count dtype at base (base + displacement elements for the v-collectives),
 * retaining dtype. Application threads only: Open MPI counts references
 * atomically only when it runs threaded (opal_using_threads()), so a retain or a
 * release on the progress thread races with the application's own and loses
 * counts (issue 26: a predefined datatype's count reached 0 and was freed). */
void coll_async_block_set(struct coll_async_block *block, const void *base, size_t count,
                          struct ompi_datatype_t *dtype);
/* The same without a reference: for blocks the executing thread (the progress
 * thread, for a nonblocking collective) makes while it runs a collective, of a
 * datatype that a block set at the call keeps alive until the collective is
 * freed, or of a predefined one. */
void coll_async_block_borrow(struct coll_async_block *block, const void *base, size_t count,
                             struct ompi_datatype_t *dtype);
/* Drops the block's reference (none for a borrowed block). */
void coll_async_block_release(struct coll_async_block *block);

/* Whether count dtype lie in one contiguous range of memory, for any count (Open
 * MPI's own test takes an int32_t count before 6.0). */
bool coll_async_block_contiguous(struct ompi_datatype_t *dtype, size_t count);

/* Byte range [offset, offset + length) of the block's stream, to or from memory. */
int coll_async_block_pack(const struct coll_async_block *block, size_t offset, void *to,
                          size_t length);
int coll_async_block_unpack(const struct coll_async_block *block, size_t offset,
                            const void *from, size_t length);

/* The whole of from into to (same type signature); nothing when either is empty
 * or both are the same data. */
int coll_async_block_copy(const struct coll_async_block *from, const struct coll_async_block *to);

/* Part of that copy, resumed at *copied (bytes of the stream copied so far, 0 at
 * first): at most `most` bytes where both blocks are contiguous and apart, the
 * rest at once otherwise. *copied ends at the copy's length when it is done. */
int coll_async_block_copy_part(const struct coll_async_block *from,
                               const struct coll_async_block *to, size_t *copied, size_t most);

#endif /* MCA_COLL_ASYNC_BLOCK_H */
