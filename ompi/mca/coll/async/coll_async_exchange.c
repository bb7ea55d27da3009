/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the exchange schedule. See coll_async_exchange.h.
 */

#include "ompi_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ompi/constants.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/op/op.h"

#include "coll_async_exchange.h"
#include "coll_async_schedule.h"

/* Unless the plan is uniform, the slot's first line carries the header: the
 * rounds its writer needs. */
#define HEADER_BYTES 64
/* The most of its own block a rank copies per wait for its peers. */
#define SELF_SLICE_BYTES (64 * 1024)
/* The alignment of the scratch space and of each rank's block in it. */
#define SCRATCH_ALIGN 64

size_t coll_async_exchange_scratch_block(struct ompi_datatype_t *dtype, size_t count)
{
    ptrdiff_t gap;
    size_t span = opal_datatype_span(&dtype->super, count, &gap);

    return (span + SCRATCH_ALIGN - 1) & ~(size_t) (SCRATCH_ALIGN - 1);
}

struct coll_async_exchange *coll_async_exchange_new(int nranks, int rank, bool personal,
                                                    size_t scratch_bytes)
{
    size_t nsend = personal ? (size_t) nranks : 1;
    size_t blocks = (nsend + (size_t) nranks) * sizeof(struct coll_async_block);
    struct coll_async_exchange *plan = calloc(1, sizeof(*plan) + blocks + SCRATCH_ALIGN
                                                     + scratch_bytes);

    if (NULL == plan) {
        return NULL;
    }
    plan->nranks = nranks;
    plan->rank = rank;
    plan->personal = personal;
    plan->send = (struct coll_async_block *) (plan + 1);
    plan->recv = plan->send + nsend;
    plan->scratch = (char *) (((uintptr_t) (plan->recv + nranks) + SCRATCH_ALIGN - 1)
                              & ~(uintptr_t) (SCRATCH_ALIGN - 1));
    plan->fold.last = -1;
    plan->readers_last = nranks - 1;
    return plan;
}

void coll_async_exchange_free(void *opaque)
{
    struct coll_async_exchange *plan = opaque;

    if (NULL == plan) {
        return;
    }
    for (int i = 0; i < (plan->personal ? plan->nranks : 1); ++i) {
        coll_async_block_release(&plan->send[i]);
    }
    for (int i = 0; i < plan->nranks; ++i) {
        coll_async_block_release(&plan->recv[i]);
    }
    coll_async_block_release(&plan->self_from);
    coll_async_block_release(&plan->self_to);
    coll_async_block_release(&plan->fold.result);
    coll_async_block_release(&plan->after_from);
    coll_async_block_release(&plan->after_to);
    if (NULL != plan->fold.op) {
        OBJ_RELEASE(plan->fold.op);
    }
    free(plan);
}

void coll_async_exchange_set_fold(struct coll_async_exchange *plan, struct ompi_op_t *op,
                                  struct ompi_datatype_t *dtype, size_t count, int first,
                                  int last, void *rbuf)
{
    ptrdiff_t gap;
    size_t block = coll_async_exchange_scratch_block(dtype, count);

    (void) opal_datatype_span(&dtype->super, count, &gap);
    for (int rank = first; rank <= last; ++rank) {
        struct coll_async_block *to = rank == plan->rank ? &plan->self_to : &plan->recv[rank];
        coll_async_block_set(to, plan->scratch + (size_t) rank * block - gap, count, dtype);
    }
    plan->fold.op = op;
    OBJ_RETAIN(op);
    if (coll_async_reduction_supported(dtype, op)) {
        coll_async_reduction_resolve(&plan->fold.reduction, dtype, op);
    }
    plan->fold.first = first;
    plan->fold.last = last;
    coll_async_block_set(&plan->fold.result, rbuf, count, dtype);
}

/* The block of rank `rank`'s contribution to the fold. */
static const struct coll_async_block *fold_input(const struct coll_async_exchange *plan,
                                                 int rank)
{
    return rank == plan->rank ? &plan->self_to : &plan->recv[rank];
}

/* result = input[first] op ... op input[last]: from the last backwards, as
 * ompi_op_reduce(op, in, inout) makes inout = in op inout. */
static int fold(const struct coll_async_exchange *plan)
{
    const struct coll_async_fold *f = &plan->fold;
    const struct coll_async_block *result = &f->result;
    int rc;

    if (NULL == f->op || f->last < f->first) {
        return OMPI_SUCCESS;
    }
    rc = coll_async_block_copy(fold_input(plan, f->last), result);
    for (int rank = f->last - 1; OMPI_SUCCESS == rc && rank >= f->first; --rank) {
        const struct coll_async_block *in = fold_input(plan, rank);
        if (NULL != f->reduction.kernel && NULL != result->contiguous) {
            /* The component's kernels are for commutative pairs only. */
            coll_async_reduce(&f->reduction, result->contiguous, in->contiguous, in->count);
        } else {
            ompi_op_reduce(f->op, in->base, result->base, in->count, in->dtype);
        }
    }
    return rc;
}

