/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: broadcast in shared memory.
 *
 * A few bytes (COLL_ASYNC_SHM_INLINE_BYTES) travel inline in the root's control
 * block, where the others wait for them. Up to a slot: the root copies into its
 * slot, the others copy out, chunk after chunk with the two slot parities
 * double-buffering, so the root fills the next chunk while the others drain the
 * last; inside a chunk, the others copy each piece out as soon as the root has
 * announced it. Beyond a slot, with CMA: every rank
 * reads the root's buffer directly, one copy in all.
 */

#include "ompi_config.h"

#include <string.h>

#include "ompi/constants.h"

#include "coll_async_schedule.h"

/* A payload of a few bytes, inline in the root's control block. */
static int inline_payload(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);
    struct coll_async_shm_segment *shm = schedule_shm(op);

    if (shm->rank == op->root) {
        if (!schedule_may_write(op)) {
            return COLL_ASYNC_AGAIN;
        }
        coll_async_shm_inline_write(shm, op->seq, op->rbuf, op->bytes);
        schedule_publish(op, COLL_ASYNC_SHM_ARRIVED);
        return OMPI_SUCCESS;
    }
    if (0 == op->phase) {
        schedule_publish(op, COLL_ASYNC_SHM_ARRIVED);
        op->phase = 1;
    }
    return coll_async_shm_inline_read(shm, op->root, op->seq, op->rbuf, op->bytes)
               ? OMPI_SUCCESS
               : COLL_ASYNC_AGAIN;
}

static int staged(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);
    struct coll_async_shm_segment *shm = schedule_shm(op);

    for (;;) {
        size_t chunk = op->bytes - op->done < shm->slot_size ? op->bytes - op->done
                                                            : shm->slot_size;

        if (shm->rank == op->root) {
            if (!schedule_may_write(op)) {
                return COLL_ASYNC_AGAIN;
            }
            schedule_write_slot(op, (char *) op->rbuf + op->done, chunk,
                                schedule_streaming(op));
        } else {
            /* Arriving at this chunk says the previous one has been read. */
            if (0 == op->phase) {
                schedule_publish(op, COLL_ASYNC_SHM_ARRIVED);
                op->phase = 1;
                op->offset = 0;
            }
            if (!schedule_copy_announced(op, op->root, (char *) op->rbuf + op->done, 0, 0,
                                         chunk)) {
                return COLL_ASYNC_AGAIN;
            }
            op->phase = 0;
        }
        op->done += chunk;
        if (op->done == op->bytes) {
            return OMPI_SUCCESS;
        }
        ++op->seq;
    }
}

static int single_copy(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);
    struct coll_async_shm_segment *shm = schedule_shm(op);

    if (0 == op->phase) {
        if (shm->rank == op->root) {
            schedule_publish_tokens(op, op->rbuf, op->rbuf);
        }
        schedule_publish(op, COLL_ASYNC_SHM_ARRIVED);
        op->phase = 1;
    }
    if (1 == op->phase && shm->rank != op->root) {
        if (!coll_async_shm_reached(shm, op->root, COLL_ASYNC_SHM_ARRIVED, op->seq)) {
            return COLL_ASYNC_AGAIN;
        }
        if (0 != coll_async_channel_get(op->channel, op->root, op->rbuf,
                                       schedule_token(op, op->root, 0), 0, op->bytes)) {
            return OMPI_ERROR;
        }
    }
    if (1 == op->phase) {
        schedule_publish(op, COLL_ASYNC_SHM_DONE);
        op->phase = 2;
    }
    /* The root's buffer is read until every rank is done. */
    if (shm->rank == op->root && !schedule_all(op, COLL_ASYNC_SHM_DONE, op->seq)) {
        return COLL_ASYNC_AGAIN;
    }
    return OMPI_SUCCESS;
}

void coll_async_bcast_begin(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);

    schedule_by_size(op, COLL_ASYNC_FAMILY_BCAST, single_copy, staged);
    /* The staged schedule's smallest case; a forced single copy stays one. */
    if (staged == op->base.step && op->bytes <= COLL_ASYNC_SHM_INLINE_BYTES) {
        op->base.step = inline_payload;
    }
}
