/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * See coll_neighbor_topo.h. The topologies, for N ranks (reorder 0 everywhere, so a
 * topology's ranks are those of the communicator it is created from: MPI_COMM_WORLD,
 * or for the last four one whose ranks run in the reverse order, "rank-reversed"):
 *   Cartesian: 1-D periodic and non-periodic over every rank; 2-D from
 *   MPI_Dims_create with one dimension periodic and the other not (both ways);
 *   {N, 1} periodic (a periodic dimension of size 1: both neighbours are the rank
 *   itself); {2, 1} periodic on ranks 0 and 1 (a dimension of size 2: both
 *   neighbours are the same other rank; the other ranks get MPI_COMM_NULL); {1, N}
 *   non-periodic (MPI_PROC_NULL both ways in the first dimension).
 *   MPI_Graph_create: an undirected multigraph on ranks 0..m-1 (m = N-1 from 3 ranks
 *   on, so rank N-1 has no neighbours) with a ring, the edge 0-1 once more and a
 *   self-loop at m-1; odd ranks list their neighbours rotated by one.
 *   MPI_Dist_graph_create_adjacent: directed edges, a ring to the next and the
 *   next-but-one rank, self-edges at even ranks, 0->1 once more; from 3 ranks on
 *   rank N-1 has no neighbours at all, from 4 ranks on rank N-2 only receives,
 *   from 5 ranks on rank N-3 only sends. Destinations are listed in edge order,
 *   sources in reverse edge order, so the two lists differ.
 *   On the rank-reversed communicator: the 1-D periodic, the {2, 1} periodic (so
 *   MPI_COMM_WORLD's last two ranks), the graph and the distributed graph.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_neighbor_topo.h"

#define PROGRAM "coll_neighbor"

/* MPI_UNWEIGHTED through a variable: GCC reads Open MPI's ((int *) 2) as an array of
 * size 0 and warns on the calls that take it. */
static int *volatile unweighted;

/* The communicator a topology is created from, and what its name gets appended. */
struct base {
    MPI_Comm comm;
    const char *suffix;
};

static int *ints(size_t n)
{
    int *p = calloc(n + 1, sizeof(int)); /* never NULL for n = 0: MPI gets a valid address */

    if (NULL == p) {
        fprintf(stderr, PROGRAM ": out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* The neighbour of Cartesian rank r in dimension d, direction dir (-1, +1). */
static int cart_neighbour(const struct topo *t, int r, int d, int dir)
{
    int c[2], rank = 0;

    for (int k = t->ndims - 1; k >= 0; --k) { /* row-major: the last dimension is fastest */
        c[k] = r % t->dims[k];
        r /= t->dims[k];
    }
    c[d] += dir;
    if (c[d] < 0 || c[d] >= t->dims[d]) {
        if (!t->periods[d]) {
            return MPI_PROC_NULL;
        }
        c[d] = (c[d] + t->dims[d]) % t->dims[d];
    }
    for (int k = 0; k < t->ndims; ++k) {
        rank = rank * t->dims[k] + c[k];
    }
    return rank;
}

/* Rank r's source and destination lists, from the specification alone. */
static void lists_of(const struct topo *t, int r, int **src, int *indeg, int **dst, int *outdeg)
{
    int ni = 0, no = 0;

    switch (t->kind) {
    case TOPO_CART:
        *src = ints(2 * (size_t) t->ndims);
        *dst = ints(2 * (size_t) t->ndims);
        for (int d = 0; d < t->ndims; ++d) {
            (*src)[2 * d] = (*dst)[2 * d] = cart_neighbour(t, r, d, -1);
            (*src)[2 * d + 1] = (*dst)[2 * d + 1] = cart_neighbour(t, r, d, +1);
        }
        ni = no = 2 * t->ndims;
        break;
    case TOPO_GRAPH: {
        int lo = 0 == r ? 0 : t->gindex[r - 1];

        ni = no = t->gindex[r] - lo;
        *src = ints((size_t) ni);
        *dst = ints((size_t) no);
        memcpy(*src, t->gedges + lo, (size_t) ni * sizeof(int));
        memcpy(*dst, t->gedges + lo, (size_t) no * sizeof(int));
        break;
    }
    case TOPO_DIST:
        *src = ints((size_t) t->nedges);
        *dst = ints((size_t) t->nedges);
        for (int e = 0; e < t->nedges; ++e) {
            if (t->esrc[e] == r) {
                (*dst)[no++] = t->edst[e];
            }
        }
        for (int e = t->nedges - 1; e >= 0; --e) {
            if (t->edst[e] == r) {
                (*src)[ni++] = t->esrc[e];
            }
        }
        break;
    }
    *indeg = ni;
    *outdeg = no;
}

/* Which of its send blocks the sender of receive block i sends there (-1: none). */
static int sender_block(const struct topo *t, int i)
{
    int s = t->src[i], k = 0, *ssrc, *sdst, sin, sout, found = -1;

    if (MPI_PROC_NULL == s) {
        return -1;
    }
    if (TOPO_CART == t->kind) {
        return 0 == i % 2 ? i + 1 : i - 1;
    }
    for (int j = 0; j < i; ++j) {
        k += t->src[j] == s;
    }
    lists_of(t, s, &ssrc, &sin, &sdst, &sout);
    for (int p = 0; p < sout && found < 0; ++p) {
        if (sdst[p] == t->me && 0 == k--) {
            found = p;
        }
    }
    free(ssrc);
    free(sdst);
    if (found < 0) {
        fprintf(stderr, PROGRAM ": %s: rank %d sends nothing matching receive block %d\n",
                t->name, s, i);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return found;
}

static void make_cart(struct topo *t, const struct base *base, int ndims, const int *dims,
                      const int *periods)
{
    t->kind = TOPO_CART;
    t->ndims = ndims;
    t->n = 1;
    for (int d = 0; d < ndims; ++d) {
        t->dims[d] = dims[d];
        t->periods[d] = periods[d];
        t->n *= dims[d];
        t->small_periodic |= periods[d] && dims[d] <= 2;
    }
    if (1 == ndims) {
        snprintf(t->name, sizeof(t->name), "cart {%d} periods {%d}%s", dims[0], periods[0],
                 base->suffix);
    } else {
        snprintf(t->name, sizeof(t->name), "cart {%d,%d} periods {%d,%d}%s", dims[0],
                 dims[1], periods[0], periods[1], base->suffix);
    }
    MPI_Cart_create(base->comm, ndims, dims, periods, 0, &t->comm);
}

static void make_graph(struct topo *t, const struct base *base, int n)
{
    int m = n >= 3 ? n - 1 : n, np = 0, pa[16], pb[16], len[8] = {0}, adj[8][16];

    for (int r = 0; r < m; ++r) {
        pa[np] = r, pb[np++] = (r + 1) % m;
    }
    pa[np] = 0, pb[np++] = 1 % m;
    pa[np] = m - 1, pb[np++] = m - 1;
    for (int e = 0; e < np; ++e) {
        adj[pa[e]][len[pa[e]]++] = pb[e];
        if (pa[e] != pb[e]) {
            adj[pb[e]][len[pb[e]]++] = pa[e];
        }
    }
    t->kind = TOPO_GRAPH;
    t->n = n;
    t->gindex = ints((size_t) n);
    t->gedges = ints(2 * (size_t) np);
    for (int r = 0, at = 0; r < n; ++r) {
        for (int j = 0; j < len[r]; ++j) { /* odd ranks: rotated by one */
            t->gedges[at++] = adj[r][(j + (r % 2)) % len[r]];
        }
        t->gindex[r] = at;
    }
    snprintf(t->name, sizeof(t->name), "graph (repeated edges, self-loop%s)%s",
             n >= 3 ? ", an isolated rank" : "", base->suffix);
    MPI_Graph_create(base->comm, n, t->gindex, t->gedges, 0, &t->comm);
}

static void make_dist(struct topo *t, const struct base *base, int n)
{
    int iso = n >= 3 ? n - 1 : -1, sink = n >= 4 ? n - 2 : -1, source = n >= 5 ? n - 3 : -1;
    int m = n - (iso >= 0) - (sink >= 0) - (source >= 0), e = 0, me;

    t->kind = TOPO_DIST;
    t->n = n;
    t->esrc = ints(32);
    t->edst = ints(32);
#define EDGE(a, b) (t->esrc[e] = (a), t->edst[e++] = (b))
    for (int r = 0; r < m; ++r) {
        EDGE(r, (r + 1) % m);
        EDGE(r, (r + 2) % m);
        if (0 == r % 2) {
            EDGE(r, r);
        }
    }
    EDGE(0, 1 % m);
    if (sink >= 0) {
        EDGE(0, sink), EDGE(m - 1, sink), EDGE(0, sink);
    }
    if (source >= 0) {
        EDGE(source, 0), EDGE(source, m - 1), EDGE(source, 0);
    }
#undef EDGE
    t->nedges = e;
    snprintf(t->name, sizeof(t->name), "dist graph (repeated edges, self-edges%s%s%s)%s",
             iso >= 0 ? ", an isolated rank" : "", sink >= 0 ? ", a sink" : "",
             source >= 0 ? ", a source" : "", base->suffix);
    MPI_Comm_rank(base->comm, &me);
    lists_of(t, me, &t->src, &t->indeg, &t->dst, &t->outdeg);
    MPI_Dist_graph_create_adjacent(base->comm, t->indeg, t->src, unweighted,
                                   t->outdeg, t->dst, unweighted, MPI_INFO_NULL, 0,
                                   &t->comm);
    free(t->src);
    free(t->dst);
}

/* Compares this rank's lists as MPI reports them with the specification's. */
static int lists_match(const struct topo *t)
{
    int ok = 1, ni, no, weighted;

    if (TOPO_CART == t->kind) {
        for (int d = 0; d < t->ndims; ++d) {
            int s, ds;

            MPI_Cart_shift(t->comm, d, 1, &s, &ds);
            ok &= s == t->src[2 * d] && ds == t->src[2 * d + 1];
        }
    } else if (TOPO_GRAPH == t->kind) {
        MPI_Graph_neighbors_count(t->comm, t->me, &ni);
        int *got = ints((size_t) ni);

        MPI_Graph_neighbors(t->comm, t->me, ni, got);
        ok = ni == t->indeg && 0 == memcmp(got, t->src, (size_t) ni * sizeof(int));
        free(got);
    } else {
        MPI_Dist_graph_neighbors_count(t->comm, &ni, &no, &weighted);
        int *gs = ints((size_t) ni), *gd = ints((size_t) no);

        MPI_Dist_graph_neighbors(t->comm, ni, gs, unweighted, no, gd, unweighted);
        ok = ni == t->indeg && no == t->outdeg
             && 0 == memcmp(gs, t->src, (size_t) ni * sizeof(int))
             && 0 == memcmp(gd, t->dst, (size_t) no * sizeof(int));
        free(gs);
        free(gd);
    }
    return ok;
}

/* This rank's view; returns 0 where MPI's lists differ from the specification's. */
static int setup_view(struct topo *t)
{
    if (MPI_COMM_NULL == t->comm) {
        t->me = -1;
        return 1;
    }
    MPI_Comm_rank(t->comm, &t->me);
    lists_of(t, t->me, &t->src, &t->indeg, &t->dst, &t->outdeg);
    t->from_block = ints((size_t) t->indeg);
    for (int i = 0; i < t->indeg; ++i) {
        t->from_block[i] = sender_block(t, i);
    }
    return lists_match(t);
}

static void free_topo(struct topo *t)
{
    if (MPI_COMM_NULL != t->comm) {
        MPI_Comm_free(&t->comm);
        free(t->src);
        free(t->dst);
        free(t->from_block);
    }
    free(t->gindex);
    free(t->gedges);
    free(t->esrc);
    free(t->edst);
}

int topos_create(struct topo *topos, int *lists_wrong)
{
    int n, me, k = 0, d2[2] = {0, 0};
    int one_d[1], per[1] = {1}, nonper[1] = {0}, two[2];
    struct base world = {MPI_COMM_WORLD, ""}, reversed = {MPI_COMM_NULL, ", rank-reversed"};

    unweighted = MPI_UNWEIGHTED;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_split(MPI_COMM_WORLD, 0, n - 1 - me, &reversed.comm);
    one_d[0] = n;
    two[0] = n >= 2 ? 2 : 1;
    two[1] = 1;
    memset(topos, 0, TOPO_MAX * sizeof(*topos));
    MPI_Dims_create(n, 2, d2);
    make_cart(&topos[k++], &world, 1, one_d, per);
    make_cart(&topos[k++], &world, 1, one_d, nonper);
    make_cart(&topos[k++], &world, 2, d2, (int[]){1, 0});
    make_cart(&topos[k++], &world, 2, d2, (int[]){0, 1});
    make_cart(&topos[k++], &world, 2, (int[]){n, 1}, (int[]){1, 1});
    make_cart(&topos[k++], &world, 2, two, (int[]){1, 1});
    make_cart(&topos[k++], &world, 2, (int[]){1, n}, (int[]){0, 0});
    make_graph(&topos[k++], &world, n);
    make_dist(&topos[k++], &world, n);
    /* Ranks in the topology that are not those of MPI_COMM_WORLD. */
    make_cart(&topos[k++], &reversed, 1, one_d, per);
    make_cart(&topos[k++], &reversed, 2, two, (int[]){1, 1});
    make_graph(&topos[k++], &reversed, n);
    make_dist(&topos[k++], &reversed, n);
    MPI_Comm_free(&reversed.comm);
    *lists_wrong = 0;
    for (int i = 0; i < k; ++i) {
        *lists_wrong += !setup_view(&topos[i]);
    }
    return k;
}

void topos_free(struct topo *topos, int count)
{
    for (int i = 0; i < count; ++i) {
        free_topo(&topos[i]);
    }
}
