/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: barrier in shared memory: every rank announces its arrival at
 * collective seq and waits for the others' announcements.
 */

#include "ompi_config.h"

#include "ompi/constants.h"

#include "coll_async_schedule.h"

static int arrive_and_wait(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);

    if (0 == op->phase) {
        schedule_publish(op, COLL_ASYNC_SHM_ARRIVED);
        op->phase = 1;
    }
    return schedule_all(op, COLL_ASYNC_SHM_ARRIVED, op->seq) ? OMPI_SUCCESS : COLL_ASYNC_AGAIN;
}

void coll_async_barrier_begin(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);

    op->phase = 0;
    op->base.step = arrive_and_wait;
    op->seq = coll_async_channel_sequence(op->channel, 1);
}
