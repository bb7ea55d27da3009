/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the exchange, the schedule behind every collective that moves
 * blocks of typed data between ranks (gather, scatter, alltoall and their v and
 * w forms, allgatherv), and behind the reductions the component has no kernel
 * for (user-defined operations, derived datatypes), which exchange their inputs
 * and fold them in rank order.
 *
 * The plan names, per peer, the block this rank sends and the block it receives.
 * A shared plan has one send block that every receiver reads (allgather, gather);
 * a personal plan has one per receiver (alltoall, scatter). In shared memory a
 * rank's slot holds one lane (shared) or one lane per other rank (personal). The
 * data crosses in rounds of one lane. In a uniform plan every rank's largest
 * block has the same size (the collectives without v or w), so each rank counts
 * the rounds itself and waits only for the ranks it reads from: a gather's
 * senders leave as soon as their data is out. Otherwise a header line precedes
 * the lanes: every rank writes in the first round how many rounds it needs, and
 * all run the largest, so the v-collectives agree on their length although no
 * rank knows every count.
 */

#ifndef MCA_COLL_ASYNC_EXCHANGE_H
#define MCA_COLL_ASYNC_EXCHANGE_H

#include <stdbool.h>

#include "coll_async_block.h"
#include "coll_async_engine.h"
#include "coll_async_reduction.h"

struct ompi_op_t;

/* result = input[first] op input[first + 1] op ... op input[last], in rank order,
 * where input[i] is the block received from rank i. */
struct coll_async_fold {
    struct ompi_op_t *op; /* NULL: no fold */
    struct coll_async_reduction reduction; /* the kernel, when the pair has one */
    int first, last;      /* last < first: nothing to fold */
    struct coll_async_block result;
};

struct coll_async_exchange {
    int nranks, rank;
    bool personal;
    bool uniform;                       /* set by the caller when it holds */
    /* A shared plan's readers (ranks that receive send[0]): every rank by
     * default. The shared memory lets receivers read what they need; over the
     * mapper (coll_async_pairs.h) the sender must know whom to send it to. */
    int readers_first, readers_last;
    /* The send blocks are the receive blocks (an alltoall in place): the shared
     * memory packs a round before it unpacks it; over the mapper each is copied
     * before anything is received. */
    bool in_place;
    struct coll_async_block *send;      /* [nranks] personal, [1] shared */
    struct coll_async_block *recv;      /* [nranks], from each rank */
    struct coll_async_block self_from;  /* this rank's own part, copied locally */
    struct coll_async_block self_to;
    struct coll_async_fold fold;
    /* Copied once the fold is done: a part of its result (an intercommunicator's
     * reduce_scatter keeps this rank's slice of the folded vector). */
    struct coll_async_block after_from, after_to;
    char *scratch;                      /* where fold inputs are received */
};

/* A plan for nranks ranks, blocks empty, with scratch_bytes of scratch space;
 * NULL when out of memory. */
struct coll_async_exchange *coll_async_exchange_new(int nranks, int rank, bool personal,
                                                    size_t scratch_bytes);
/* Frees the plan and its datatype and operation references (an op's free_plan). */
void coll_async_exchange_free(void *plan);

/* The scratch space one rank's block of count dtype takes: its span, rounded up
 * to a cache line, so that every block starts as aligned as the scratch space
 * (a cache line): the folds read elements in place, and an element misaligned
 * across a page boundary (a long double at 4 bytes past a block of 20-byte
 * pairs) is slow on hardware and misread by some emulators (QEMU's x87). */
size_t coll_async_exchange_scratch_block(struct ompi_datatype_t *dtype, size_t count);

/* Receives count dtype from every rank in first..last into the scratch space and
 * folds them with op into result (count dtype at rbuf); the caller sets
 * what each rank sends. scratch_bytes must be nranks scratch blocks of (count,
 * dtype). */
void coll_async_exchange_set_fold(struct coll_async_exchange *plan, struct ompi_op_t *op,
                                  struct ompi_datatype_t *dtype, size_t count, int first,
                                  int last, void *rbuf);

/* The local part, once every block has crossed: this rank's own block, the
 * fold, then the part of it kept. OMPI_SUCCESS or an error. */
int coll_async_exchange_finish(const struct coll_async_exchange *plan);

/* The begin of ops whose op->plan is an exchange. */
void coll_async_exchange_begin(struct coll_async_op *op);

#endif /* MCA_COLL_ASYNC_EXCHANGE_H */
