/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: reductions to all ranks (allreduce) or to one (reduce), in shared
 * memory.
 *
 * Small vectors: each rank publishes its input in its slot, then one of four
 * modes combines them (coll_async_schedule.h). Larger allreduces: a
 * reduce-scatter (rank r reduces slice r of every input) followed by an allgather
 * of the slices; larger reduces: the root reduces what the others hand in. The
 * inputs travel through the slots in slot-sized, double-buffered chunks, or, with
 * CMA, straight from the ranks' own buffers (reduce-scatter, then gather).
 *
 * Every element is reduced in one place and in one order, so all ranks get the
 * same bits, run after run, except in the lock and atomic modes, whose order is
 * that of arrival.
 */

#include "ompi_config.h"

#include <string.h>

#include "ompi/constants.h"

#include "coll_async_schedule.h"

/* accumulator state = seq * STATE_SCALE + contributions received for seq */
#define STATE_SCALE ((uint64_t) COLL_ASYNC_SHM_MAX_RANKS)

struct coll_async_schedule_config coll_async_schedule_config = {
    .reduce_mode = COLL_ASYNC_REDUCE_AUTO,
    .small_reduce_bytes = 4096,
    .stream_bytes = 16384,
};

volatile int64_t coll_async_shm_schedule_calls[COLL_ASYNC_NUM_SHM_SCHEDULES];

static bool keeps_result(const struct coll_async_sched *op)
{
    return op->root < 0 || op->root == schedule_shm(op)->rank;
}

/* The rank that reduces in root mode and seeds the accumulator in atomic mode. */
static int first_rank(const struct coll_async_sched *op)
{
    return op->root < 0 ? 0 : op->root;
}

static size_t element_offset(const struct coll_async_sched *op, size_t elements)
{
    return elements * op->reduction.size;
}

/* Writes this rank's input into its slot for seq; false while a reader of the
 * slot's previous use is behind. */
static bool publish_input(struct coll_async_sched *op)
{
    struct coll_async_shm_segment *shm = schedule_shm(op);

    if (!schedule_may_write(op)) {
        return false;
    }
    memcpy(coll_async_shm_slot(shm, shm->rank, op->seq), op->sbuf, op->bytes);
    schedule_publish(op, COLL_ASYNC_SHM_ARRIVED);
    return true;
}

/* out = slot[0] op slot[1] op ... in rank order. */
static void reduce_slots(const struct coll_async_sched *op, void *out, size_t offset,
                         size_t count)
{
    struct coll_async_shm_segment *shm = schedule_shm(op);

    coll_async_reduce3(&op->reduction, out, coll_async_shm_slot(shm, 0, op->seq) + offset,
                       coll_async_shm_slot(shm, 1, op->seq) + offset, count);
    for (int rank = 2; rank < shm->nranks; ++rank) {
        coll_async_reduce(&op->reduction, out, coll_async_shm_slot(shm, rank, op->seq) + offset,
                          count);
    }
}

/* Small, mode each: every rank that keeps the result reduces all slots. */
static int small_each(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);

    switch (op->phase) {
    case 0:
        if (!publish_input(op)) {
            return COLL_ASYNC_AGAIN;
        }
        if (!keeps_result(op)) {
            return OMPI_SUCCESS;
        }
        op->phase = 1;
        /* fall through */
    default:
        if (!schedule_all(op, COLL_ASYNC_SHM_ARRIVED, op->seq)) {
            return COLL_ASYNC_AGAIN;
        }
        reduce_slots(op, op->rbuf, 0, op->count);
        return OMPI_SUCCESS;
    }
}

