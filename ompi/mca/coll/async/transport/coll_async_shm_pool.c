/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: segments parked for reuse. See coll_async_shm_pool.h.
 */

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "coll_async_shm_header.h"
#include "coll_async_shm_pool.h"

#define ACTIVE 0
#define PARKED 1
#define GONE 2
#define CLAIMED(generation) (3 | (generation) << 2)

volatile int64_t coll_async_shm_reused;

/* One parked segment, as this rank had it. */
struct parked {
    struct parked *next; /* the list runs oldest first */
    void *base;
    size_t length;
    struct coll_async_shm_control *control;
    uint64_t family;
    int nranks, rank, creator;
    size_t slot_size, piece_size;
};

/* Communicators are created and freed from any thread, and settled from the
 * progress thread too: one lock, held for list walks and a few atomics. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct parked *oldest;
static size_t parked_bytes, limit_bytes;

static struct segment_header *header_of(const struct parked *p)
{
    return p->base;
}

static volatile uint64_t *park_word(const struct parked *p, int rank)
{
    return &p->control[rank].park;
}

static bool same_shape(const struct parked *p, const struct coll_async_shm_segment *segment)
{
    return p->family == segment->id.family && p->nranks == segment->nranks
           && p->rank == segment->rank && p->creator == segment->creator
           && p->slot_size == segment->slot_size && p->piece_size == segment->piece_size;
}

static void unlink_entry(struct parked **link)
{
    struct parked *p = *link;

    *link = p->next;
    parked_bytes -= p->length;
}

/* The creator's word that it keeps the segment no more: nobody can claim the
 * members' copies now, and they drop them. */
static void retire(void *base)
{
    __atomic_store_n(&((struct segment_header *) base)->retired, 1, __ATOMIC_RELEASE);
}

/* Whether this rank may let p go: the creator retires its segment; a member says
 * GONE, unless the creator claimed its copy meanwhile. */
static bool let_go(const struct parked *p)
{
    uint64_t expected = PARKED;

    if (p->rank == p->creator) {
        retire(p->base);
        return true;
    }
    return __atomic_compare_exchange_n(park_word(p, p->rank), &expected, GONE, false,
                                       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* Unlinks and unmaps the entry at link. */
static void release(struct parked **link)
{
    struct parked *p = *link;

    unlink_entry(link);
    munmap(p->base, p->length);
    free(p);
}

/* Drops the oldest until bytes more fit, sparing copies the creator claimed
 * meanwhile (their members take them back soon). */
static void make_room(size_t bytes)
{
    struct parked **link = &oldest;

    while (NULL != *link && parked_bytes + bytes > limit_bytes) {
        if (let_go(*link)) {
            release(link);
        } else {
            link = &(*link)->next;
        }
    }
}

void coll_async_shm_pool_limit(size_t bytes)
{
    pthread_mutex_lock(&lock);
    limit_bytes = bytes;
    make_room(0);
    pthread_mutex_unlock(&lock);
}

bool coll_async_shm_pool_park(const struct coll_async_shm_segment *segment)
{
    struct parked *p, **link;

    if (segment->length > __atomic_load_n(&limit_bytes, __ATOMIC_RELAXED)
        || NULL == (p = malloc(sizeof(*p)))) {
        if (segment->rank == segment->creator) {
            retire(segment->base);
        }
        return false;
    }
    *p = (struct parked){.base = segment->base, .length = segment->length,
                         .control = segment->control,
                         .family = segment->id.family, .nranks = segment->nranks,
                         .rank = segment->rank, .creator = segment->creator,
                         .slot_size = segment->slot_size, .piece_size = segment->piece_size};
    pthread_mutex_lock(&lock);
    make_room(p->length);
    for (link = &oldest; NULL != *link; link = &(*link)->next) {
    }
    *link = p;
    parked_bytes += p->length;
    /* Released last: everything this rank did in the segment comes before the
     * creator's claim, which clears it. */
    if (p->rank != p->creator) {
        __atomic_store_n(park_word(p, p->rank), PARKED, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return true;
}

/* Claims every other member's copy of p, or none: CLAIMED(generation) in each
 * park word that says PARKED. */
static bool claim_all(struct parked *p, uint64_t generation)
{
    for (int rank = 0; rank < p->nranks; ++rank) {
        uint64_t expected = PARKED;

        if (rank == p->creator) {
            continue;
        }
        if (!__atomic_compare_exchange_n(park_word(p, rank), &expected,
                                         CLAIMED(generation), false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE)) {
            while (--rank >= 0) { /* those taken: nobody else writes them now */
                if (rank != p->creator) {
                    __atomic_store_n(park_word(p, rank), PARKED, __ATOMIC_RELEASE);
                }
            }
            return false;
        }
    }
    return true;
}

/* Moves the entry at link out of the list into segment. */
static void place_into(struct coll_async_shm_segment *segment, struct parked **link)
{
    struct parked *p = *link;

    unlink_entry(link);
    segment->base = p->base;
    segment->length = p->length;
    segment->reused = true;
    free(p);
    __atomic_add_fetch(&coll_async_shm_reused, 1, __ATOMIC_RELAXED);
}

uint64_t coll_async_shm_pool_claim(struct coll_async_shm_segment *segment)
{
    uint64_t generation = 0;

    pthread_mutex_lock(&lock);
    for (struct parked **link = &oldest; NULL != *link; link = &(*link)->next) {
        struct parked *p = *link;
        uint64_t next = header_of(p)->claimed + 1; /* only this process writes it */

        if (same_shape(p, segment) && claim_all(p, next)) {
            place_into(segment, link);
            generation = next;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return generation;
}

bool coll_async_shm_pool_take(struct coll_async_shm_segment *segment, uint64_t token)
{
    struct parked **link = &oldest;
    bool taken = false;

    pthread_mutex_lock(&lock);
    while (NULL != *link) {
        struct parked *p = *link;
        struct segment_header *header = header_of(p);
        volatile uint64_t *park = park_word(p, p->rank);
        uint64_t generation;

        if (p->rank != p->creator && __atomic_load_n(&header->retired, __ATOMIC_ACQUIRE)
            && let_go(p)) {
            release(link); /* its creator let it go: nobody claims it again */
            continue;
        }
        generation = __atomic_load_n(&header->claimed, __ATOMIC_ACQUIRE);
        if (same_shape(p, segment) && p->rank != p->creator
            && CLAIMED(generation) == __atomic_load_n(park, __ATOMIC_ACQUIRE)
            && token == header->token) {
            __atomic_store_n(park, ACTIVE, __ATOMIC_RELAXED); /* only this rank writes it now */
            place_into(segment, link);
            taken = true;
            break;
        }
        link = &p->next;
    }
    pthread_mutex_unlock(&lock);
    return taken;
}

void coll_async_shm_pool_drain(void)
{
    pthread_mutex_lock(&lock);
    while (NULL != oldest) {
        (void) let_go(oldest); /* or claimed, for a communicator never used here */
        release(&oldest);
    }
    pthread_mutex_unlock(&lock);
}