/* A personal plan's slot has a lane per receiver other than its writer: a rank
 * copies its own block locally, so a lane for it would only shorten the rest. */
static int lane_count(const struct coll_async_exchange *plan)
{
    return plan->personal && plan->nranks > 1 ? plan->nranks - 1 : 1;
}

/* The lane of receiver's data in writer's slot. */
static size_t lane_index(const struct coll_async_exchange *plan, int writer, int receiver)
{
    if (!plan->personal) {
        return 0;
    }
    return (size_t) (receiver < writer ? receiver : receiver - 1);
}

/* Where the lanes start in a slot: a uniform plan counts its rounds itself, so
 * its lanes take the whole slot (a slot-sized block crosses in one round). */
static size_t header_bytes(const struct coll_async_exchange *plan)
{
    return plan->uniform ? 0 : HEADER_BYTES;
}

static size_t lane_bytes(const struct coll_async_sched *op)
{
    const struct coll_async_exchange *plan = op->base.plan;
    size_t lanes = (size_t) lane_count(plan);
    size_t lane = (schedule_shm(op)->slot_size - header_bytes(plan)) / lanes;

    return lane >= 64 ? lane & ~(size_t) 63 : lane & ~(size_t) 7;
}

/* Bytes of block that round `round` carries in a lane of `lane` bytes. */
static size_t round_share(const struct coll_async_block *block, size_t round, size_t lane)
{
    size_t offset = round * lane;

    if (NULL == block->dtype || block->bytes <= offset) {
        return 0;
    }
    return block->bytes - offset < lane ? block->bytes - offset : lane;
}

static size_t rounds_for(const struct coll_async_block *block, size_t lane)
{
    return NULL == block->dtype ? 0 : (block->bytes + lane - 1) / lane;
}

/* The rounds this rank's sends need. */
static uint64_t rounds_needed(const struct coll_async_exchange *plan, size_t lane)
{
    size_t most = 0;

    for (int i = 0; i < (plan->personal ? plan->nranks : 1); ++i) {
        if ((!plan->personal || i != plan->rank) && rounds_for(&plan->send[i], lane) > most) {
            most = rounds_for(&plan->send[i], lane);
        }
    }
    return most;
}

/* A uniform plan's rounds: those of its largest block, sent or received. */
static uint64_t uniform_rounds(const struct coll_async_exchange *plan, size_t lane)
{
    uint64_t most = rounds_needed(plan, lane);

    for (int rank = 0; rank < plan->nranks; ++rank) {
        if (rank != plan->rank && rounds_for(&plan->recv[rank], lane) > most) {
            most = rounds_for(&plan->recv[rank], lane);
        }
    }
    return most > 1 ? most : 1;
}

static int write_round(struct coll_async_sched *op, size_t lane)
{
    const struct coll_async_exchange *plan = op->base.plan;
    char *slot = coll_async_shm_slot(schedule_shm(op), plan->rank, op->seq);
    int blocks = plan->personal ? plan->nranks : 1;

    if (0 == op->done && !plan->uniform) {
        *(volatile uint64_t *) slot = rounds_needed(plan, lane);
    }
    for (int i = 0; i < blocks; ++i) {
        const struct coll_async_block *block = &plan->send[i];
        size_t share = round_share(block, op->done, lane);

        if (0 == share || (plan->personal && i == plan->rank)) {
            continue;
        }
        if (OMPI_SUCCESS != coll_async_block_pack(block, op->done * lane,
                                                  slot + header_bytes(plan)
                                                      + lane_index(plan, plan->rank, i) * lane,
                                                  share)) {
            return OMPI_ERROR;
        }
    }
    return OMPI_SUCCESS;
}

static int read_round(struct coll_async_sched *op, size_t lane)
{
    const struct coll_async_exchange *plan = op->base.plan;

    for (int rank = 0; rank < plan->nranks; ++rank) {
        const struct coll_async_block *block = &plan->recv[rank];
        size_t share = round_share(block, op->done, lane);
        const char *slot = coll_async_shm_slot(schedule_shm(op), rank, op->seq);

        if (0 == share || rank == plan->rank) {
            continue;
        }
        if (OMPI_SUCCESS != coll_async_block_unpack(block, op->done * lane,
                                                    slot + header_bytes(plan)
                                                        + lane_index(plan, rank, plan->rank) * lane,
                                                    share)) {
            return OMPI_ERROR;
        }
    }
    return OMPI_SUCCESS;
}

