/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the shared-memory transport.
 *
 * One segment per (communicator, node), set up in two halves so that creating a
 * communicator never waits for a peer, and one never used costs nothing: when the
 * communicator is created, each rank notes what the segment will be
 * (coll_async_shm_prepare); at its first collective the creating rank makes the
 * file and every other local rank attaches, and each waits, as a collective waits
 * for its peers, for the others, without blocking (coll_async_shm_settle). The
 * last to attach unlinks the file, or the creator does at detach. A freed
 * communicator's segment stays mapped, parked, and the creator of the next
 * communicator of the same members takes it again instead of making a file
 * (coll_async_shm_pool.h): a file's pages cost more than a collective. The segment
 * holds, per local rank, a control line of sequence flags and two data slots;
 * plus a shared accumulator for the sender-side reduction modes. Large data moves
 * by single copy between the ranks' own buffers through CMA
 * (process_vm_readv/writev) when the kernel allows it.
 *
 * Set-up trusts nothing it finds in /dev/shm, which every user can write to. The
 * name is a MAC of the communicator under the creating rank's secret key
 * (coll_async_auth.h), which only the processes of its jobs know, so no other user
 * can take it first; every rank checks the file's type, owner, mode and size, and a
 * header the creator vouches for with a MAC of every layout parameter. A file
 * found unfinished is given up on after a deadline, and the ranks reach one
 * outcome through one atomic word in the header, exchanging no message: all use
 * the segment, or all fail alike.
 *
 * Flags only grow: a rank publishes "I reached phase F of collective s" by storing
 * s, and the others wait until every rank's flag is at least s. No reset, no
 * separate barrier. Slot parity s % 2 double-buffers consecutive collectives.
 */

#ifndef MCA_COLL_ASYNC_SHM_H
#define MCA_COLL_ASYNC_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "coll_async_auth.h"

#define COLL_ASYNC_SHM_LINE 128 /* two cache lines: adjacent-line prefetch shares pairs */

/* The phases a rank announces for one collective. */
enum coll_async_shm_flag {
    COLL_ASYNC_SHM_ARRIVED, /* entered the collective; its input, if any, is published */
    COLL_ASYNC_SHM_READY,   /* its share of the result is published */
    COLL_ASYNC_SHM_DONE,    /* finished reading the other ranks' memory */
    COLL_ASYNC_SHM_NUM_FLAGS
};

/* Progress inside a slot: written = seq << COLL_ASYNC_SHM_PIECE_BITS | pieces of
 * the owner's slot written for collective seq, so it only grows too. */
#define COLL_ASYNC_SHM_PIECE_BITS 20

/* A payload of at most this many bytes travels inline, in its sender's control
 * block next to the seq that announces it: a reader waits on one cache line and
 * finds the data there, instead of a second miss on a slot. */
#define COLL_ASYNC_SHM_INLINE_BYTES 16

struct coll_async_shm_inline {
    volatile uint64_t seq; /* of the collective whose payload data holds */
    char data[COLL_ASYNC_SHM_INLINE_BYTES];
};

/* One rank's control lines. Written by its owner only (the accumulator aside). */
struct coll_async_shm_control {
    volatile uint64_t flag[COLL_ASYNC_SHM_NUM_FLAGS];
    volatile uint64_t written;
    volatile uint64_t address[2]; /* CMA tokens: the owner's buffers for this collective */
    volatile int32_t pid;
    volatile int32_t vote; /* the caller's, given at join (coll_async_shm_all_voted) */
    /* One per slot parity, as the slots (coll_async_shm_inline_write), in the
     * second line of the pair. */
    struct coll_async_shm_inline inline_payload[2] __attribute__((aligned(64)));
    /* Last, and kept when a reused segment is cleared: whether this rank parked
     * the segment for reuse, and whether the creator claimed it since
     * (coll_async_shm_pool.h). */
    volatile uint64_t park;
} __attribute__((aligned(COLL_ASYNC_SHM_LINE)));
_Static_assert(sizeof(struct coll_async_shm_control) == COLL_ASYNC_SHM_LINE,
               "a rank's control block grew past one pair of cache lines");

