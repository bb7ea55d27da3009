/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the verbs transport's registration cache. See coll_async_verbs_cache.h.
 *
 * The cached entries form one list in most-recently-used order: lookups walk it
 * from the front (the buffer of the last call is found first) and eviction takes
 * from the back. One mutex guards the lists, since invalidate comes from other
 * threads; the reg and dereg callbacks always run outside it (a dereg may free
 * memory, whose hook calls invalidate again).
 */

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "coll_async_verbs_cache.h"

struct coll_async_verbs_cache_entry {
    uintptr_t start, end; /* page-aligned [start, end) */
    void *handle;
    int holders;
    bool cached;          /* findable; else invalidated, deregistered once unheld */
    bool lasting;         /* kept once unheld; else deregistered at the last release */
    struct coll_async_verbs_cache_entry *prev, *next;
};

struct entry_list {
    struct coll_async_verbs_cache_entry *head, *tail;
};

struct coll_async_verbs_cache {
    struct coll_async_verbs_cache_ops ops;
    void *context;
    size_t capacity;
    uintptr_t page_mask;
    pthread_mutex_t lock;
    struct entry_list cached;  /* most recent first */
    struct entry_list doomed;  /* invalidated while held: deregistered on release */
    struct coll_async_verbs_cache_entry *dead; /* invalidated and unheld, linked by next */
    struct coll_async_verbs_cache_stats stats;
};

static size_t entry_bytes(const struct coll_async_verbs_cache_entry *entry)
{
    return entry->end - entry->start;
}

static void list_remove(struct entry_list *list, struct coll_async_verbs_cache_entry *entry)
{
    if (NULL != entry->prev) {
        entry->prev->next = entry->next;
    } else {
        list->head = entry->next;
    }
    if (NULL != entry->next) {
        entry->next->prev = entry->prev;
    } else {
        list->tail = entry->prev;
    }
    entry->prev = entry->next = NULL;
}

static void list_push_front(struct entry_list *list, struct coll_async_verbs_cache_entry *entry)
{
    entry->prev = NULL;
    entry->next = list->head;
    if (NULL != list->head) {
        list->head->prev = entry;
    } else {
        list->tail = entry;
    }
    list->head = entry;
}

/* Takes entry out of the findable set (the lock is held). */
static void uncache(struct coll_async_verbs_cache *cache,
                    struct coll_async_verbs_cache_entry *entry)
{
    list_remove(&cache->cached, entry);
    entry->cached = false;
    --cache->stats.entries;
    cache->stats.bytes -= entry_bytes(entry);
}

/* Moves the least recently used unheld entries onto *victims until the cache fits
 * its capacity or only held entries are left (the lock is held). */
static void evict(struct coll_async_verbs_cache *cache,
                  struct coll_async_verbs_cache_entry **victims)
{
    struct coll_async_verbs_cache_entry *entry = cache->cached.tail;

    while (cache->stats.bytes > cache->capacity && NULL != entry) {
        struct coll_async_verbs_cache_entry *older = entry->prev;

        if (0 == entry->holders) {
            uncache(cache, entry);
            entry->next = *victims;
            *victims = entry;
            ++cache->stats.evictions;
        }
        entry = older;
    }
}

/* Deregisters and frees a list linked by next (the lock is not held). */
static void deregister_all(struct coll_async_verbs_cache *cache,
                           struct coll_async_verbs_cache_entry *list)
{
    size_t count = 0;

    while (NULL != list) {
        struct coll_async_verbs_cache_entry *entry = list;

        list = entry->next;
        cache->ops.dereg(cache->context, entry->handle);
        free(entry);
        ++count;
    }
    if (0 != count) {
        pthread_mutex_lock(&cache->lock);
        cache->stats.deregistrations += count;
        pthread_mutex_unlock(&cache->lock);
    }
}

int coll_async_verbs_cache_create(struct coll_async_verbs_cache **out,
                                  const struct coll_async_verbs_cache_ops *ops, void *context,
                                  size_t capacity)
{
    struct coll_async_verbs_cache *cache = calloc(1, sizeof(*cache));
    long page = sysconf(_SC_PAGESIZE);

    *out = NULL;
    if (NULL == cache) {
        return -ENOMEM;
    }
    cache->ops = *ops;
    cache->context = context;
    cache->capacity = capacity;
    cache->page_mask = (uintptr_t) (page > 0 ? page : 4096) - 1;
    pthread_mutex_init(&cache->lock, NULL);
    *out = cache;
    return 0;
}

void coll_async_verbs_cache_destroy(struct coll_async_verbs_cache *cache)
{
    if (NULL == cache) {
        return;
    }
    coll_async_verbs_cache_collect(cache);
    /* Both lists are linked by next already. */
    deregister_all(cache, cache->cached.head);
    deregister_all(cache, cache->doomed.head);
    pthread_mutex_destroy(&cache->lock);
    free(cache);
}

