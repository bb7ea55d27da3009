/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */


/*
 * Unit tests of the shared-memory transport (test_mailbox.c, test_mailbox_guard.c):
 * the ranks and their pretend modex. Forked ranks (forked_ranks.h) exchange
 * blobs and meet at barriers through a shared anonymous mapping; the checks
 * that need no second process group two or three transports in this one.
 * Include after <cmocka.h>.
 */

#ifndef COLL_ASYNC_MAILBOX_RANKS_H
#define COLL_ASYNC_MAILBOX_RANKS_H

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test_keys.h"

#include "../../ompi/mca/coll/async/transport/coll_async_mailbox_internal.h"
#include "forked_ranks.h"

#define MAX_RANKS 4
#define CHUNK (16 * 1024)
#define CHUNKS 8
#define NODE 0x6e6f6465ull
#define BIG (16 << 20)
#define KILL_BYTES (32 << 20) /* more than 3 progress calls of the victim can move */

struct shared {
    int nranks;
    struct forked_barrier barrier;
    size_t blob_length[MAX_RANKS];
    uint8_t blob[MAX_RANKS][COLL_ASYNC_MAILBOX_ADDRESS_MAX];
};

static struct shared *shared;
static bool use_cma; /* the forked ranks' mode, set before they fork */

typedef struct coll_async_transport transport_t;
typedef void (*rank_fn)(int rank, int nranks);

static bool default_chunks; /* the ping-pong's: what the component will use */
static size_t cma_min = 64 * 1024; /* the tests': sizes around the chunk both ways */

static inline transport_t *open_one(uint32_t self, uint32_t nprocs, bool cma, uint64_t node)
{
    struct coll_async_mailbox_config config = {
        .self = self, .nprocs = nprocs, .key = test_key(self), .node = node,
        .try_cma = cma, .chunk_size = default_chunks ? 0 : CHUNK,
        .chunks = default_chunks ? 0 : CHUNKS, .cma_min = cma_min,
    };
    transport_t *t = NULL;

    return 0 == coll_async_mailbox_create(&config, &t) ? t : NULL;
}

static inline void step(transport_t *t)
{
    if (0 == t->ops->progress(t)) {
        sched_yield(); /* two cores, four busy ranks */
    }
}

static inline void step_any(void *t)
{
    step(t);
}

static inline void barrier(transport_t *t)
{
    forked_barrier_wait(&shared->barrier, shared->nranks, NULL != t ? step_any : NULL, t);
}

/* Creates this rank's transport, publishes its blob and adds every other rank. */
static inline transport_t *open_all(int rank, int nranks)
{
    transport_t *t = open_one((uint32_t) rank, (uint32_t) nranks, use_cma, NODE);
    int length;

    CHECK(NULL != t);
    length = t->ops->address(t, shared->blob[rank], COLL_ASYNC_MAILBOX_ADDRESS_MAX);
    CHECK(length > 0);
    shared->blob_length[rank] = (size_t) length;
    barrier(NULL);
    for (int peer = 0; peer < nranks; ++peer) {
        if (peer != rank) {
            CHECK(0 == t->ops->add_peer(t, (uint32_t) peer, test_key_of((uint32_t) peer),
                                        shared->blob[peer], shared->blob_length[peer]));
        }
    }
    barrier(NULL);
    return t;
}

static inline void wait_op(transport_t *t, const struct coll_async_transfer *op)
{
    while (COLL_ASYNC_TRANSFER_PENDING == op->status) {
        step(t);
    }
}

static inline uint8_t pattern(int sender, uint64_t k, size_t i)
{
    return (uint8_t) (sender * 131 + k * 7 + i * 13 + (i >> 12));
}

static inline void fill(uint8_t *data, size_t length, int sender, uint64_t k)
{
    for (size_t i = 0; i < length; ++i) {
        data[i] = pattern(sender, k, i);
    }
}

static inline bool holds(const uint8_t *data, size_t length, int sender, uint64_t k)
{
    for (size_t i = 0; i < length; ++i) {
        if (data[i] != pattern(sender, k, i)) {
            return false;
        }
    }
    return true;
}

struct job {
    rank_fn body;
    int nranks;
};

static inline void run_rank(int rank, void *context)
{
    const struct job *job = context;

    job->body(rank, job->nranks);
}

static inline pid_t spawn(int rank, int nranks, rank_fn body)
{
    struct job job = {body, nranks};

    return spawn_rank(rank, run_rank, &job);
}

static inline void reset_shared(int nranks)
{
    memset(shared, 0, sizeof(*shared));
    shared->nranks = nranks;
}

static inline void run_ranks(int nranks, rank_fn body, bool cma)
{
    pid_t pids[MAX_RANKS];
    int status[MAX_RANKS];

    use_cma = cma;
    reset_shared(nranks);
    for (int rank = 0; rank < nranks; ++rank) {
        pids[rank] = spawn(rank, nranks, body);
    }
    wait_ranks(nranks, pids, status);
    assert_ranks_exited_cleanly(nranks, pids, status);
}

/* In this process: a pair (or three) of transports */

struct group {
    int n;
    transport_t *t[3];
};

static inline void open_group(struct group *g, int n, bool cma)
{
    uint8_t blob[3][COLL_ASYNC_MAILBOX_ADDRESS_MAX];
    int length[3];

    g->n = n;
    for (int i = 0; i < n; ++i) {
        g->t[i] = open_one((uint32_t) i, (uint32_t) n, cma, NODE);
        assert_non_null(g->t[i]);
        length[i] = g->t[i]->ops->address(g->t[i], blob[i], sizeof(blob[i]));
        assert_true(length[i] > 0);
    }
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            if (i != j) {
                assert_int_equal(g->t[i]->ops->add_peer(g->t[i], (uint32_t) j,
                                                        test_key_of((uint32_t) j), blob[j],
                                                        (size_t) length[j]),
                                 0);
            }
        }
    }
}

static inline void group_step(struct group *g)
{
    for (int i = 0; i < g->n; ++i) {
        if (NULL != g->t[i]) {
            (void) g->t[i]->ops->progress(g->t[i]);
        }
    }
}

static inline void group_wait(struct group *g, const struct coll_async_transfer *op)
{
    for (long i = 0; COLL_ASYNC_TRANSFER_PENDING == op->status; ++i) {
        assert_true(i < 1000000); /* a deadlock, not a slow transfer */
        group_step(g);
    }
}

static inline void close_group(struct group *g)
{
    for (int i = 0; i < g->n; ++i) {
        if (NULL != g->t[i]) {
            g->t[i]->ops->destroy(g->t[i]);
        }
    }
}

/* The shared mapping, before the first test. 0 or -1. */
static inline int mailbox_ranks_init(void)
{
    shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                  0);
    return MAP_FAILED == shared ? -1 : 0;
}

#endif /* COLL_ASYNC_MAILBOX_RANKS_H */
