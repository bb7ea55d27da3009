/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: segments parked for reuse.
 *
 * A new segment costs its file's pages: allocated at the first collective (1-2
 * us a page, 1.5 MB for two ranks) and freed again at MPI_Comm_free, with the
 * launcher asked to remove the file meanwhile. Programs that create and free
 * communicators in a loop (a library's private communicator per call, threads
 * each with their own) paid that at every one. So a rank freeing a communicator
 * keeps its segment mapped, parked, and the creator of a later communicator of
 * the same family (the same members in the same order, for the same purpose)
 * claims one that every member parked, clears it and hands it on; the others
 * take theirs back. No file, no page allocated, nothing asked of the launcher.
 *
 * Each rank's park word (its control line's last) says where it stands:
 *
 *   ACTIVE (0, as a new file reads)  --rank frees the communicator-->  PARKED
 *   PARKED  --creator claims, by CAS, generation g-->  CLAIMED(g)  --rank takes it-->  ACTIVE
 *   PARKED  --rank drops it (limit, finalize), by CAS-->  GONE
 *
 * The creator claims only when the CAS succeeds for every other member (else it
 * puts back those it took and makes a file as before), so a claimed segment is
 * one no member still uses, and one every member still has: a member that
 * dropped it first said GONE. The creator stores the generation in the header
 * last, once the segment is cleared; a member takes back a segment whose park
 * word and header carry the same generation and whose header token is the new
 * communicator's. A member whose copy the creator claimed keeps it whatever its
 * limit. The creator dropping its own parked segment marks it retired, for the
 * members to drop theirs.
 *
 * The process-wide list is bounded in bytes (coll_async_shm_pool_limit), oldest
 * dropped first; the pages of a dropped segment go when the last member unmaps it.
 */

#ifndef MCA_COLL_ASYNC_SHM_POOL_H
#define MCA_COLL_ASYNC_SHM_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll_async_shm.h"

/* Segments taken again instead of made or attached, by this process. */
extern volatile int64_t coll_async_shm_reused;

/* Bytes of parked segments this process keeps mapped at most; 0 parks none. */
void coll_async_shm_pool_limit(size_t bytes);

/* This rank's segment, settled, as its communicator goes: true when parked (the
 * pool keeps the mapping), false when the caller unmaps it (and, from the
 * creator, the members drop their copies). */
bool coll_async_shm_pool_park(const struct coll_async_shm_segment *segment);

/* The creator, at its first collective: a segment of segment's family and layout
 * that every member parked, claimed and placed at segment->base, to be cleared
 * and then announced with the generation returned; 0 when there is none. */
uint64_t coll_async_shm_pool_claim(struct coll_async_shm_segment *segment);

/* Another member, at its first collective: the parked segment its creator
 * claimed for the communicator whose header token is token, placed at
 * segment->base; false while there is none (the creator may make a file
 * instead, or not have come yet). */
bool coll_async_shm_pool_take(struct coll_async_shm_segment *segment, uint64_t token);

/* Unmaps every parked segment (component close). */
void coll_async_shm_pool_drain(void);

#endif /* MCA_COLL_ASYNC_SHM_POOL_H */