static struct coll_async_verbs_cache_entry *find_covering(struct coll_async_verbs_cache *cache,
                                                          uintptr_t start, uintptr_t end)
{
    for (struct coll_async_verbs_cache_entry *entry = cache->cached.head; NULL != entry;
         entry = entry->next) {
        if (entry->start <= start && end <= entry->end) {
            return entry;
        }
    }
    return NULL;
}

int coll_async_verbs_cache_acquire(struct coll_async_verbs_cache *cache, const void *address,
                                   size_t length, struct coll_async_verbs_cache_entry **out)
{
    uintptr_t start = (uintptr_t) address, end = start + length;
    struct coll_async_verbs_cache_entry *entry, *victims = NULL;
    int rc;

    *out = NULL;
    if (0 == length || end < start) {
        return -EINVAL;
    }
    coll_async_verbs_cache_collect(cache);
    pthread_mutex_lock(&cache->lock);
    entry = find_covering(cache, start, end);
    if (NULL != entry) {
        ++entry->holders;
        ++cache->stats.hits;
        list_remove(&cache->cached, entry);
        list_push_front(&cache->cached, entry);
        pthread_mutex_unlock(&cache->lock);
        *out = entry;
        return 0;
    }
    pthread_mutex_unlock(&cache->lock);

    entry = calloc(1, sizeof(*entry));
    if (NULL == entry) {
        return -ENOMEM;
    }
    entry->start = start & ~cache->page_mask;
    entry->end = (end + cache->page_mask) & ~cache->page_mask;
    rc = cache->ops.reg(cache->context, (void *) entry->start, entry_bytes(entry), &entry->handle);
    if (0 != rc) {
        free(entry);
        return rc;
    }
    entry->holders = 1;
    entry->cached = true;
    entry->lasting = NULL == cache->ops.lasting
                     || cache->ops.lasting(cache->context, entry->start, entry->end);
    pthread_mutex_lock(&cache->lock);
    ++cache->stats.registrations;
    ++cache->stats.entries;
    cache->stats.bytes += entry_bytes(entry);
    list_push_front(&cache->cached, entry);
    evict(cache, &victims);
    pthread_mutex_unlock(&cache->lock);
    deregister_all(cache, victims);
    *out = entry;
    return 0;
}

void *coll_async_verbs_cache_handle(const struct coll_async_verbs_cache_entry *entry)
{
    return entry->handle;
}

void coll_async_verbs_cache_release(struct coll_async_verbs_cache *cache,
                                    struct coll_async_verbs_cache_entry *entry)
{
    struct coll_async_verbs_cache_entry *victims = NULL;

    pthread_mutex_lock(&cache->lock);
    if (0 == --entry->holders) {
        if (entry->cached && !entry->lasting) {
            uncache(cache, entry); /* nothing would tell us when its pages go */
            ++cache->stats.transients;
            victims = entry;
        } else if (entry->cached) {
            evict(cache, &victims);
        } else {
            list_remove(&cache->doomed, entry); /* invalidated while held: its turn has come */
            victims = entry;
        }
    }
    pthread_mutex_unlock(&cache->lock);
    deregister_all(cache, victims);
}

void coll_async_verbs_cache_invalidate(struct coll_async_verbs_cache *cache, const void *address,
                                       size_t length)
{
    uintptr_t start = (uintptr_t) address, end = start + length;
    struct coll_async_verbs_cache_entry *entry, *next;

    if (NULL == cache || 0 == length) {
        return;
    }
    pthread_mutex_lock(&cache->lock);
    for (entry = cache->cached.head; NULL != entry; entry = next) {
        next = entry->next;
        if (entry->start < end && start < entry->end) {
            uncache(cache, entry);
            ++cache->stats.invalidations;
            if (0 == entry->holders) {
                entry->next = cache->dead;
                cache->dead = entry;
            } else {
                list_push_front(&cache->doomed, entry);
            }
        }
    }
    pthread_mutex_unlock(&cache->lock);
}

void coll_async_verbs_cache_collect(struct coll_async_verbs_cache *cache)
{
    struct coll_async_verbs_cache_entry *dead;

    pthread_mutex_lock(&cache->lock);
    dead = cache->dead;
    cache->dead = NULL;
    pthread_mutex_unlock(&cache->lock);
    deregister_all(cache, dead);
}

void coll_async_verbs_cache_stats(struct coll_async_verbs_cache *cache,
                                  struct coll_async_verbs_cache_stats *stats)
{
    pthread_mutex_lock(&cache->lock);
    *stats = cache->stats;
    pthread_mutex_unlock(&cache->lock);
}
