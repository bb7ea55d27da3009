/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the neighbourhood collectives (MPI_Neighbor_allgather(v),
 * MPI_Neighbor_alltoall(v,w)) on Cartesian, graph and distributed-graph
 * communicators, as blocks crossing between pairs of ranks over the mapper
 * (coll_async_pairs.h), on one node or across nodes.
 *
 * A rank's neighbours come from the communicator's topology, in MPI's order.
 * Over the mapper the k-th block a rank sends another pairs with the k-th that
 * one receives from it (coll_async_pairs.h), so the order blocks are added in
 * says which receive a send fills:
 *   - Cartesian: for dimension d, block 2d goes to the neighbour in the
 *     negative direction and block 2d + 1 in the positive one. A block sent in
 *     the negative direction is the one its receiver gets from its positive
 *     side, and the other way round (MPI 4.0, 8.6), which matters where both
 *     neighbours are one rank (a periodic dimension of 2): receives are added
 *     positive side first, as sends go negative first. A rank that is its own
 *     neighbour (a periodic dimension of 1) copies each block to the receive of
 *     the other direction (the steps).
 *   - Graphs: the k-th block a rank sends to one destination pairs with the k-th
 *     its destination receives from it, in the order of the lists.
 * MPI_PROC_NULL neighbours are skipped.
 */

#include "ompi_config.h"

#include <stdlib.h>

#include "ompi/communicator/communicator.h"
#include "ompi/constants.h"
#include "ompi/mca/topo/topo.h"

#include "coll_async_native.h"
#include "coll_async_pairs.h"

/* A rank's sources and destinations, each with its step. */
struct neighbours {
    bool cartesian;
    int in, out;
    int *source, *destination;
    unsigned *receive_step, *send_step;
};

static void neighbours_free(struct neighbours *n)
{
    free(n->source);
}

static int neighbours_alloc(struct neighbours *n, int in, int out)
{
    size_t count = (size_t) in + (size_t) out;

    n->in = in;
    n->out = out;
    n->source = malloc(count * (sizeof(int) + sizeof(unsigned)) + 1);
    if (NULL == n->source) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    n->destination = n->source + in;
    n->receive_step = (unsigned *) (n->destination + out);
    n->send_step = n->receive_step + in;
    return OMPI_SUCCESS;
}

/* The steps of a graph list: where this rank is its own neighbour, the k-th
 * time it sends itself a block pairs with the k-th time it receives one. */
static void self_steps(const int *list, int count, int me, unsigned *step)
{
    unsigned seen = 0;

    for (int k = 0; k < count; ++k) {
        step[k] = list[k] == me ? seen++ : 0;
    }
}

static int cartesian(struct ompi_communicator_t *comm, struct neighbours *n)
{
    int dims = comm->c_topo->mtc.cart->ndims, rc;

    rc = neighbours_alloc(n, 2 * dims, 2 * dims);
    n->cartesian = true;
    for (int d = 0; OMPI_SUCCESS == rc && d < dims; ++d) {
        int negative, positive;

        rc = comm->c_topo->topo.cart.cart_shift(comm, d, 1, &negative, &positive);
        n->source[2 * d] = n->destination[2 * d] = negative;
        n->source[2 * d + 1] = n->destination[2 * d + 1] = positive;
        n->send_step[2 * d] = 2 * d;
        n->send_step[2 * d + 1] = 2 * d + 1;
        n->receive_step[2 * d] = 2 * d + 1; /* sent the positive way by the negative one */
        n->receive_step[2 * d + 1] = 2 * d;
    }
    return rc;
}

static int graph(struct ompi_communicator_t *comm, struct neighbours *n)
{
    int me = ompi_comm_rank(comm), count, rc;

    rc = comm->c_topo->topo.graph.graph_neighbors_count(comm, me, &count);
    if (OMPI_SUCCESS == rc) {
        rc = neighbours_alloc(n, count, count);
    }
    if (OMPI_SUCCESS == rc) {
        rc = comm->c_topo->topo.graph.graph_neighbors(comm, me, count, n->source);
    }
    if (OMPI_SUCCESS == rc) {
        for (int k = 0; k < count; ++k) {
            n->destination[k] = n->source[k];
        }
        self_steps(n->source, count, me, n->receive_step);
        self_steps(n->destination, count, me, n->send_step);
    }
    return rc;
}

