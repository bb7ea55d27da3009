/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_intercomm: what the driver (coll_intercomm.c) and the collectives' layouts
 * (coll_intercomm_colls.c) share: the collectives, the element types, one rank's
 * view of an intercommunicator, one call and its buffers.
 */

#ifndef COLL_INTERCOMM_H
#define COLL_INTERCOMM_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#define PROGRAM "coll_intercomm"
#define SENTINEL 0xA5
#define GUARD 64 /* bytes past every buffer that must keep the fill pattern */

enum coll {
    BCAST, ALLREDUCE, REDUCE, ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV, ALLTOALLW,
    GATHER, GATHERV, SCATTER, SCATTERV, REDUCE_SCATTER_BLOCK, REDUCE_SCATTER, BARRIER,
    NUM_COLLS
};
enum form { BLOCKING, NONBLOCKING, PERSISTENT, NUM_FORMS };

/* Element types: int, a vector of 2 ints with holes, an affine pair (a, b). */
enum elem { E_INT, E_GAPS, E_PAIR, NUM_ELEMS };

struct elemtype {
    const char *name;
    MPI_Datatype dtype;
    size_t extent;
    int per;        /* 32-bit values per element */
    size_t offs[2]; /* their byte offsets in the element */
};

extern struct elemtype elemtypes[NUM_ELEMS];
extern MPI_Op affine_op; /* non-commutative, on E_PAIR */
extern const char *const coll_names[NUM_COLLS];

/* One rank's view of an intercommunicator: groups are 0 and 1 on every rank. */
struct side {
    MPI_Comm comm;
    const char *name;
    int group; /* this rank's group */
    int me;    /* rank in the local group */
    int nl, nr;
};

struct call {
    enum coll coll;
    enum form form;
    const struct side *s;
    const struct elemtype *t;
    int count;
    int root_group, root; /* rooted collectives: the root's group and rank in it */
    uint32_t salt;
    int start; /* persistent: which start (0, 1) */
};

/* A rank's arguments and buffers for a call; the image is what rbuf must hold. */
struct args {
    char *sbuf, *scopy;   /* send buffer and its content before the call */
    char *rbuf, *image;   /* receive buffer and what it must hold after */
    size_t sbytes, rbytes; /* without the GUARD */
    int scount, rcount, root_arg;
    int *scounts, *sdispls, *rcounts, *rdispls; /* indexed by remote rank (local: rs) */
    MPI_Datatype *stypes, *rtypes;
    int any_data; /* 0: a zero-count call, which Open MPI's bindings may answer */
};

int rooted(enum coll c);
int reduction(enum coll c);
uint32_t value_of(int group, int rank, int block, size_t idx, uint32_t salt);

/* Sizes and allocates a's buffers and count arrays for c (all zero before). */
void call_plan(const struct call *c, struct args *a);
/* Writes the send data of c->salt, resets the receive buffer and builds the image. */
void call_fill(const struct call *c, struct args *a);
/* Runs c (blocking) or creates its request (nonblocking, persistent). */
int call_issue(const struct call *c, struct args *a, MPI_Request *req);
void call_free(struct args *a);

#endif