/* Small, mode root: one rank reduces into its slot and publishes the result. */
static int small_root(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);
    struct coll_async_shm_segment *shm = schedule_shm(op);
    int first = first_rank(op);
    char *result = coll_async_shm_slot(shm, first, op->seq);

    switch (op->phase) {
    case 0:
        if (!publish_input(op)) {
            return COLL_ASYNC_AGAIN;
        }
        if (!keeps_result(op)) {
            return OMPI_SUCCESS;
        }
        op->phase = 1;
        /* fall through */
    default:
        if (shm->rank == first) {
            if (!schedule_all(op, COLL_ASYNC_SHM_ARRIVED, op->seq)) {
                return COLL_ASYNC_AGAIN;
            }
            for (int rank = 0; rank < shm->nranks; ++rank) {
                if (rank != first) {
                    coll_async_reduce(&op->reduction, result,
                                      coll_async_shm_slot(shm, rank, op->seq), op->count);
                }
            }
            schedule_publish(op, COLL_ASYNC_SHM_READY);
        } else if (!coll_async_shm_reached(shm, first, COLL_ASYNC_SHM_READY, op->seq)) {
            return COLL_ASYNC_AGAIN;
        }
        memcpy(op->rbuf, result, op->bytes);
        return OMPI_SUCCESS;
    }
}

static bool try_lock(volatile int32_t *lock)
{
    int32_t open = 0;

    return __atomic_compare_exchange_n(lock, &open, 1, false, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

/* Adds this rank's input to the accumulator: the first contribution is copied. */
static void contribute(struct coll_async_sched *op, struct coll_async_shm_accumulator *acc,
                       char *data)
{
    uint64_t state = acc->state;

    if (state < op->seq * STATE_SCALE) {
        memcpy(data, op->sbuf, op->bytes);
        state = op->seq * STATE_SCALE;
    } else {
        coll_async_reduce(&op->reduction, data, op->sbuf, op->count);
    }
    __atomic_store_n(&acc->state, state + 1, __ATOMIC_RELEASE);
}

/* Small, modes lock and atomic: the senders reduce into the shared accumulator. */
static int small_shared(struct coll_async_sched *op, bool atomic)
{
    struct coll_async_shm_segment *shm = schedule_shm(op);
    struct coll_async_shm_accumulator *acc = &shm->accumulator[op->seq & 1];
    char *data = coll_async_shm_accumulator_data(shm, op->seq);
    uint64_t complete = op->seq * STATE_SCALE + (uint64_t) shm->nranks;

    switch (op->phase) {
    case 0:
        if (!schedule_may_write(op)) {
            return COLL_ASYNC_AGAIN;
        }
        schedule_publish(op, COLL_ASYNC_SHM_ARRIVED);
        op->phase = 1;
        /* fall through */
    case 1:
        if (!atomic) {
            if (!try_lock(&acc->lock)) {
                return COLL_ASYNC_AGAIN;
            }
            contribute(op, acc, data);
            __atomic_store_n(&acc->lock, 0, __ATOMIC_RELEASE);
        } else if (shm->rank == first_rank(op)) {
            memcpy(data, op->sbuf, op->bytes);
            __atomic_store_n(&acc->state, op->seq * STATE_SCALE + 1, __ATOMIC_RELEASE);
        } else {
            if (__atomic_load_n(&acc->state, __ATOMIC_ACQUIRE) <= op->seq * STATE_SCALE) {
                return COLL_ASYNC_AGAIN; /* not seeded yet */
            }
            op->reduction.kernel_atomic(data, op->sbuf, op->count);
            __atomic_fetch_add(&acc->state, 1, __ATOMIC_ACQ_REL);
        }
        if (!keeps_result(op)) {
            return OMPI_SUCCESS;
        }
        op->phase = 2;
        /* fall through */
    default:
        if (__atomic_load_n(&acc->state, __ATOMIC_ACQUIRE) < complete) {
            return COLL_ASYNC_AGAIN;
        }
        memcpy(op->rbuf, data, op->bytes);
        return OMPI_SUCCESS;
    }
}

static int small_lock(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);

    return small_shared(op, false);
}

static int small_atomic(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);

    return small_shared(op, true);
}

