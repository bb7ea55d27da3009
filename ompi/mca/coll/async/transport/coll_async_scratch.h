/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: temporary buffers kept from one collective to the next.
 *
 * Reductions between nodes need a vector of scratch, a node leader stages what
 * it aggregates, and a transfer that arrives before its receive is posted is
 * staged whole. malloc hands out buffers that large as fresh mappings and gives
 * them back at free, so every call paid one page fault per 4 KiB touched: in this
 * project's VM, 2 MiB alltoalls at 4 ranks on 2 virtual nodes took 44 ms, and 7 ms
 * with the buffers kept. So large buffers given back are kept, process-wide, up to
 * coll_async_scratch_keep_bytes, and the next take gets the smallest kept one
 * large enough.
 */

#ifndef MCA_COLL_ASYNC_SCRATCH_H
#define MCA_COLL_ASYNC_SCRATCH_H

#include <stddef.h>

/* Bytes this process keeps at most; 0 keeps none. Buffers given back beyond it
 * are freed (smaller kept ones first make room for a larger one). */
void coll_async_scratch_limit(size_t bytes);

/* At least bytes (at least 1), 64-byte aligned; NULL when out of memory. */
void *coll_async_scratch_take(size_t bytes);

/* Gives back a buffer of coll_async_scratch_take (NULL: nothing). */
void coll_async_scratch_give(void *buffer);

/* Bytes kept now. */
size_t coll_async_scratch_kept(void);

/* Frees every kept buffer (component close). */
void coll_async_scratch_drain(void);

#endif /* MCA_COLL_ASYNC_SCRATCH_H */