/* The sender-side reduction target, one per slot parity. */
struct coll_async_shm_accumulator {
    volatile uint64_t state; /* seq * COLL_ASYNC_SHM_MAX_RANKS + contributions so far */
    volatile int32_t lock;
} __attribute__((aligned(COLL_ASYNC_SHM_LINE)));

#define COLL_ASYNC_SHM_MAX_RANKS 4096

/* "/coll_async-" and 16 hex digits. */
#define COLL_ASYNC_SHM_NAME_MAX 32
#define COLL_ASYNC_SHM_FAILURE_MAX 256

/*
 * Who a segment belongs to: the creating rank's key, and a digest of the
 * communicator as each of its ranks knows it: members, bytes the caller encodes
 * identically on every rank (its members, in order, and what the segment is for),
 * and instance, which tells apart the live communicators of the same members
 * (their id). The name is the digest's hex, so two communicators never share one
 * and only holders of the key can compute it; the creator's header token is a MAC
 * under the same key. The family leaves the instance out: a segment parked when
 * one communicator was freed serves the next of its family.
 */
struct coll_async_shm_identity {
    struct coll_async_key key;
    uint64_t digest; /* of the members and the instance: the segment's name */
    uint64_t family; /* of the members alone: segments one may reuse */
    char name[COLL_ASYNC_SHM_NAME_MAX];
};

struct coll_async_shm_segment {
    int nranks, rank; /* local to the communicator, which lies in one node */
    int creator;      /* the local rank that creates the file */
    size_t slot_size;
    size_t piece_size; /* a slot is written and announced this many bytes at a time */
    bool cma;         /* every rank can read every other with CMA */
    void *base;
    size_t length;
    struct coll_async_shm_control *control;         /* [nranks] */
    struct coll_async_shm_accumulator *accumulator; /* [2] */
    char *accumulator_data;                         /* [2][slot_size] */
    char *slots;                                    /* [nranks][2][slot_size] */
    /* Per flag, a seq every rank was seen to have published it for: a wait that
     * this answers reads no other rank's line (coll_async_shm_all_seen). */
    uint64_t all_seen[COLL_ASYNC_SHM_NUM_FLAGS];
    /* Settling: 1 while not yet, then 0 (in use) or the error, for good. */
    int settled;
    bool joined;  /* created, or counted in (or out, having seen it fail) */
    bool created; /* this rank made the file: it removes it if nobody else will */
    bool reused;  /* a parked segment, taken again: it has no file */
    bool try_cma;
    int32_t vote;
    unsigned timeout_ms;
    uint64_t unfinished_since_ns; /* when this rank first saw the creator's file unfinished */
    struct coll_async_shm_identity id;
    char why[COLL_ASYNC_SHM_FAILURE_MAX]; /* this rank's failure, said at each settle */
    /* Called by the creator just before it makes the file, with its path: the
     * moment to ask for its removal should this process die. NULL: none. */
    void (*before_create)(const char *path);
};

/* 0, or -ENOMEM. */
int coll_async_shm_identify(struct coll_async_shm_identity *id, const struct coll_async_key *key,
                            const void *members, size_t length, uint32_t instance);

/* The file's path, "/dev/shm/coll_async-...", for cleanup by the launcher. */
void coll_async_shm_path(const struct coll_async_shm_identity *id, char *path, size_t size);

struct coll_async_shm_config {
    size_t slot_size;
    size_t piece_size;      /* divides a slot into at most 2^COLL_ASYNC_SHM_PIECE_BITS - 1 */
    bool try_cma;
    unsigned timeout_ms;    /* for a file found unfinished (coll_async_shm_setup_timeout) */
};

/* Why a rank did not attach, for the one report of it. */
struct coll_async_shm_failure {
    char why[COLL_ASYNC_SHM_FAILURE_MAX];
    /* Whether this rank is the one to report it: the creator always is; another
     * rank only for a cause that it alone met (the others learn the outcome,
     * not why). */
    bool speaker;
    /* From coll_async_shm_prepare: every local rank meets this failure there, as
     * it comes of the parameters all were given (a segment larger than memory
     * can address), so all can do without the segment from the start. Any other
     * failure is met at the first collective, by every rank alike. */
    bool together;
};

