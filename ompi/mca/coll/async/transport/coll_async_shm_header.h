/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the header at the start of every shared-memory segment, as the
 * set-up (coll_async_shm.c) and reuse (coll_async_shm_pool.c) read and write it.
 * Internal to the shared-memory transport.
 */

#ifndef MCA_COLL_ASYNC_SHM_HEADER_H
#define MCA_COLL_ASYNC_SHM_HEADER_H

#include <stdint.h>

#include "coll_async_shm.h"

#define SEGMENT_MAGIC 0x636f6c6c6173796eULL /* "collasyn" */
#define SEGMENT_VERSION 3

/* The decision: ranks counted and a bit that, once set, says every rank
 * fails. The bit is set only while the count is short, and a rank's count is an
 * attachment only when the bit was clear as it counted (after, it acknowledges
 * the failure): whichever comes first of "all counted" and "failed" holds for
 * every rank. */
#define STATE_FAILED (1ULL << 63)
#define STATE_COUNT(state) ((state) & ~STATE_FAILED)

/* The same for CMA: ranks whose probe read their neighbour, and a refusal. */
#define CMA_DECLINED (1ULL << 63)

/* Why a segment failed, kept in the header for the creator to report. */
enum failure_cause {
    CAUSE_NONE,
    CAUSE_PARAMETERS, /* a rank was given other slot or piece sizes */
    CAUSE_NO_SPACE,   /* a rank could not allocate (or map) its part of the segment */
};

struct segment_header {
    volatile uint64_t magic; /* set last by the creator: the fields below are final */
    uint32_t version;
    uint32_t nranks;
    uint64_t slot_size;
    uint64_t piece_size;
    uint64_t length;
    uint64_t token;           /* MAC under the creator's key of the identity and the above */
    volatile uint64_t state;  /* STATE_FAILED | ranks counted */
    volatile uint64_t cause;  /* the first failure: cause << 48 | errno << 16 | rank */
    volatile uint64_t cma;    /* CMA_DECLINED | ranks whose probe succeeded */
    /* Reuse (coll_async_shm_pool.h), the creator's words: the generation of its
     * last claim, stored once the segment is cleared for the communicator that
     * claim was for, and whether it gave the segment up for good. */
    volatile uint64_t claimed;
    volatile uint64_t retired;
} __attribute__((aligned(COLL_ASYNC_SHM_LINE)));

#endif /* MCA_COLL_ASYNC_SHM_HEADER_H */