/*
 * Chunked through the slots, pipelined inside each chunk. Rank w streams into its
 * slot the slices of the chunk that the others reduce, in the order w+1, w+2, ...,
 * each at its place, announcing pieces as it goes (the stream); then it reduces its
 * own slice, from its input and the others' slots as their pieces come, into its
 * receive buffer, and streams that result into its slot at the slice's place,
 * starting at the next whole piece; then it copies the others' results out as they
 * come. op->done counts the elements finished, op->offset what is done of the
 * current phase: elements reduced, or bytes copied out of rank me + phase - 1.
 * Nothing is streamed past the cache (coll_async_shm_stream_bytes): every rank
 * both writes and reads here, and through the caches measured faster at every
 * size, 64 KiB to 4 MiB at 2 ranks (streaming either part cost 5-30 %).
 */

static void slice_of(const struct coll_async_sched *op, size_t chunk, int rank, size_t *first,
                     size_t *share)
{
    schedule_slice(chunk, op->reduction.size, schedule_shm(op)->nranks, rank, first, share);
}

/* Bytes writer streams before the slice of reader: the slices of the ranks after
 * writer and before reader, cyclically; with reader == writer, all its input
 * bytes. The slices tile the chunk in rank order, so that is a difference of two
 * slice boundaries, not a sum over the ranks (every poll asks it of every rank). */
static size_t streamed_before(const struct coll_async_sched *op, size_t chunk, int writer,
                              int reader)
{
    size_t writer_first, writer_share, reader_first, reader_share, writer_end, elements;

    slice_of(op, chunk, writer, &writer_first, &writer_share);
    slice_of(op, chunk, reader, &reader_first, &reader_share);
    writer_end = writer_first + writer_share;
    if (reader == writer) {
        elements = chunk - writer_share;
    } else if (reader > writer) {
        elements = reader_first - writer_end;
    } else {
        elements = chunk - writer_end + reader_first;
    }
    return element_offset(op, elements);
}

/* Where writer's result starts in its stream: after its inputs, at a whole piece. */
static size_t result_start(const struct coll_async_sched *op, size_t chunk, int writer)
{
    size_t piece = schedule_shm(op)->piece_size;

    return (streamed_before(op, chunk, writer, writer) + piece - 1) / piece * piece;
}

/* Phase 0: the slices of the others into this rank's slot. */
static void stream_inputs(const struct coll_async_sched *op, size_t chunk)
{
    struct coll_async_shm_segment *shm = schedule_shm(op);
    char *slot = coll_async_shm_slot(shm, shm->rank, op->seq);
    const char *input = (const char *) op->sbuf + element_offset(op, op->done);
    size_t streamed = 0, first, share;

    for (int rank = (shm->rank + 1) % shm->nranks; rank != shm->rank;
         rank = (rank + 1) % shm->nranks) {
        slice_of(op, chunk, rank, &first, &share);
        schedule_stream(op, &streamed, slot + element_offset(op, first),
                        input + element_offset(op, first), element_offset(op, share), false,
                        false);
    }
    schedule_stream(op, &streamed, slot, input, 0, true, false);
    schedule_publish(op, COLL_ASYNC_SHM_ARRIVED);
}

/* Where the part this rank reduces starts in writer's stream. */
typedef size_t (*part_start_fn)(const struct coll_async_sched *op, size_t chunk, int writer);

static size_t own_slice_start(const struct coll_async_sched *op, size_t chunk, int writer)
{
    return streamed_before(op, chunk, writer, schedule_shm(op)->rank);
}

/* Elements of this rank's part, count in all, that every other rank has streamed. */
static size_t part_ready(const struct coll_async_sched *op, size_t chunk, size_t count,
                         part_start_fn start)
{
    struct coll_async_shm_segment *shm = schedule_shm(op);
    size_t ready = element_offset(op, count);

    for (int rank = 0; rank < shm->nranks; ++rank) {
        if (rank != shm->rank) {
            size_t has = schedule_announced(op, rank, start(op, chunk, rank),
                                            element_offset(op, count));
            ready = has < ready ? has : ready;
        }
    }
    return ready / op->reduction.size;
}

