/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: temporary buffers kept from one collective to the next. See
 * coll_async_scratch.h.
 */

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "coll_async_scratch.h"

#define ALIGN 64
/* Smaller buffers come from malloc's heap, which keeps them itself. */
#define KEPT_FROM (64 * 1024)
#define PAGE 4096
#define SLOTS 8
/* From here, in transparent huge pages where the system grants them on request
 * (/sys/kernel/mm/transparent_hugepage/enabled: madvise or always): a fresh
 * buffer costs one fault per 2 MiB instead of 512, 0.13 instead of 9.4 ms per
 * 2 MiB in this project's VM. */
#define HUGE (2 * 1024 * 1024)

/* Before each buffer: its capacity, one alignment unit. */
struct header {
    size_t capacity;
};

_Static_assert(sizeof(struct header) <= ALIGN, "the header fits its unit");

/* Taken and given back by the callers' threads and the progress thread. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct header *kept[SLOTS];
static size_t kept_bytes, limit;

static void *payload(struct header *h)
{
    return (char *) h + ALIGN;
}

void coll_async_scratch_limit(size_t bytes)
{
    pthread_mutex_lock(&lock);
    limit = bytes;
    pthread_mutex_unlock(&lock);
}

/* Under the lock: the slot of the smallest kept buffer of from to below bytes
 * (below excluded); -1 if none. */
static int smallest_kept(size_t from, size_t below)
{
    int best = -1;

    for (int i = 0; i < SLOTS; ++i) {
        if (NULL != kept[i] && kept[i]->capacity >= from && kept[i]->capacity < below
            && (best < 0 || kept[i]->capacity < kept[best]->capacity)) {
            best = i;
        }
    }
    return best;
}

/* Under the lock: the smallest kept buffer of at least bytes, taken out; NULL if none. */
static struct header *take_kept(size_t bytes)
{
    int best = smallest_kept(bytes, SIZE_MAX);
    struct header *h;

    if (best < 0) {
        return NULL;
    }
    h = kept[best];
    kept[best] = NULL;
    kept_bytes -= h->capacity;
    return h;
}

void *coll_async_scratch_take(size_t bytes)
{
    struct header *h = NULL;
    size_t capacity = bytes ? bytes : 1;
    void *memory;

    if (capacity > SIZE_MAX / 2) {
        return NULL;
    }
    if (capacity >= KEPT_FROM) {
        pthread_mutex_lock(&lock);
        h = take_kept(capacity);
        pthread_mutex_unlock(&lock);
        if (NULL != h) {
            return payload(h);
        }
        capacity = (capacity + PAGE - 1) / PAGE * PAGE;
    }
    if (0 != posix_memalign(&memory, capacity >= HUGE ? HUGE : ALIGN, ALIGN + capacity)) {
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    if (capacity >= HUGE) {
        (void) madvise(memory, ALIGN + capacity, MADV_HUGEPAGE); /* a hint: fine to fail */
    }
#endif
    h = memory;
    h->capacity = capacity;
    return payload(h);
}

/* Under the lock: an empty slot; -1 if none. */
static int empty_slot(void)
{
    for (int i = 0; i < SLOTS; ++i) {
        if (NULL == kept[i]) {
            return i;
        }
    }
    return -1;
}

/* Under the lock: slot i emptied, its buffer added to those to free. */
static void drop(int i, struct header **dropped, int *drops)
{
    kept_bytes -= kept[i]->capacity;
    dropped[(*drops)++] = kept[i];
    kept[i] = NULL;
}

void coll_async_scratch_give(void *buffer)
{
    struct header *h, *dropped[SLOTS];
    int drops = 0, slot;

    if (NULL == buffer) {
        return;
    }
    h = (struct header *) ((char *) buffer - ALIGN);
    if (h->capacity >= KEPT_FROM) {
        pthread_mutex_lock(&lock);
        if (h->capacity <= limit) {
            /* Room made by dropping smaller buffers, smallest first. */
            while (kept_bytes + h->capacity > limit && (slot = smallest_kept(0, h->capacity)) >= 0) {
                drop(slot, dropped, &drops);
            }
            slot = empty_slot();
            if (slot < 0 && (slot = smallest_kept(0, h->capacity)) >= 0) {
                drop(slot, dropped, &drops);
            }
            if (slot >= 0 && kept_bytes + h->capacity <= limit) {
                kept[slot] = h;
                kept_bytes += h->capacity;
                h = NULL;
            }
        }
        pthread_mutex_unlock(&lock);
    }
    for (int i = 0; i < drops; ++i) {
        free(dropped[i]);
    }
    free(h);
}

size_t coll_async_scratch_kept(void)
{
    size_t bytes;

    pthread_mutex_lock(&lock);
    bytes = kept_bytes;
    pthread_mutex_unlock(&lock);
    return bytes;
}

void coll_async_scratch_drain(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < SLOTS; ++i) {
        free(kept[i]);
        kept[i] = NULL;
    }
    kept_bytes = 0;
    pthread_mutex_unlock(&lock);
}
