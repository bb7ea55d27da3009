/*
 * coll/async: the algorithms, as schedules the engine executes.
 *
 * Each family's begin function takes an op whose channel, buffers and sizes the
 * glue has filled (MPI_IN_PLACE already resolved to the buffer it names), picks a
 * schedule for the message size and the channel, sets op->step and takes the
 * sequence numbers the schedule needs. The engine calls it when the op's turn
 * comes, so sequence numbers follow the order ops run in. A step returns
 * COLL_ASYNC_AGAIN where it would wait for a peer, and resumes there at the next
 * call.
 *
 * The schedules of this version are shared-memory native: every rank of the
 * communicator is on this node (coll_async_mapper.h).
 */

#ifndef MCA_COLL_ASYNC_SCHEDULE_H
#define MCA_COLL_ASYNC_SCHEDULE_H

#include "coll_async_engine.h"
#include "transport/coll_async_mapper.h"

/* How small reductions combine the ranks' contributions (DESIGN.md). */
enum coll_async_reduce_mode {
    COLL_ASYNC_REDUCE_AUTO,   /* chosen by size and ranks per node */
    COLL_ASYNC_REDUCE_EACH,   /* every rank reduces all slots */
    COLL_ASYNC_REDUCE_ROOT,   /* one rank polls the arrivals, reduces, publishes */
    COLL_ASYNC_REDUCE_LOCK,   /* senders reduce into a shared accumulator, locked */
    COLL_ASYNC_REDUCE_ATOMIC, /* senders reduce into it with atomics */
    COLL_ASYNC_NUM_REDUCE_MODES
};

extern const char *const coll_async_reduce_mode_names[COLL_ASYNC_NUM_REDUCE_MODES];

struct coll_async_schedule_config {
    enum coll_async_reduce_mode reduce_mode;
    size_t small_reduce_bytes; /* reductions up to this size use the small modes */
};

extern struct coll_async_schedule_config coll_async_schedule_config;

/* op->root: -1 for allreduce (every rank gets the result), else the root. */
void coll_async_reduction_begin(struct coll_async_op *op);
void coll_async_bcast_begin(struct coll_async_op *op);
void coll_async_barrier_begin(struct coll_async_op *op);
/* op->bytes is one rank's block; op->sbuf that block, op->rbuf all blocks. */
void coll_async_allgather_begin(struct coll_async_op *op);
/* op->count elements, op->bytes bytes per block; op->sbuf all blocks. */
void coll_async_reduce_scatter_block_begin(struct coll_async_op *op);

/* Shared by the schedules */

/* For schedules that move op->bytes: one copy (single_copy) above a slot where the
 * channel allows it, else slot-sized chunks (staged), one sequence number each. */
static inline void schedule_by_size(struct coll_async_op *op, coll_async_step_fn single_copy,
                                    coll_async_step_fn staged)
{
    size_t slot = op->channel->shm.slot_size;
    uint64_t steps = 1;

    op->phase = 0;
    op->done = 0;
    if (op->bytes > slot && coll_async_mapper_single_copy(op->channel)) {
        op->step = single_copy;
    } else {
        op->step = staged;
        steps = (op->bytes + slot - 1) / slot;
    }
    op->seq = coll_async_mapper_sequence(op->channel, steps);
}

static inline struct coll_async_shm_segment *schedule_shm(const struct coll_async_op *op)
{
    return &op->channel->shm;
}

static inline bool schedule_all(const struct coll_async_op *op, enum coll_async_shm_flag flag,
                                uint64_t seq)
{
    return coll_async_shm_all_reached(schedule_shm(op), flag, seq);
}

/* A slot (or the accumulator) of parity seq % 2 was last used by collective
 * seq - 2, whose readers are done once every rank has entered seq - 1. */
static inline bool schedule_may_write(const struct coll_async_op *op)
{
    return schedule_all(op, COLL_ASYNC_SHM_ARRIVED, op->seq - 1);
}

static inline void schedule_publish(const struct coll_async_op *op,
                                    enum coll_async_shm_flag flag)
{
    coll_async_shm_publish(schedule_shm(op), flag, op->seq);
}

/* Publishes this rank's buffers for single copy by the others. */
static inline void schedule_publish_tokens(const struct coll_async_op *op, const void *first,
                                           const void *second)
{
    struct coll_async_shm_control *mine = &schedule_shm(op)->control[schedule_shm(op)->rank];

    mine->address[0] = coll_async_mapper_token(first);
    mine->address[1] = coll_async_mapper_token(second);
}

static inline uint64_t schedule_token(const struct coll_async_op *op, int rank, int which)
{
    return schedule_shm(op)->control[rank].address[which];
}

/*
 * Rank's share [*first, *first + *count) of count elements split over nranks,
 * in whole cache lines where the elements allow, so the kernels stay aligned.
 */
static inline void schedule_slice(size_t count, size_t size, int nranks, int rank,
                                  size_t *first, size_t *share)
{
    size_t per_line = size < 64 && 0 == 64 % size ? 64 / size : 1;
    size_t each = (count + (size_t) nranks - 1) / (size_t) nranks;

    each = (each + per_line - 1) / per_line * per_line;
    *first = each * (size_t) rank < count ? each * (size_t) rank : count;
    *share = count - *first < each ? count - *first : each;
}

#endif /* MCA_COLL_ASYNC_SCHEDULE_H */
