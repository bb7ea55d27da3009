/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: a communicator's channel inside a node.
 *
 * The shared-memory segment of the communicator's ranks on this node (created
 * when the communicator is: coll_async_shm.h), the sequence numbers its
 * collectives take in it, and single-copy get/put against a remote token (a
 * peer's buffer address, used through CMA). The shared-memory schedules reduce
 * and copy in place in its slots and poll its flags: it is the collective form
 * of shared memory. Its point-to-point form, to any peer of this node, is the
 * mailbox behind the mapper (coll_async_net.h, coll_async_mailbox.h).
 */

#ifndef MCA_COLL_ASYNC_CHANNEL_H
#define MCA_COLL_ASYNC_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll_async_shm.h"

struct coll_async_channel_config {
    size_t slot_size;  /* bytes per rank and parity in the segment */
    size_t piece_size; /* slots are written and announced in pieces of this size */
    bool cma;          /* try single copy through CMA */
    unsigned setup_timeout_ms; /* bound on each wait of the segment's set-up */
};

struct coll_async_channel {
    struct coll_async_shm_segment shm;
    uint64_t seq;      /* last sequence number handed out (posting thread) */
    char *bounce;      /* private staging for gets, bounce_size bytes */
    size_t bounce_size;
};

/* Opens the channel of a communicator whose nranks ranks share this node, over
 * the segment of id, creator its creating rank (coll_async_shm_prepare: this
 * rank's half of the set-up, which waits for nobody and makes nothing; vote
 * published to all at the attach). 0: to be settled before its first use, which
 * makes or attaches the segment; or -errno with failure saying why, and whether
 * every rank failed alike (failure->together); otherwise the channel stays
 * failed (coll_async_channel_settle says so) and the others' settle fails. */
int coll_async_channel_open(struct coll_async_channel *channel,
                           const struct coll_async_shm_identity *id, int nranks, int rank,
                           int creator, int32_t vote,
                           const struct coll_async_channel_config *config,
                           struct coll_async_shm_failure *failure);

/* Without blocking: COLL_ASYNC_SHM_AGAIN until every rank has attached, then 0
 * for good, or the error every rank gets alike (coll_async_shm_settle); -ENOMEM
 * for this rank alone when it cannot have its staging memory. */
int coll_async_channel_settle(struct coll_async_channel *channel,
                              struct coll_async_shm_failure *failure);
void coll_async_channel_close(struct coll_async_channel *channel);

/* Hands out count consecutive sequence numbers; returns the first. */
static inline uint64_t coll_async_channel_sequence(struct coll_async_channel *channel,
                                                  uint64_t count)
{
    uint64_t first = channel->seq + 1;

    channel->seq += count;
    return first;
}

/* Whether this rank failed to attach while the others did (coll_async_channel_open). */
static inline bool coll_async_channel_failed(const struct coll_async_channel *channel)
{
    return channel->shm.settled < 0;
}

static inline bool coll_async_channel_single_copy(const struct coll_async_channel *channel)
{
    return channel->shm.cma;
}

/* The token a peer uses to reach buffer: its address in this process. */
static inline uint64_t coll_async_channel_token(const void *buffer)
{
    return (uint64_t) (uintptr_t) buffer;
}

/* Reads length bytes at offset of the peer's buffer named by token. */
static inline int coll_async_channel_get(struct coll_async_channel *channel, int peer,
                                        void *local, uint64_t token, size_t offset,
                                        size_t length)
{
    return coll_async_shm_cma_read(&channel->shm, peer, local, token + offset, length);
}

static inline int coll_async_channel_put(struct coll_async_channel *channel, int peer,
                                        uint64_t token, size_t offset, const void *local,
                                        size_t length)
{
    return coll_async_shm_cma_write(&channel->shm, peer, token + offset, local, length);
}

#endif /* MCA_COLL_ASYNC_CHANNEL_H */