/* out = input op every other rank's slot at `at`, in rank order. */
static void fold_slots(const struct coll_async_sched *op, char *out, const char *input, size_t at,
                       size_t count)
{
    struct coll_async_shm_segment *shm = schedule_shm(op);
    const char *from = input;

    for (int rank = 0; rank < shm->nranks; ++rank) {
        if (rank != shm->rank) {
            coll_async_reduce3(&op->reduction, out, from,
                               coll_async_shm_slot(shm, rank, op->seq) + at, count);
            from = out;
        }
    }
    if (from != out && out != input) {
        memcpy(out, input, element_offset(op, count)); /* a rank alone */
    }
}

/* Phase 1: reduces this rank's slice as the others' pieces of it come, and streams
 * the result; true once the whole slice is done. */
static bool reduce_own_slice(struct coll_async_sched *op, size_t chunk)
{
    struct coll_async_shm_segment *shm = schedule_shm(op);
    char *slot = coll_async_shm_slot(shm, shm->rank, op->seq);
    size_t base = element_offset(op, op->done), result = result_start(op, chunk, shm->rank);
    size_t first, share, ready;

    slice_of(op, chunk, shm->rank, &first, &share);
    while (op->offset < share) {
        size_t at = element_offset(op, first + op->offset);
        size_t streamed = result + element_offset(op, op->offset);
        char *out = (char *) op->rbuf + base + at;

        ready = part_ready(op, chunk, share, own_slice_start);
        if (ready == op->offset) {
            return false;
        }
        fold_slots(op, out, (const char *) op->sbuf + base + at, at, ready - op->offset);
        schedule_stream(op, &streamed, slot + at, out, element_offset(op, ready - op->offset),
                        ready == share, false);
        op->offset = ready;
    }
    return true;
}

/* Phase 1 + k: copies out the result of rank me + k as it comes; true once whole. */
static bool copy_result(struct coll_async_sched *op, size_t chunk, int rank)
{
    size_t first, share;

    slice_of(op, chunk, rank, &first, &share);
    return schedule_copy_announced(op, rank,
                                   (char *) op->rbuf + element_offset(op, op->done + first),
                                   element_offset(op, first), result_start(op, chunk, rank),
                                   element_offset(op, share));
}

static int staged(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);
    struct coll_async_shm_segment *shm = schedule_shm(op);
    size_t per_chunk = shm->slot_size / op->reduction.size;

    for (;;) {
        size_t chunk = op->count - op->done < per_chunk ? op->count - op->done : per_chunk;

        if (0 == op->phase) {
            if (!schedule_may_write(op)) {
                return COLL_ASYNC_AGAIN;
            }
            stream_inputs(op, chunk);
            op->phase = 1;
            op->offset = 0;
        }
        if (1 == op->phase) {
            if (!reduce_own_slice(op, chunk)) {
                return COLL_ASYNC_AGAIN;
            }
            op->phase = 2;
            op->offset = 0;
        }
        for (; op->phase <= shm->nranks; ++op->phase, op->offset = 0) {
            if (!copy_result(op, chunk, (shm->rank + op->phase - 1) % shm->nranks)) {
                return COLL_ASYNC_AGAIN;
            }
        }
        op->done += chunk;
        if (op->done == op->count) {
            return OMPI_SUCCESS;
        }
        ++op->seq;
        op->phase = 0;
    }
}

/* A reduce's root reduces the whole chunk, which each writer streams from its start. */
static size_t whole_chunk_start(const struct coll_async_sched *op, size_t chunk, int writer)
{
    (void) op;
    (void) chunk;
    (void) writer;
    return 0;
}

/* The root's part of a rooted chunk: out = its input op every slot, in rank order,
 * for the elements [op->offset, ready) that every rank has written. */
static void reduce_written(struct coll_async_sched *op, size_t ready)
{
    size_t at = element_offset(op, op->offset);
    size_t offset = element_offset(op, op->done) + at;

    fold_slots(op, (char *) op->rbuf + offset, (const char *) op->sbuf + offset, at,
               ready - op->offset);
    op->offset = ready;
}

