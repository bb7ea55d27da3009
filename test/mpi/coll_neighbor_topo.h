/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_neighbor's communicators with a topology: how each is specified, and what
 * every rank derives from the specification alone (its neighbour lists, and which
 * of its send blocks each sender sends to it), so the test never takes MPI's word
 * for whom it receives from. coll_neighbor.c says what is assumed.
 */

#ifndef COLL_NEIGHBOR_TOPO_H
#define COLL_NEIGHBOR_TOPO_H

#include <mpi.h>

enum topo_kind { TOPO_CART, TOPO_GRAPH, TOPO_DIST };

struct topo {
    char name[80];
    enum topo_kind kind;
    MPI_Comm comm; /* MPI_COMM_NULL where this rank is outside */
    int n;         /* ranks in comm */
    int ndims, dims[2], periods[2]; /* CART */
    int *gindex, *gedges;           /* GRAPH, as MPI_Graph_create takes them */
    int nedges, *esrc, *edst;       /* DIST: directed edges in order */
    int small_periodic;             /* CART: a periodic dimension of size 1 or 2 */
    /* This rank's view (comm != MPI_COMM_NULL): */
    int me, indeg, outdeg;
    int *src, *dst;
    int *from_block; /* per receive block: the sender's send block (-1: MPI_PROC_NULL) */
};

#define TOPO_MAX 13

/* Creates every topology (collective over MPI_COMM_WORLD, at most 8 ranks) and
 * returns how many; *lists_wrong counts those whose lists, as MPI reports them, differ
 * from the specification's on this rank. */
int topos_create(struct topo *topos, int *lists_wrong);
void topos_free(struct topo *topos, int count);

#endif