/* What coll_async_shm_settle returns while the outcome is open. */
#define COLL_ASYNC_SHM_AGAIN 1

/*
 * The first half of the set-up, when the communicator is created: what the
 * segment of id will be, local rank creator making it, and this rank's vote
 * (nonzero: yes), published with its CMA probe of the creator when it attaches.
 * Touches nothing in /dev/shm. 0; or an error (-EOVERFLOW) that every rank meets
 * here (failure->together), with failure filled in.
 */
int coll_async_shm_prepare(struct coll_async_shm_segment *segment,
                           const struct coll_async_shm_identity *id, int nranks, int rank,
                           int creator, int32_t vote,
                           const struct coll_async_shm_config *config,
                           struct coll_async_shm_failure *failure);

/*
 * The second half, at first use, without blocking: the creator makes the
 * segment (or claims one its members parked), any other rank attaches to it (or
 * takes its parked one again); COLL_ASYNC_SHM_AGAIN while the creator's segment
 * is not there yet or others have yet to attach (for as long as
 * it takes, as a collective waits for its peers: each does so at its own first
 * collective); then, for good, 0 when every rank attached (and segment->cma says
 * whether all can use CMA) or, for every rank alike, an error with failure
 * filled in, when one could not (the creator's file refused, or found unfinished
 * for longer than config's timeout; other parameters; no space).
 */
int coll_async_shm_settle(struct coll_async_shm_segment *segment,
                          struct coll_async_shm_failure *failure);

/* Once settled: whether every rank voted yes at its join. */
bool coll_async_shm_all_voted(const struct coll_async_shm_segment *segment);

/* Parks the segment for the next communicator of its family
 * (coll_async_shm_pool.h), or unmaps it; its creator removes the file if ranks
 * have yet to attach (none will: the communicator is gone). */
void coll_async_shm_detach(struct coll_async_shm_segment *segment);

/* The segment's bytes for nranks ranks of slot_size; -EOVERFLOW when they do not
 * fit in memory (slot_size near SIZE_MAX / 2, say). */
int coll_async_shm_length(int nranks, size_t slot_size, size_t *length);

static inline char *coll_async_shm_slot(const struct coll_async_shm_segment *segment, int rank,
                                        uint64_t seq)
{
    return segment->slots + ((size_t) rank * 2 + (seq & 1)) * segment->slot_size;
}

static inline char *coll_async_shm_accumulator_data(const struct coll_async_shm_segment *segment,
                                                    uint64_t seq)
{
    return segment->accumulator_data + (seq & 1) * segment->slot_size;
}

static inline void coll_async_shm_publish(struct coll_async_shm_segment *segment,
                                          enum coll_async_shm_flag flag, uint64_t seq)
{
    __atomic_store_n(&segment->control[segment->rank].flag[flag], seq, __ATOMIC_RELEASE);
}

static inline bool coll_async_shm_reached(const struct coll_async_shm_segment *segment, int rank,
                                          enum coll_async_shm_flag flag, uint64_t seq)
{
    return __atomic_load_n(&segment->control[rank].flag[flag], __ATOMIC_ACQUIRE) >= seq;
}

/* Announces the first pieces pieces of this rank's slot for seq as written. */
static inline void coll_async_shm_publish_written(struct coll_async_shm_segment *segment,
                                                  uint64_t seq, uint64_t pieces)
{
    __atomic_store_n(&segment->control[segment->rank].written,
                     seq << COLL_ASYNC_SHM_PIECE_BITS | pieces, __ATOMIC_RELEASE);
}

/* Bytes of rank's slot written for seq, of length in all. */
static inline size_t coll_async_shm_written(const struct coll_async_shm_segment *segment,
                                            int rank, uint64_t seq, size_t length)
{
    uint64_t written = __atomic_load_n(&segment->control[rank].written, __ATOMIC_ACQUIRE);
    uint64_t at = written >> COLL_ASYNC_SHM_PIECE_BITS;
    size_t bytes;

    if (at != seq) {
        return at < seq ? 0 : length; /* a writer moves on once a slot is whole */
    }
    bytes = (size_t) (written & ((1u << COLL_ASYNC_SHM_PIECE_BITS) - 1)) * segment->piece_size;
    return bytes < length ? bytes : length;
}

