/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the algorithms, as schedules the engine executes.
 *
 * Each family's begin function takes the engine's op of a struct
 * coll_async_sched whose channel, buffers and sizes the glue has filled
 * (MPI_IN_PLACE already resolved to the buffer it names), asks the decision
 * table (coll_async_decision.h) for the schedule of the message size and the
 * channel, sets the op's step and takes the sequence numbers the schedule needs.
 * The engine calls it when the op's turn comes, so sequence numbers follow the
 * order ops run in. A step returns COLL_ASYNC_AGAIN where it would wait for a
 * peer, and resumes there at the next call.
 *
 * These schedules serve the ranks of one node, over its shared-memory channel
 * (coll_async_channel.h); across nodes coll_async_hierarchical.c runs them inside
 * each node around the leaders' algorithms (coll_async_internode.h).
 */

#ifndef MCA_COLL_ASYNC_SCHEDULE_H
#define MCA_COLL_ASYNC_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "coll_async_decision.h"
#include "coll_async_engine.h"
#include "coll_async_reduction.h"
#include "transport/coll_async_channel.h"

struct coll_async_sched;

/* Which ranks a wait waits for (schedule_all_of); NULL: all of them. */
typedef bool (*schedule_waits_for_fn)(const struct coll_async_sched *op, int rank);

/* A schedule's op: the engine's op, and the schedule's arguments and position,
 * which the engine never reads. The glue fills the arguments (on the stack, or
 * in the request of a nonblocking call); a step finds them from the op it is
 * given (coll_async_sched_of). */
struct coll_async_sched {
    struct coll_async_op base;
    struct coll_async_channel *channel;
    /* The communicator's algorithm per family (its parameters and hints): a
     * schedule named there runs inside the node. NULL: the table chooses. */
    const enum coll_async_alg *algorithm;
    const void *sbuf;
    void *rbuf;
    size_t count;   /* elements */
    size_t bytes;   /* of the whole vector, or of one rank's block */
    struct coll_async_reduction reduction;
    int root;       /* -1: every rank receives the result */
    int phase;
    uint64_t seq;   /* sequence number of the step in progress on the communicator */
    size_t done;    /* bytes or chunks completed, for pipelined schedules */
    size_t offset;  /* of the chunk in progress, what is done: pipelining inside a chunk */
    size_t rounds;  /* rounds agreed with the peers, for schedules that agree on them */
    int failed;     /* a local failure, reported once the peers need this rank no more */
    /* The wait in progress (schedule_all_of): ranks [0, ranks) have published
     * flag for seq, or are not among those that waits_for names. Flags only grow,
     * so the next poll of the same wait resumes there instead of rereading every
     * rank: a wait costs O(ranks) in all, not per poll. The glue zero-initialises
     * the op (no rank known). */
    struct {
        uint64_t seq;
        int flag;
        int ranks;
        schedule_waits_for_fn waits_for;
    } waited;
};

/* The schedule's op around op: every op whose begin is one of the functions
 * below is the base of a struct coll_async_sched. */
static inline struct coll_async_sched *coll_async_sched_of(struct coll_async_op *op)
{
    return (struct coll_async_sched *) ((char *) op - offsetof(struct coll_async_sched, base));
}

struct coll_async_schedule_config {
    enum coll_async_reduce_mode reduce_mode;
    size_t small_reduce_bytes; /* reductions up to this size use the small modes */
    size_t stream_bytes;       /* messages from this size on stream into the slots; 0: none */
};

extern struct coll_async_schedule_config coll_async_schedule_config;

/* The schedules begun inside a node, by kind: the MPI_T counters
 * coll_async_shm_<schedule> (coll_async_pvars.c) that show which one ran. */
extern volatile int64_t coll_async_shm_schedule_calls[COLL_ASYNC_NUM_SHM_SCHEDULES];

static inline void schedule_count(enum coll_async_shm_schedule schedule)
{
    __atomic_fetch_add(&coll_async_shm_schedule_calls[schedule], 1, __ATOMIC_RELAXED);
}

