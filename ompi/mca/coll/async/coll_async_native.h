/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the collectives this component runs itself.
 *
 * Each turns the MPI arguments into an op (MPI_IN_PLACE resolved, datatypes
 * reduced to bytes, to a reduction, or to blocks of an exchange plan) and
 * executes it in the form coll names: inline (blocking), on the progress thread
 * behind a request (nonblocking), or kept in a persistent request that posts it
 * at each MPI_Start. The shared-memory schedules of allreduce, reduce, bcast,
 * barrier, allgather and reduce_scatter_block take contiguous data and the
 * reductions the component has kernels for; every other case, and every other
 * collective, is an exchange (coll_async_exchange.h). A single-process
 * communicator needs no channel: its exchange is a local copy. Across nodes the
 * five of them run as hierarchical runs (coll_async_hier.h) where the data is
 * contiguous and has a kernel, and gather, scatter, alltoall, scan, exscan,
 * allgatherv and reduce_scatter(_block) where the decision aggregates them by
 * node; every other call is an exchange over the mapper (coll_async_pairs.h).
 */

#ifndef MCA_COLL_ASYNC_NATIVE_H
#define MCA_COLL_ASYNC_NATIVE_H

#include "coll_async.h"
#include "coll_async_block.h"
#include "coll_async_schedule.h"

/* The arguments shared by every entry point. */
struct coll_async_call {
    mca_coll_async_module_t *module;
    struct ompi_communicator_t *comm;
    enum coll_async_coll coll;
    ompi_request_t **request; /* NULL when blocking */
    /* An agreement's (coll_async_agree.c): its own order of ops and its own
     * tags over the mapper, apart from the communicator's collectives. NULL:
     * the communicator's. */
    struct coll_async_stream *stream;
    struct coll_async_peers *peers;
};

/* buf folded with op over every rank, in rank order, as an exchange over the
 * mapper with call's peers, on call's stream (an agreement). */
int coll_async_native_agree(const struct coll_async_call *call, void *buf, size_t count,
                            struct ompi_datatype_t *dtype, struct ompi_op_t *op);
/* root < 0: allreduce. */
int coll_async_native_reduce(const struct coll_async_call *call, const void *sbuf, void *rbuf,
                             size_t count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                             int root);
int coll_async_native_bcast(const struct coll_async_call *call, void *buf, size_t count,
                            struct ompi_datatype_t *dtype, int root);
int coll_async_native_barrier(const struct coll_async_call *call);
/*
 * One side of a data movement: the blocks of a buffer, one per rank. No counts
 * (counts.values NULL): every block is count elements, one after the other
 * (allgather, alltoall); else counts[i] at displs[i] elements (the v forms) or,
 * with dtypes, of dtypes[i] at displs[i] bytes (the w forms). buf MPI_IN_PLACE:
 * as MPI says.
 */
struct coll_async_side {
    const void *buf;
    size_t count;
    struct coll_async_values counts, displs;
    struct ompi_datatype_t *dtype;
    struct ompi_datatype_t *const *dtypes;
};

/* Block i of a side: where it starts, how many elements of which type; or as an
 * exchange's block. */
void coll_async_side_at(const struct coll_async_side *side, int i, const char **base,
                        size_t *count, struct ompi_datatype_t **dtype);
void coll_async_side_block(const struct coll_async_side *side, int i,
                           struct coll_async_block *block);

/* Runs op in the form call names: inline, posted behind a request, or kept in a
 * persistent one; the op's plan then belongs to the request, or is freed here
 * when the op ran inline. driven: it touches the mapper, which only the
 * engine's driver may, so a blocking op runs as the driver. */
int coll_async_native_run(const struct coll_async_call *call, struct coll_async_sched *op,
                          bool driven);

/* Verbose level 1, once per communicator and family: that its calls run across
 * nodes in the shape how names (the first call's details: first). */
void coll_async_native_say_aggregated(const struct coll_async_call *call, const char *how,
                                      const char *first);

/* allgatherv and reduce_scatter(_block) (rcounts NULL) across nodes by node
 * (coll_async_native_v.c), where the decision takes them: whether it did, and
 * then *rc. */
bool coll_async_native_allgatherv_by_node(const struct coll_async_call *call,
                                          const struct coll_async_side *send,
                                          const struct coll_async_side *recv, int *rc);
bool coll_async_native_reduce_scatter_by_node(const struct coll_async_call *call,
                                              const void *sbuf, void *rbuf, size_t rcount,
                                              struct coll_async_values rcounts,
                                              struct ompi_datatype_t *dtype,
                                              struct ompi_op_t *op, int *rc);

/* The neighbourhood collectives (coll_async_neighbor.c): every block of send
 * (one, shared by every destination, when shared) to the communicator's
 * destinations, every block of recv from its sources. */
int coll_async_native_neighbor(const struct coll_async_call *call,
                               const struct coll_async_side *send, bool shared,
                               const struct coll_async_side *recv);

/* root < 0: allgather(v), else gather(v); send is the one block of this rank. */
int coll_async_native_gather(const struct coll_async_call *call,
                             const struct coll_async_side *send,
                             const struct coll_async_side *recv, int root);
/* recv is the one block of this rank. */
int coll_async_native_scatter(const struct coll_async_call *call,
                              const struct coll_async_side *send,
                              const struct coll_async_side *recv, int root);
int coll_async_native_alltoall(const struct coll_async_call *call,
                               const struct coll_async_side *send,
                               const struct coll_async_side *recv);
/* No rcounts (rcounts.values NULL): reduce_scatter_block with rcount each. */
static inline size_t coll_async_reduce_scatter_count(size_t rcount,
                                                     struct coll_async_values rcounts, int rank)
{
    return NULL == rcounts.values ? rcount : coll_async_count_at(rcounts, rank);
}
int coll_async_native_reduce_scatter(const struct coll_async_call *call, const void *sbuf,
                                     void *rbuf, size_t rcount, struct coll_async_values rcounts,
                                     struct ompi_datatype_t *dtype, struct ompi_op_t *op);
/* exclusive: exscan. */
int coll_async_native_scan(const struct coll_async_call *call, const void *sbuf, void *rbuf,
                           size_t count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                           bool exclusive);

/* The same on an intercommunicator (coll_async_intercomm.c): root MPI_ROOT,
 * MPI_PROC_NULL or a rank of the remote group, -1 for the unrooted forms. */
int coll_async_intercomm_reduce(const struct coll_async_call *call, const void *sbuf,
                                void *rbuf, size_t count, struct ompi_datatype_t *dtype,
                                struct ompi_op_t *op, int root);
int coll_async_intercomm_bcast(const struct coll_async_call *call, void *buf, size_t count,
                               struct ompi_datatype_t *dtype, int root);
int coll_async_intercomm_barrier(const struct coll_async_call *call);
int coll_async_intercomm_gather(const struct coll_async_call *call,
                                const struct coll_async_side *send,
                                const struct coll_async_side *recv, int root);
int coll_async_intercomm_scatter(const struct coll_async_call *call,
                                 const struct coll_async_side *send,
                                 const struct coll_async_side *recv, int root);
int coll_async_intercomm_alltoall(const struct coll_async_call *call,
                                  const struct coll_async_side *send,
                                  const struct coll_async_side *recv);
int coll_async_intercomm_reduce_scatter(const struct coll_async_call *call, const void *sbuf,
                                        void *rbuf, size_t rcount,
                                        struct coll_async_values rcounts,
                                        struct ompi_datatype_t *dtype, struct ompi_op_t *op);

#endif /* MCA_COLL_ASYNC_NATIVE_H */