/* Whether every rank has published flag for seq: a full scan of the lines. */
static inline bool coll_async_shm_all_reached(const struct coll_async_shm_segment *segment,
                                              enum coll_async_shm_flag flag, uint64_t seq)
{
    for (int rank = 0; rank < segment->nranks; ++rank) {
        if (!coll_async_shm_reached(segment, rank, flag, seq)) {
            return false;
        }
    }
    return true;
}

/* Writes the payload of this rank's collective seq inline, and announces it: at
 * most COLL_ASYNC_SHM_INLINE_BYTES, once its parity is free as a slot's is. */
static inline void coll_async_shm_inline_write(struct coll_async_shm_segment *segment,
                                               uint64_t seq, const void *data, size_t bytes)
{
    struct coll_async_shm_inline *cell = &segment->control[segment->rank].inline_payload[seq % 2];

    memcpy(cell->data, data, bytes);
    __atomic_store_n(&cell->seq, seq, __ATOMIC_RELEASE);
}

/* Copies rank's inline payload of collective seq to `to`, once it is announced;
 * false while it is not. */
static inline bool coll_async_shm_inline_read(const struct coll_async_shm_segment *segment,
                                              int rank, uint64_t seq, void *to, size_t bytes)
{
    const struct coll_async_shm_inline *cell = &segment->control[rank].inline_payload[seq % 2];

    if (__atomic_load_n(&cell->seq, __ATOMIC_ACQUIRE) < seq) {
        return false;
    }
    memcpy(to, cell->data, bytes);
    return true;
}

/* Whether every rank is known to have published flag for seq, from what this
 * rank saw before (flags only grow): a collective that follows one which waited
 * for the same flag, as a bcast's root after a barrier, needs no cache miss on
 * the others' lines. Acquire and release order the data the flag published for
 * a thread that learns it here from another. */
static inline bool coll_async_shm_all_seen(const struct coll_async_shm_segment *segment,
                                           enum coll_async_shm_flag flag, uint64_t seq)
{
    return __atomic_load_n(&segment->all_seen[flag], __ATOMIC_ACQUIRE) >= seq;
}

/* Records that every rank has published flag for seq. Two threads racing here
 * may leave the lower seq, which is still true. */
static inline void coll_async_shm_saw_all(struct coll_async_shm_segment *segment,
                                          enum coll_async_shm_flag flag, uint64_t seq)
{
    if (!coll_async_shm_all_seen(segment, flag, seq)) {
        __atomic_store_n(&segment->all_seen[flag], seq, __ATOMIC_RELEASE);
    }
}

/*
 * Copies length bytes between this rank's memory and a segment. From 4 KiB on
 * x86-64, where the CPU reports its string move fast (ERMS), with rep movsb:
 * glibc 2.36 (Debian 12) takes it from 2 KiB itself, but 2.41 and 2.43 (Debian 13,
 * unstable) never on AMD Zen, and on this project's AMD EPYC VM their vector loop
 * made a 2-rank alltoall of 2 MiB blocks 2.2 times slower (docs/performance.md).
 */
void coll_async_shm_copy(void *to, const void *from, size_t length);

/*
 * Copies length bytes from this rank's memory into the segment, for other ranks to
 * read next. Streaming, with non-temporal stores: they skip the read for ownership
 * of lines that another core holds (a peer read them last), which was measured 3
 * to 10 times faster than memcpy where cores do not share a cache, and they end
 * with a store fence, so that a release store after them publishes the data.
 */
void coll_async_shm_copy_in(void *to, const void *from, size_t length, bool streaming);

/* Single copy from / to another rank's memory; 0 or -errno. */
int coll_async_shm_cma_read(const struct coll_async_shm_segment *segment, int rank, void *local,
                            uint64_t remote, size_t length);
int coll_async_shm_cma_write(const struct coll_async_shm_segment *segment, int rank,
                             uint64_t remote, const void *local, size_t length);

#endif /* MCA_COLL_ASYNC_SHM_H */
