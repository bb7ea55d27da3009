/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: allgather in shared memory.
 *
 * Through the slots: per chunk, every rank copies its part of its block into its
 * slot and then every slot's part out to its place, each piece as soon as its
 * writer has announced it. With CMA, for blocks larger
 * than a slot: every rank reads each other block straight from its owner.
 */

#include "ompi_config.h"

#include <string.h>

#include "ompi/constants.h"

#include "coll_async_schedule.h"

static char *block(const struct coll_async_sched *op, int rank)
{
    return (char *) op->rbuf + (size_t) rank * op->bytes;
}

static int staged(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);
    struct coll_async_shm_segment *shm = schedule_shm(op);

    for (;;) {
        size_t chunk = op->bytes - op->done < shm->slot_size ? op->bytes - op->done
                                                            : shm->slot_size;
        const char *mine = (const char *) op->sbuf + op->done;

        if (0 == op->phase) {
            if (!schedule_may_write(op)) {
                return COLL_ASYNC_AGAIN;
            }
            schedule_write_slot(op, mine, chunk, schedule_streaming(op));
            /* With MPI_IN_PLACE this rank's block is already in place. */
            if (block(op, shm->rank) + op->done != mine) {
                memcpy(block(op, shm->rank) + op->done, mine, chunk);
            }
            op->phase = 1;
            op->offset = 0;
        }
        /* Phase k: the chunk of rank me + k, as it comes. */
        for (; op->phase < shm->nranks; ++op->phase, op->offset = 0) {
            int rank = (shm->rank + op->phase) % shm->nranks;

            if (!schedule_copy_announced(op, rank, block(op, rank) + op->done, 0, 0, chunk)) {
                return COLL_ASYNC_AGAIN;
            }
        }
        op->done += chunk;
        if (op->done == op->bytes) {
            return OMPI_SUCCESS;
        }
        ++op->seq;
        op->phase = 0;
    }
}

static int single_copy(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);
    struct coll_async_shm_segment *shm = schedule_shm(op);

    if (0 == op->phase) {
        schedule_publish_tokens(op, op->sbuf, op->sbuf);
        schedule_publish(op, COLL_ASYNC_SHM_ARRIVED);
        op->phase = 1;
    }
    if (1 == op->phase) {
        if (!schedule_all(op, COLL_ASYNC_SHM_ARRIVED, op->seq)) {
            return COLL_ASYNC_AGAIN;
        }
        for (int rank = 0; rank < shm->nranks; ++rank) {
            if (rank == shm->rank) {
                if (block(op, rank) != op->sbuf) {
                    memcpy(block(op, rank), op->sbuf, op->bytes);
                }
            } else if (0 != coll_async_channel_get(op->channel, rank, block(op, rank),
                                                  schedule_token(op, rank, 0), 0, op->bytes)) {
                return OMPI_ERROR;
            }
        }
        schedule_publish(op, COLL_ASYNC_SHM_DONE);
        op->phase = 2;
    }
    return schedule_all(op, COLL_ASYNC_SHM_DONE, op->seq) ? OMPI_SUCCESS : COLL_ASYNC_AGAIN;
}

void coll_async_allgather_begin(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);

    schedule_by_size(op, COLL_ASYNC_FAMILY_ALLGATHER, single_copy, staged);
}