/* After the first round: every rank runs as many rounds as the neediest writer. */
static void agree_on_rounds(struct coll_async_sched *op)
{
    const struct coll_async_exchange *plan = op->base.plan;
    uint64_t most = 1;

    for (int rank = 0; rank < plan->nranks; ++rank) {
        uint64_t wanted =
            *(volatile uint64_t *) coll_async_shm_slot(schedule_shm(op), rank, op->seq);
        most = wanted > most ? wanted : most;
    }
    op->rounds = most;
    if (most > 1) {
        (void) coll_async_channel_sequence(op->channel, most - 1);
    }
}

/* Whether rank writes this one something: all a uniform plan reads. */
static bool sends_here(const struct coll_async_sched *op, int rank)
{
    const struct coll_async_exchange *plan = op->base.plan;

    return rank != plan->rank && NULL != plan->recv[rank].dtype && 0 != plan->recv[rank].bytes;
}

/* A uniform plan reads only the ranks that send it something; the others need
 * every header. */
static bool writers_arrived(struct coll_async_sched *op)
{
    const struct coll_async_exchange *plan = op->base.plan;

    return schedule_all_of(op, COLL_ASYNC_SHM_ARRIVED, op->seq,
                           plan->uniform ? sends_here : NULL);
}

/* Up to most more bytes of this rank's own block (op->offset counts those copied):
 * a slice while it waits for its peers, so the wait's time is spent and a root
 * does not hold up its next rounds with its whole block; the rest at the end. In
 * place, the copy stays for the finish. False when nothing was left to copy. */
static bool copy_self(struct coll_async_sched *op, size_t most)
{
    const struct coll_async_exchange *plan = op->base.plan;
    size_t before = op->offset;

    if (plan->in_place) {
        return false;
    }
    if (OMPI_SUCCESS
        != coll_async_block_copy_part(&plan->self_from, &plan->self_to, &op->offset, most)) {
        op->failed = OMPI_ERROR;
    }
    return op->offset != before;
}

static int exchange(struct coll_async_sched *op)
{
    size_t lane = lane_bytes(op);

    if (0 == lane) {
        return OMPI_ERR_NOT_SUPPORTED; /* slots too small for this many ranks */
    }
    for (;;) {
        if (0 == op->phase) {
            if (!schedule_may_write(op)) {
                if (copy_self(op, SELF_SLICE_BYTES)) {
                    continue;
                }
                return COLL_ASYNC_AGAIN;
            }
            if (OMPI_SUCCESS != write_round(op, lane)) {
                op->failed = OMPI_ERROR; /* still publish: the peers wait for the round */
            }
            schedule_publish(op, COLL_ASYNC_SHM_ARRIVED);
            op->phase = 1;
        }
        if (!writers_arrived(op)) {
            if (copy_self(op, SELF_SLICE_BYTES)) {
                continue;
            }
            return COLL_ASYNC_AGAIN;
        }
        if (0 == op->rounds) {
            agree_on_rounds(op);
        }
        if (OMPI_SUCCESS != read_round(op, lane)) {
            op->failed = OMPI_ERROR;
        }
        if (++op->done == op->rounds) {
            (void) copy_self(op, SIZE_MAX);
            return op->failed;
        }
        ++op->seq;
        op->phase = 0;
    }
}

/* The fold, then the part of it kept. */
static int fold_and_keep(const struct coll_async_exchange *plan)
{
    int rc = fold(plan);

    return OMPI_SUCCESS == rc ? coll_async_block_copy(&plan->after_from, &plan->after_to) : rc;
}

int coll_async_exchange_finish(const struct coll_async_exchange *plan)
{
    int rc = coll_async_block_copy(&plan->self_from, &plan->self_to);

    return OMPI_SUCCESS == rc ? fold_and_keep(plan) : rc;
}

static int finish_locally(struct coll_async_op *op)
{
    return coll_async_exchange_finish(op->plan);
}

static int exchange_then_finish(struct coll_async_op *base)
{
    const struct coll_async_exchange *plan = base->plan;
    int rc = exchange(coll_async_sched_of(base));

    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    /* The exchange copied this rank's own block, unless in place. */
    return plan->in_place ? coll_async_exchange_finish(plan) : fold_and_keep(plan);
}

void coll_async_exchange_begin(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);
    const struct coll_async_exchange *plan = op->base.plan;

    op->phase = 0;
    op->done = 0;
    op->offset = 0;
    op->rounds = 0;
    op->failed = OMPI_SUCCESS;
    if (1 == plan->nranks) {
        op->base.step = finish_locally;
        return;
    }
    op->base.step = exchange_then_finish;
    if (plan->uniform && 0 != lane_bytes(op)) {
        op->rounds = uniform_rounds(plan, lane_bytes(op));
        op->seq = coll_async_channel_sequence(op->channel, op->rounds);
        return;
    }
    op->seq = coll_async_channel_sequence(op->channel, 1);
}
