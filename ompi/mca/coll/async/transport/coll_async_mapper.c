/*
 * coll/async: opening and closing a communicator's channel. See coll_async_mapper.h.
 */

#include <errno.h>
#include <stdlib.h>

#include "coll_async_mapper.h"

/* Large reductions read peers' data through this many bytes at a time: small
 * enough to stay in cache between the read and the reduction. */
#define BOUNCE_SIZE (64 * 1024)

int coll_async_mapper_open(struct coll_async_channel *channel, const char *name, int nranks,
                           int rank, const struct coll_async_channel_config *config)
{
    int rc;

    channel->seq = 0;
    channel->bounce_size = BOUNCE_SIZE;
    if (0 != posix_memalign((void **) &channel->bounce, 64, 2 * BOUNCE_SIZE)) {
        return -ENOMEM;
    }
    rc = coll_async_shm_attach(&channel->shm, name, nranks, rank, config->slot_size,
                               config->piece_size, config->cma);
    if (0 != rc) {
        free(channel->bounce);
        channel->bounce = NULL;
    }
    return rc;
}

void coll_async_mapper_close(struct coll_async_channel *channel)
{
    coll_async_shm_detach(&channel->shm);
    free(channel->bounce);
    channel->bounce = NULL;
}
