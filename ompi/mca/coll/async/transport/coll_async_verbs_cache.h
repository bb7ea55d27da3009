/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the verbs transport's registration cache.
 *
 * Registering memory with an RDMA device pins it and costs a system call, and
 * collectives hand the same buffers to the transport call after call; so
 * registrations are kept and reused. An entry covers a page-aligned address
 * range; a request that falls inside a cached range reuses it. An entry a
 * transfer holds (acquired, not yet released) is never dropped; the others wait
 * in least-recently-used order, and the oldest are deregistered once the cached
 * bytes exceed the capacity.
 *
 * Freed memory must never be found again: its addresses may come back from the
 * allocator with other physical pages behind them, while the registration still
 * pins the old ones. invalidate() takes every overlapping entry out of the cache
 * at once; the deregistration itself waits until no transfer holds the entry, and
 * runs on the owner's thread (collect, acquire, release), because invalidate is
 * called from free() hooks on any thread, where calling into the driver is not
 * safe (it may allocate, and free again).
 *
 * Some memory is freed without any hook hearing of it: a range the lasting
 * callback says is such memory gets a registration that lasts only while
 * transfers hold it (it is findable by them; the last release deregisters it).
 *
 * Registration goes through two function pointers, so tests can fake and count it.
 * Threads: invalidate from any thread; everything else from the owner's.
 * Pure C with no Open MPI dependency.
 */

#ifndef MCA_COLL_ASYNC_VERBS_CACHE_H
#define MCA_COLL_ASYNC_VERBS_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct coll_async_verbs_cache;
struct coll_async_verbs_cache_entry;

struct coll_async_verbs_cache_ops {
    /* Registers [address, address + length); 0 with *handle set, or -errno. */
    int (*reg)(void *context, void *address, size_t length, void **handle);
    void (*dereg)(void *context, void *handle);
    /* Optional (NULL: every range): whether a registration of the page-aligned
     * [start, end) may be kept past its transfers, that is, whether every way
     * its pages can be freed reaches invalidate. Called by acquire, on the
     * owner's thread. */
    int (*lasting)(void *context, uintptr_t start, uintptr_t end);
};

struct coll_async_verbs_cache_stats {
    size_t entries, bytes;     /* cached now (findable), held ones included */
    size_t registrations;      /* reg calls that succeeded */
    size_t deregistrations;
    size_t hits, evictions, invalidations;
    size_t transients;         /* registrations not lasting, deregistered at release */
};

/* 0 or -ENOMEM; capacity: cached bytes above which unheld entries are evicted. */
int coll_async_verbs_cache_create(struct coll_async_verbs_cache **cache,
                                  const struct coll_async_verbs_cache_ops *ops, void *context,
                                  size_t capacity);

/* Deregisters every entry, held ones included (the owner has stopped using them). */
void coll_async_verbs_cache_destroy(struct coll_async_verbs_cache *cache);

/* Holds a registration covering [address, address + length), registering the
 * enclosing pages when no cached entry covers them. 0, -EINVAL (length 0), or
 * the reg callback's -errno. */
int coll_async_verbs_cache_acquire(struct coll_async_verbs_cache *cache, const void *address,
                                   size_t length, struct coll_async_verbs_cache_entry **entry);

/* What reg returned for the entry. */
void *coll_async_verbs_cache_handle(const struct coll_async_verbs_cache_entry *entry);

/* Lets go of an entry acquire returned. */
void coll_async_verbs_cache_release(struct coll_async_verbs_cache *cache,
                                    struct coll_async_verbs_cache_entry *entry);

/* The memory [address, address + length) is being freed. Any thread. */
void coll_async_verbs_cache_invalidate(struct coll_async_verbs_cache *cache, const void *address,
                                       size_t length);

/* Deregisters the invalidated entries nobody holds any more. */
void coll_async_verbs_cache_collect(struct coll_async_verbs_cache *cache);

void coll_async_verbs_cache_stats(struct coll_async_verbs_cache *cache,
                                  struct coll_async_verbs_cache_stats *stats);

#endif /* MCA_COLL_ASYNC_VERBS_CACHE_H */
