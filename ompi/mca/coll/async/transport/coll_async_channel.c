/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: opening and closing a communicator's channel. See coll_async_channel.h.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "coll_async_channel.h"

/* Large reductions read peers' data through this many bytes at a time: small
 * enough to stay in cache between the read and the reduction. */
#define BOUNCE_SIZE (64 * 1024)

int coll_async_channel_open(struct coll_async_channel *channel,
                           const struct coll_async_shm_identity *id, int nranks, int rank,
                           int creator, int32_t vote,
                           const struct coll_async_channel_config *config,
                           struct coll_async_shm_failure *failure)
{
    struct coll_async_shm_config shm = {.slot_size = config->slot_size,
                                        .piece_size = config->piece_size,
                                        .try_cma = config->cma,
                                        .timeout_ms = config->setup_timeout_ms};

    channel->seq = 0;
    channel->bounce_size = BOUNCE_SIZE;
    channel->bounce = NULL; /* at the first settle */
    return coll_async_shm_prepare(&channel->shm, id, nranks, rank, creator, vote, &shm, failure);
}

int coll_async_channel_settle(struct coll_async_channel *channel,
                              struct coll_async_shm_failure *failure)
{
    /* At the first settle, not at creation: a communicator that runs no collective
     * costs no mapping (malloc maps this much afresh, and every MPI_Comm_free
     * unmapped it: 78 us of Open MPI 4.1's 81). A rank without this memory fails
     * its first collective, while the others wait for it there (with
     * MPI_ERRORS_ARE_FATAL, the default, the job ends). */
    if (NULL == channel->bounce && channel->shm.settled > 0
        && 0 != posix_memalign((void **) &channel->bounce, 64, 2 * BOUNCE_SIZE)) {
        channel->bounce = NULL;
        channel->shm.settled = -ENOMEM;
        snprintf(channel->shm.why, sizeof(channel->shm.why), "out of memory");
    }
    return coll_async_shm_settle(&channel->shm, failure);
}

void coll_async_channel_close(struct coll_async_channel *channel)
{
    coll_async_shm_detach(&channel->shm);
    free(channel->bounce);
    channel->bounce = NULL;
}
