/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: reduce_scatter_block in shared memory.
 *
 * Per chunk, every rank copies the same part of each of its n input blocks into
 * its slot (n pieces), then reduces piece r of every slot, in rank order, into
 * its own result. Inputs larger than the slots go in several chunks.
 */

#include "ompi_config.h"

#include <string.h>

#include "ompi/constants.h"

#include "coll_async_schedule.h"

/* Elements of one block that fit in one piece of a slot. */
static size_t piece_elements(const struct coll_async_sched *op)
{
    return schedule_shm(op)->slot_size / (size_t) schedule_shm(op)->nranks
           / op->reduction.size;
}

static int staged(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);
    struct coll_async_shm_segment *shm = schedule_shm(op);
    size_t size = op->reduction.size;
    size_t piece_bytes = piece_elements(op) * size;

    for (;;) {
        size_t chunk = op->count - op->done < piece_elements(op) ? op->count - op->done
                                                                : piece_elements(op);
        char *out = (char *) op->rbuf + op->done * size;
        size_t mine = (size_t) shm->rank * piece_bytes;

        if (0 == op->phase) {
            char *slot = coll_async_shm_slot(shm, shm->rank, op->seq);

            if (!schedule_may_write(op)) {
                return COLL_ASYNC_AGAIN;
            }
            for (int rank = 0; rank < shm->nranks; ++rank) {
                memcpy(slot + (size_t) rank * piece_bytes,
                       (const char *) op->sbuf + (size_t) rank * op->bytes + op->done * size,
                       chunk * size);
            }
            schedule_publish(op, COLL_ASYNC_SHM_ARRIVED);
            op->phase = 1;
        }
        if (!schedule_all(op, COLL_ASYNC_SHM_ARRIVED, op->seq)) {
            return COLL_ASYNC_AGAIN;
        }
        /* With MPI_IN_PLACE, out overlays input block 0, copied into the slot above. */
        coll_async_reduce3(&op->reduction, out, coll_async_shm_slot(shm, 0, op->seq) + mine,
                           coll_async_shm_slot(shm, 1, op->seq) + mine, chunk);
        for (int rank = 2; rank < shm->nranks; ++rank) {
            coll_async_reduce(&op->reduction, out,
                              coll_async_shm_slot(shm, rank, op->seq) + mine, chunk);
        }
        op->done += chunk;
        if (op->done == op->count) {
            return OMPI_SUCCESS;
        }
        ++op->seq;
        op->phase = 0;
    }
}

void coll_async_reduce_scatter_block_begin(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);
    size_t per_chunk = piece_elements(op);

    op->phase = 0;
    op->done = 0;
    op->base.step = staged;
    op->seq = coll_async_channel_sequence(op->channel, (op->count + per_chunk - 1) / per_chunk);
}