/* The begin functions of the schedules, for ops that are the base of a struct
 * coll_async_sched (its root: -1 for allreduce, every rank gets the result, else
 * the root). */
void coll_async_reduction_begin(struct coll_async_op *op);
void coll_async_bcast_begin(struct coll_async_op *op);
void coll_async_barrier_begin(struct coll_async_op *op);
/* op->bytes is one rank's block; op->sbuf that block, op->rbuf all blocks. */
void coll_async_allgather_begin(struct coll_async_op *op);
/* op->count elements, op->bytes bytes per block; op->sbuf all blocks. */
void coll_async_reduce_scatter_block_begin(struct coll_async_op *op);

/* Shared by the schedules */

/* What the channel and the communicator's algorithms offer the decision table for
 * family: the family of the schedule (a reduce inside the node of an allreduce across nodes
 * follows coll_async_reduce_algorithm). */
static inline struct coll_async_decision_shm schedule_decision(const struct coll_async_sched *op,
                                                               enum coll_async_family family)
{
    return (struct coll_async_decision_shm){
        .nranks = op->channel->shm.nranks,
        .slot_size = op->channel->shm.slot_size,
        .single_copy = coll_async_channel_single_copy(op->channel),
        .reduce_mode = coll_async_schedule_config.reduce_mode,
        .small_reduce_bytes = coll_async_schedule_config.small_reduce_bytes,
        .has_atomic = NULL != op->reduction.kernel_atomic,
        .forced = NULL != op->algorithm ? op->algorithm[family] : COLL_ASYNC_ALG_AUTO};
}

/* For the schedules of family that move op->bytes: one copy (single_copy) or
 * slot-sized chunks (staged), one sequence number each, as the table says. */
static inline void schedule_by_size(struct coll_async_sched *op, enum coll_async_family family,
                                    coll_async_step_fn single_copy, coll_async_step_fn staged)
{
    struct coll_async_decision_shm shm = schedule_decision(op, family);
    size_t slot = shm.slot_size;
    uint64_t steps = 1;

    op->phase = 0;
    op->done = 0;
    if (COLL_ASYNC_SHM_SINGLE_COPY == coll_async_decision_shm(family, op->bytes, -1, &shm)) {
        op->base.step = single_copy;
        schedule_count(COLL_ASYNC_SHM_SINGLE_COPY);
    } else {
        op->base.step = staged;
        steps = (op->bytes + slot - 1) / slot;
        schedule_count(COLL_ASYNC_SHM_STAGED);
    }
    op->seq = coll_async_channel_sequence(op->channel, steps);
}

static inline struct coll_async_shm_segment *schedule_shm(const struct coll_async_sched *op)
{
    return &op->channel->shm;
}

/* Whether every rank that waits_for names has published flag for seq. Resumes
 * where the previous poll of the same wait stopped (op->waited). */
static inline bool schedule_all_of(struct coll_async_sched *op, enum coll_async_shm_flag flag,
                                   uint64_t seq, schedule_waits_for_fn waits_for)
{
    struct coll_async_shm_segment *shm = schedule_shm(op);

    if (NULL == waits_for && coll_async_shm_all_seen(shm, flag, seq)) {
        return true;
    }
    if (op->waited.seq != seq || op->waited.flag != (int) flag
        || op->waited.waits_for != waits_for) {
        op->waited.seq = seq;
        op->waited.flag = (int) flag;
        op->waited.waits_for = waits_for;
        op->waited.ranks = 0;
    }
    for (; op->waited.ranks < shm->nranks; ++op->waited.ranks) {
        if ((NULL == waits_for || waits_for(op, op->waited.ranks))
            && !coll_async_shm_reached(shm, op->waited.ranks, flag, seq)) {
            return false;
        }
    }
    if (NULL == waits_for) {
        coll_async_shm_saw_all(shm, flag, seq);
    }
    return true;
}

/* Whether every rank has published flag for seq. */
static inline bool schedule_all(struct coll_async_sched *op, enum coll_async_shm_flag flag,
                                uint64_t seq)
{
    return schedule_all_of(op, flag, seq, NULL);
}