static int dist_graph(struct ompi_communicator_t *comm, struct neighbours *n)
{
    const mca_topo_base_comm_dist_graph_2_2_0_t *g = comm->c_topo->mtc.dist_graph;
    int me = ompi_comm_rank(comm), rc = neighbours_alloc(n, g->indegree, g->outdegree);

    if (OMPI_SUCCESS == rc) {
        for (int k = 0; k < g->indegree; ++k) {
            n->source[k] = g->in[k];
        }
        for (int k = 0; k < g->outdegree; ++k) {
            n->destination[k] = g->out[k];
        }
        self_steps(n->source, n->in, me, n->receive_step);
        self_steps(n->destination, n->out, me, n->send_step);
    }
    return rc;
}

static int neighbours_of(struct ompi_communicator_t *comm, struct neighbours *n)
{
    n->source = NULL;
    n->cartesian = false;
    if (NULL == comm->c_topo) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    if (OMPI_COMM_IS_CART(comm)) {
        return cartesian(comm, n);
    }
    if (OMPI_COMM_IS_GRAPH(comm)) {
        return graph(comm, n);
    }
    if (OMPI_COMM_IS_DIST_GRAPH(comm)) {
        return dist_graph(comm, n);
    }
    return OMPI_ERR_NOT_SUPPORTED;
}

/* Adds block k of side, to or from rank (unless MPI_PROC_NULL). */
static int add_block(void *pairs, const struct coll_async_side *side, int k, int rank,
                     unsigned step, bool receive)
{
    struct ompi_datatype_t *dtype;
    const char *base;
    size_t count;

    if (MPI_PROC_NULL == rank) {
        return OMPI_SUCCESS;
    }
    coll_async_side_at(side, k, &base, &count, &dtype);
    return coll_async_pairs_add(pairs, rank, step, receive, base, count, dtype);
}

int coll_async_native_neighbor(const struct coll_async_call *call,
                               const struct coll_async_side *send, bool shared,
                               const struct coll_async_side *recv)
{
    struct coll_async_sched work = {.base = {.begin = coll_async_pairs_begin,
                                             .free_plan = coll_async_pairs_free},
                                    .root = -1};
    struct coll_async_peers *peers = NULL;
    struct neighbours n;
    int rc = neighbours_of(call->comm, &n);

    if (OMPI_SUCCESS == rc && ompi_comm_size(call->comm) > 1) {
        peers = mca_coll_async_module_peers(call->module, call->comm);
        rc = NULL != peers ? OMPI_SUCCESS : OMPI_ERR_UNREACH;
    }
    if (OMPI_SUCCESS == rc) {
        work.base.plan = coll_async_pairs_new_list(n.in + n.out, peers, call->comm->c_name,
                                                   ompi_comm_rank(call->comm));
        rc = NULL != work.base.plan ? OMPI_SUCCESS : OMPI_ERR_OUT_OF_RESOURCE;
    }
    /* Receives first, so that a peer's data finds its buffer posted. */
    for (int i = 0; OMPI_SUCCESS == rc && i < n.in; ++i) {
        int k = n.cartesian ? i ^ 1 : i; /* positive side first */

        rc = add_block(work.base.plan, recv, k, n.source[k], n.receive_step[k], true);
    }
    for (int k = 0; OMPI_SUCCESS == rc && k < n.out; ++k) {
        rc = add_block(work.base.plan, send, shared ? 0 : k, n.destination[k], n.send_step[k],
                       false);
    }
    neighbours_free(&n);
    if (OMPI_SUCCESS != rc) {
        coll_async_pairs_free(work.base.plan);
        return rc;
    }
    return coll_async_native_run(call, &work, NULL != peers);
}
