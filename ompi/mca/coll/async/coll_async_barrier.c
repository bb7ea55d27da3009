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

static int arrive_and_wait(struct coll_async_op *op)
{
    if (0 == op->phase) {
        schedule_publish(op, COLL_ASYNC_SHM_ARRIVED);
        op->phase = 1;
    }
    return schedule_all(op, COLL_ASYNC_SHM_ARRIVED, op->seq) ? OMPI_SUCCESS : COLL_ASYNC_AGAIN;
}

void coll_async_barrier_begin(struct coll_async_op *op)
{
    op->phase = 0;
    op->step = arrive_and_wait;
    op->seq = coll_async_mapper_sequence(op->channel, 1);
}