/* A slot (or the accumulator) of parity seq % 2 was last used by collective
 * seq - 2, whose readers are done once every rank has entered seq - 1. */
static inline bool schedule_may_write(struct coll_async_sched *op)
{
    return schedule_all(op, COLL_ASYNC_SHM_ARRIVED, op->seq - 1);
}

static inline void schedule_publish(const struct coll_async_sched *op,
                                    enum coll_async_shm_flag flag)
{
    coll_async_shm_publish(schedule_shm(op), flag, op->seq);
}

/* Whether op's copies into the slots may stream past the cache
 * (coll_async_shm_copy_in): each schedule says where that pays. */
static inline bool schedule_streaming(const struct coll_async_sched *op)
{
    size_t from = coll_async_schedule_config.stream_bytes;

    return 0 != from && op->bytes >= from;
}

/*
 * Pipelining inside a chunk. A rank writes what the others read of its slot for
 * op->seq as a stream: bytes in the order it writes them, announced a piece at a
 * time, so that readers copy or reduce one piece while it writes the next.
 */

/* Copies bytes to the slot at to, as the bytes *streamed.. of this rank's stream,
 * announcing each piece it completes; end announces the last, partial piece. */
static inline void schedule_stream(const struct coll_async_sched *op, size_t *streamed, char *to,
                                   const char *from, size_t bytes, bool end, bool streaming)
{
    struct coll_async_shm_segment *shm = schedule_shm(op);
    size_t piece = shm->piece_size;

    while (bytes > 0) {
        size_t room = piece - *streamed % piece, length = bytes < room ? bytes : room;

        coll_async_shm_copy_in(to, from, length, streaming);
        to += length;
        from += length;
        bytes -= length;
        *streamed += length;
        if (0 == *streamed % piece) {
            coll_async_shm_publish_written(shm, op->seq, *streamed / piece);
        }
    }
    if (end && 0 != *streamed % piece) {
        coll_async_shm_publish_written(shm, op->seq, *streamed / piece + 1);
    }
}

/* The simplest stream: bytes from `from` to the start of the slot, then ARRIVED. */
static inline void schedule_write_slot(const struct coll_async_sched *op, const void *from,
                                       size_t bytes, bool streaming)
{
    struct coll_async_shm_segment *shm = schedule_shm(op);
    size_t streamed = 0;

    schedule_stream(op, &streamed, coll_async_shm_slot(shm, shm->rank, op->seq), from, bytes,
                    true, streaming);
    schedule_publish(op, COLL_ASYNC_SHM_ARRIVED);
}

/* How many of the bytes [start, start + length) of rank's stream are announced. */
static inline size_t schedule_announced(const struct coll_async_sched *op, int rank, size_t start,
                                        size_t length)
{
    size_t written = coll_async_shm_written(schedule_shm(op), rank, op->seq, start + length);

    return written <= start ? 0 : written - start;
}

/* Copies to `to` the bytes [at, at + length) of rank's slot, which its stream
 * carries from start on, as far as they are announced; op->offset counts what is
 * copied. True once all is. */
static inline bool schedule_copy_announced(struct coll_async_sched *op, int rank, char *to,
                                           size_t at, size_t start, size_t length)
{
    const char *slot = coll_async_shm_slot(schedule_shm(op), rank, op->seq) + at;

    while (op->offset < length) {
        size_t has = schedule_announced(op, rank, start, length);

        if (has == op->offset) {
            return false;
        }
        coll_async_shm_copy(to + op->offset, slot + op->offset, has - op->offset);
        op->offset = has;
    }
    return true;
}

/* Publishes this rank's buffers for single copy by the others. */
static inline void schedule_publish_tokens(const struct coll_async_sched *op, const void *first,
                                           const void *second)
{
    struct coll_async_shm_control *mine = &schedule_shm(op)->control[schedule_shm(op)->rank];

    mine->address[0] = coll_async_channel_token(first);
    mine->address[1] = coll_async_channel_token(second);
}

static inline uint64_t schedule_token(const struct coll_async_sched *op, int rank, int which)
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