/*
 * A reduce, chunk by chunk through the slots: the other ranks copy their chunk in
 * and go on to the next (two in flight with the slot parities), the root reduces
 * its own input and then every slot, in rank order, into its receive buffer, each
 * piece as soon as every rank has written it.
 */
static int rooted_chunks(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);
    struct coll_async_shm_segment *shm = schedule_shm(op);
    size_t per_chunk = shm->slot_size / op->reduction.size;

    for (;;) {
        size_t chunk = op->count - op->done < per_chunk ? op->count - op->done : per_chunk;

        if (shm->rank != op->root) {
            if (!schedule_may_write(op)) {
                return COLL_ASYNC_AGAIN;
            }
            schedule_write_slot(op, (const char *) op->sbuf + element_offset(op, op->done),
                                element_offset(op, chunk),
                                coll_async_decision_reduce_streams(
                                    op->bytes, coll_async_schedule_config.stream_bytes));
        } else {
            if (0 == op->phase) {
                schedule_publish(op, COLL_ASYNC_SHM_ARRIVED);
                op->phase = 1;
                op->offset = 0;
            }
            while (op->offset < chunk) {
                size_t ready = part_ready(op, chunk, chunk, whole_chunk_start);

                if (ready == op->offset) {
                    return COLL_ASYNC_AGAIN;
                }
                reduce_written(op, ready);
            }
            op->phase = 0;
        }
        op->done += chunk;
        if (op->done == op->count) {
            return OMPI_SUCCESS;
        }
        ++op->seq;
    }
}

/*
 * Reduces this rank's slice [first, first + share) of all inputs, read from the
 * peers' buffers through the bounce buffer a piece at a time, into out (which
 * already holds this rank's own part of the slice).
 */
static int reduce_slice_from_peers(struct coll_async_sched *op, char *out, size_t first,
                                   size_t share)
{
    struct coll_async_shm_segment *shm = schedule_shm(op);
    size_t per_piece = op->channel->bounce_size / op->reduction.size;
    char *incoming = op->channel->bounce + op->channel->bounce_size;

    for (size_t done = 0; done < share; done += per_piece) {
        size_t piece = share - done < per_piece ? share - done : per_piece;

        for (int rank = 0; rank < shm->nranks; ++rank) {
            int rc;

            if (rank == shm->rank) {
                continue;
            }
            rc = coll_async_channel_get(op->channel, rank, incoming, schedule_token(op, rank, 0),
                                       element_offset(op, first + done),
                                       element_offset(op, piece));
            if (0 != rc) {
                return OMPI_ERROR;
            }
            coll_async_reduce(&op->reduction, out + element_offset(op, done), incoming, piece);
        }
    }
    return OMPI_SUCCESS;
}

/*
 * Single copy: rank r reduces slice r of the inputs into its receive buffer (or,
 * in a reduce, a bounce buffer it then writes into the root's), then the slices
 * are read from there. Address 0 is the input, address 1 the result.
 */
static int single_copy_slice(struct coll_async_sched *op, size_t first, size_t share)
{
    const char *input = (const char *) op->sbuf + element_offset(op, first);
    size_t per_piece = op->channel->bounce_size / op->reduction.size;

    if (keeps_result(op)) {
        char *out = (char *) op->rbuf + element_offset(op, first);
        if (out != input) {
            memcpy(out, input, element_offset(op, share));
        }
        return reduce_slice_from_peers(op, out, first, share);
    }
    /* A reduce's non-root: piece by piece into the bounce, then into the root. */
    for (size_t done = 0; done < share; done += per_piece) {
        size_t piece = share - done < per_piece ? share - done : per_piece;
        int rc;

        memcpy(op->channel->bounce, input + element_offset(op, done), element_offset(op, piece));
        rc = reduce_slice_from_peers(op, op->channel->bounce, first + done, piece);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
        if (0 != coll_async_channel_put(op->channel, op->root, schedule_token(op, op->root, 1),
                                       element_offset(op, first + done), op->channel->bounce,
                                       element_offset(op, piece))) {
            return OMPI_ERROR;
        }
    }
    return OMPI_SUCCESS;
}

static int single_copy(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);
    struct coll_async_shm_segment *shm = schedule_shm(op);
    size_t first, share;
    int rc;

    switch (op->phase) {
    case 0:
        schedule_publish_tokens(op, op->sbuf, op->rbuf);
        schedule_publish(op, COLL_ASYNC_SHM_ARRIVED);
        op->phase = 1;
        /* fall through */
    case 1:
        if (!schedule_all(op, COLL_ASYNC_SHM_ARRIVED, op->seq)) {
            return COLL_ASYNC_AGAIN;
        }
        schedule_slice(op->count, op->reduction.size, shm->nranks, shm->rank, &first, &share);
        rc = single_copy_slice(op, first, share);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
        schedule_publish(op, COLL_ASYNC_SHM_READY);
        op->phase = 2;
        /* fall through */
    case 2:
        /* Allreduce: read the other slices; a reduce's root has them already. */
        if (op->root < 0) {
            if (!schedule_all(op, COLL_ASYNC_SHM_READY, op->seq)) {
                return COLL_ASYNC_AGAIN;
            }
            for (int rank = 0; rank < shm->nranks; ++rank) {
                if (rank == shm->rank) {
                    continue;
                }
                schedule_slice(op->count, op->reduction.size, shm->nranks, rank, &first,
                               &share);
                if (0 != coll_async_channel_get(op->channel, rank,
                                               (char *) op->rbuf + element_offset(op, first),
                                               schedule_token(op, rank, 1),
                                               element_offset(op, first),
                                               element_offset(op, share))) {
                    return OMPI_ERROR;
                }
            }
        }
        schedule_publish(op, COLL_ASYNC_SHM_DONE);
        op->phase = 3;
        /* fall through */
    default:
        /* Others may still read this rank's buffers until all are done. */
        return schedule_all(op, COLL_ASYNC_SHM_DONE, op->seq) ? OMPI_SUCCESS : COLL_ASYNC_AGAIN;
    }
}

void coll_async_reduction_begin(struct coll_async_op *base)
{
    struct coll_async_sched *op = coll_async_sched_of(base);

    enum coll_async_family family = op->root < 0 ? COLL_ASYNC_FAMILY_ALLREDUCE
                                                 : COLL_ASYNC_FAMILY_REDUCE;
    struct coll_async_decision_shm shm = schedule_decision(op, family);
    enum coll_async_shm_schedule schedule = coll_async_decision_shm(family, op->bytes, op->root,
                                                                     &shm);
    uint64_t steps = 1;

    op->phase = 0;
    op->done = 0;
    if (COLL_ASYNC_SHM_STAGED == schedule || COLL_ASYNC_SHM_ROOTED_CHUNKS == schedule) {
        schedule = op->root < 0 ? COLL_ASYNC_SHM_STAGED : COLL_ASYNC_SHM_ROOTED_CHUNKS;
    }
    schedule_count(schedule);
    switch (schedule) {
    case COLL_ASYNC_SHM_SMALL_ROOT: op->base.step = small_root; break;
    case COLL_ASYNC_SHM_SMALL_LOCK: op->base.step = small_lock; break;
    case COLL_ASYNC_SHM_SMALL_ATOMIC: op->base.step = small_atomic; break;
    case COLL_ASYNC_SHM_SMALL_EACH: op->base.step = small_each; break;
    case COLL_ASYNC_SHM_SINGLE_COPY: op->base.step = single_copy; break;
    default:
        /* STAGED or ROOTED_CHUNKS, slot-sized chunks. */
        op->base.step = op->root < 0 ? staged : rooted_chunks;
        steps = (op->count + shm.slot_size / op->reduction.size - 1)
                / (shm.slot_size / op->reduction.size);
        break;
    }
    op->seq = coll_async_channel_sequence(op->channel, steps);
}
