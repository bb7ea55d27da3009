/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_intercomm: each collective's arguments on an intercommunicator as MPI
 * defines them, the data every rank sends and the image of what its receive
 * buffer must hold afterwards.
 *
 * Every 32-bit value a rank sends is a hash of (its group, its rank in the group,
 * the block: the destination's rank where each destination gets its own block,
 * else 0, the value's index in the block, the call's salt), so a receiver computes
 * what each remote rank sent. Blocks from the remote ranks land in reverse rank
 * order with a one-element gap before each in the v and w variants, whose counts
 * differ from peer to peer (zero among them at count 1). Rooted calls: in the
 * root's group the root passes MPI_ROOT and the others MPI_PROC_NULL (their
 * buffers must stay as filled), in the other group every rank passes the root's
 * rank. Reductions fold the remote group's inputs in its rank order.
 */

#include "coll_intercomm.h"
#include "mpi4_persistent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const coll_names[NUM_COLLS] = {
    "bcast", "allreduce", "reduce", "allgather", "allgatherv", "alltoall", "alltoallv",
    "alltoallw", "gather", "gatherv", "scatter", "scatterv", "reduce_scatter_block",
    "reduce_scatter", "barrier",
};

int rooted(enum coll c)
{
    return BCAST == c || REDUCE == c || GATHER == c || GATHERV == c || SCATTER == c
           || SCATTERV == c;
}

int reduction(enum coll c)
{
    return ALLREDUCE == c || REDUCE == c || REDUCE_SCATTER_BLOCK == c || REDUCE_SCATTER == c;
}

uint32_t value_of(int group, int rank, int block, size_t idx, uint32_t salt)
{
    uint64_t h = ((uint64_t) group << 40 | (uint64_t) rank << 20 | (uint64_t) block)
                     * 0x9E3779B97F4A7C15ull
                 ^ (uint64_t) idx * 0xBF58476D1CE4E5B9ull ^ (uint64_t) salt * 0x94D049BB133111EBull;

    h ^= h >> 31;
    h *= 0xD6E9A0D5A3F1C2B7ull;
    h ^= h >> 29;
    return (uint32_t) h;
}

/* --- data ----------------------------------------------------------------------- */

static void put32(char *buf, const struct elemtype *t, size_t idx, uint32_t v)
{
    memcpy(buf + idx / (size_t) t->per * t->extent + t->offs[idx % (size_t) t->per], &v,
           sizeof(v));
}

/* n elements of the block (group, rank, block) at element at of buf. */
static void put_block(char *buf, const struct call *c, size_t at, size_t n, int group, int rank,
                      int block)
{
    char *base = buf + at * c->t->extent;

    for (size_t i = 0; i < n * (size_t) c->t->per; ++i) {
        put32(base, c->t, i, value_of(group, rank, block, i, c->salt));
    }
}

/* Input value idx of a reduction (pairs: a odd, so compositions never vanish). */
static uint32_t input_of(const struct call *c, int group, int rank, size_t idx)
{
    uint32_t v = value_of(group, rank, 0, idx, c->salt);

    return E_PAIR == c->t - elemtypes && 0 == idx % 2 ? v | 1u : v;
}

/* Elements [first, first + n) of the remote group's inputs folded in rank order. */
static void put_fold(char *buf, const struct call *c, size_t first, size_t n)
{
    int rg = 1 - c->s->group;

    for (size_t e = 0; e < n; ++e) {
        if (E_INT == c->t - elemtypes) {
            uint32_t acc = 0;

            for (int r = 0; r < c->s->nr; ++r) {
                acc += input_of(c, rg, r, first + e);
            }
            put32(buf, c->t, e, acc);
        } else {
            /* u op v = "u, then v": (v.a * u.a, v.a * u.b + v.b) */
            uint32_t a = input_of(c, rg, 0, 2 * (first + e));
            uint32_t b = input_of(c, rg, 0, 2 * (first + e) + 1);

            for (int r = 1; r < c->s->nr; ++r) {
                uint32_t va = input_of(c, rg, r, 2 * (first + e));
                uint32_t vb = input_of(c, rg, r, 2 * (first + e) + 1);

                a = va * a;
                b = va * b + vb;
            }
            put32(buf, c->t, 2 * e, a);
            put32(buf, c->t, 2 * e + 1, b);
        }
    }
}

static void put_inputs(char *buf, const struct call *c, size_t n)
{
    for (size_t i = 0; i < n * (size_t) c->t->per; ++i) {
        put32(buf, c->t, i, input_of(c, c->s->group, c->s->me, i));
    }
}

/* --- counts and layouts ------------------------------------------------------------ */

/* What rank (group, rank) sends in allgatherv, gatherv, scatterv. */
static int vcount(const struct call *c, int group, int rank)
{
    return c->count ? c->count + (2 * rank + group) % 3 - 1 : 0;
}

/* What from (of group) sends to to in alltoallv, alltoallw. */
static int pcount(const struct call *c, int group, int from, int to)
{
    return c->count ? c->count + (from + 2 * to + group) % 3 - 1 : 0;
}

/* Blocks of cnt[] elements in reverse order, a one-element gap before each. */
static size_t reversed_layout(int n, const int *cnt, int *displ)
{
    size_t at = 1;

    for (int j = n - 1; j >= 0; --j) {
        displ[j] = (int) at;
        at += (size_t) cnt[j] + 1;
    }
    return at;
}

/* reduce_scatter: this group's counts, each group's summing to count * nl * nr. */
static void split_counts(const struct call *c, int n, int *out)
{
    int total = c->count * c->s->nl * c->s->nr, weights = n * (n - 1) / 2, given = 0;

    for (int i = 0; i < n; ++i) {
        out[i] = 0 == weights ? total : (int) ((long) total * i / weights);
        given += out[i];
    }
    out[n - 1] += total - given;
}

static int *ints(int n)
{
    int *p = calloc((size_t) (n > 0 ? n : 1), sizeof(int));

    if (NULL == p) {
        fprintf(stderr, PROGRAM ": out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

static char *bytes(size_t n)
{
    char *p = malloc(n + GUARD);

    if (NULL == p) {
        fprintf(stderr, PROGRAM ": out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

void call_plan(const struct call *c, struct args *a)
{
    const struct side *s = c->s;
    int g = s->group, me = s->me, nr = s->nr, nl = s->nl;
    int root_group = g == c->root_group, is_root = root_group && me == c->root;
    size_t sn = 0, rn = 0; /* elements of the send and receive buffers */

    a->any_data = c->count > 0 || BARRIER == c->coll;
    a->root_arg = root_group ? (is_root ? MPI_ROOT : MPI_PROC_NULL) : c->root;
    a->scount = a->rcount = c->count;
    a->scounts = ints(nr);
    a->sdispls = ints(nr);
    a->rcounts = ints(nr > nl ? nr : nl);
    a->rdispls = ints(nr);
    switch (c->coll) {
    case BCAST:
        rn = (size_t) c->count;
        break;
    case ALLREDUCE:
    case REDUCE:
        sn = rn = (size_t) c->count;
        break;
    case ALLGATHER:
        sn = (size_t) c->count;
        rn = (size_t) nr * (size_t) c->count;
        break;
    case ALLGATHERV:
        a->scount = vcount(c, g, me);
        sn = (size_t) a->scount;
        for (int j = 0; j < nr; ++j) {
            a->rcounts[j] = vcount(c, 1 - g, j);
        }
        rn = reversed_layout(nr, a->rcounts, a->rdispls);
        break;
    case ALLTOALL:
        sn = rn = (size_t) nr * (size_t) c->count;
        break;
    case ALLTOALLV:
    case ALLTOALLW:
        for (int j = 0; j < nr; ++j) {
            a->scounts[j] = pcount(c, g, me, j);
            a->rcounts[j] = pcount(c, 1 - g, j, me);
        }
        sn = reversed_layout(nr, a->scounts, a->sdispls);
        rn = reversed_layout(nr, a->rcounts, a->rdispls);
        if (ALLTOALLW == c->coll) {
            a->stypes = malloc((size_t) nr * sizeof(MPI_Datatype));
            a->rtypes = malloc((size_t) nr * sizeof(MPI_Datatype));
            for (int j = 0; j < nr; ++j) {
                a->sdispls[j] *= (int) c->t->extent; /* bytes */
                a->rdispls[j] *= (int) c->t->extent;
                a->stypes[j] = a->rtypes[j] = c->t->dtype;
            }
        }
        break;
    case GATHER:
        sn = (size_t) c->count;
        rn = is_root ? (size_t) nr * (size_t) c->count : (size_t) c->count;
        break;
    case GATHERV:
        a->scount = vcount(c, g, me);
        sn = (size_t) a->scount;
        for (int j = 0; j < nr; ++j) {
            a->rcounts[j] = vcount(c, 1 - g, j);
        }
        rn = reversed_layout(nr, a->rcounts, a->rdispls);
        break;
    case SCATTER:
        sn = is_root ? (size_t) nr * (size_t) c->count : (size_t) c->count;
        rn = (size_t) c->count;
        break;
    case SCATTERV:
        for (int j = 0; j < nr; ++j) {
            a->scounts[j] = vcount(c, 1 - g, j);
        }
        sn = reversed_layout(nr, a->scounts, a->sdispls);
        a->rcount = root_group ? c->count : vcount(c, g, me);
        rn = (size_t) a->rcount;
        break;
    case REDUCE_SCATTER_BLOCK:
        a->rcount = c->count * nr;
        sn = (size_t) a->rcount * (size_t) nl;
        rn = (size_t) a->rcount;
        break;
    case REDUCE_SCATTER:
        split_counts(c, nl, a->rcounts);
        sn = (size_t) c->count * (size_t) nl * (size_t) nr;
        rn = (size_t) a->rcounts[me];
        break;
    default:
        break;
    }
    a->sbytes = sn * c->t->extent;
    a->rbytes = rn * c->t->extent;
    a->sbuf = bytes(a->sbytes);
    a->scopy = bytes(a->sbytes);
    a->rbuf = bytes(a->rbytes);
    a->image = bytes(a->rbytes);
}

void call_fill(const struct call *c, struct args *a)
{
    const struct side *s = c->s;
    int g = s->group, rg = 1 - g, me = s->me, nr = s->nr;
    int root_group = g == c->root_group, is_root = root_group && me == c->root;
    size_t n = (size_t) c->count, first = 0;

    memset(a->sbuf, SENTINEL, a->sbytes + GUARD);
    memset(a->rbuf, SENTINEL, a->rbytes + GUARD);
    memset(a->image, SENTINEL, a->rbytes + GUARD);
    switch (c->coll) {
    case BCAST:
        if (is_root) {
            put_block(a->rbuf, c, 0, n, g, me, 0);
            put_block(a->image, c, 0, n, g, me, 0);
        } else if (!root_group) {
            put_block(a->image, c, 0, n, rg, c->root, 0);
        }
        break;
    case ALLREDUCE:
    case REDUCE:
        if (!root_group || ALLREDUCE == c->coll) {
            put_inputs(a->sbuf, c, n);
        }
        if (is_root || ALLREDUCE == c->coll) {
            put_fold(a->image, c, 0, n);
        }
        break;
    case ALLGATHER:
        put_block(a->sbuf, c, 0, n, g, me, 0);
        for (int j = 0; j < nr; ++j) {
            put_block(a->image, c, (size_t) j * n, n, rg, j, 0);
        }
        break;
    case ALLGATHERV:
        put_block(a->sbuf, c, 0, (size_t) a->scount, g, me, 0);
        for (int j = 0; j < nr; ++j) {
            put_block(a->image, c, (size_t) a->rdispls[j], (size_t) a->rcounts[j], rg, j, 0);
        }
        break;
    case ALLTOALL:
        for (int j = 0; j < nr; ++j) {
            put_block(a->sbuf, c, (size_t) j * n, n, g, me, j);
            put_block(a->image, c, (size_t) j * n, n, rg, j, me);
        }
        break;
    case ALLTOALLV:
    case ALLTOALLW: {
        size_t unit = ALLTOALLW == c->coll ? c->t->extent : 1;

        for (int j = 0; j < nr; ++j) {
            put_block(a->sbuf, c, (size_t) a->sdispls[j] / unit, (size_t) a->scounts[j], g, me, j);
            put_block(a->image, c, (size_t) a->rdispls[j] / unit, (size_t) a->rcounts[j], rg, j,
                      me);
        }
        break;
    }
    case GATHER:
    case GATHERV:
        if (!root_group) {
            put_block(a->sbuf, c, 0, GATHER == c->coll ? n : (size_t) a->scount, g, me, 0);
        } else if (is_root) {
            for (int j = 0; j < nr; ++j) {
                if (GATHER == c->coll) {
                    put_block(a->image, c, (size_t) j * n, n, rg, j, 0);
                } else {
                    put_block(a->image, c, (size_t) a->rdispls[j], (size_t) a->rcounts[j], rg,
                              j, 0);
                }
            }
        }
        break;
    case SCATTER:
    case SCATTERV:
        if (is_root) {
            for (int j = 0; j < nr; ++j) {
                if (SCATTER == c->coll) {
                    put_block(a->sbuf, c, (size_t) j * n, n, g, me, j);
                } else {
                    put_block(a->sbuf, c, (size_t) a->sdispls[j], (size_t) a->scounts[j], g,
                              me, j);
                }
            }
        } else if (!root_group) {
            put_block(a->image, c, 0, (size_t) a->rcount, rg, c->root, me);
        }
        break;
    case REDUCE_SCATTER_BLOCK:
    case REDUCE_SCATTER:
        put_inputs(a->sbuf, c, a->sbytes / c->t->extent);
        if (REDUCE_SCATTER_BLOCK == c->coll) {
            first = (size_t) me * (size_t) a->rcount;
        } else {
            for (int i = 0; i < me; ++i) {
                first += (size_t) a->rcounts[i];
            }
        }
        put_fold(a->image, c, first, a->rbytes / c->t->extent);
        break;
    default:
        break;
    }
    memcpy(a->scopy, a->sbuf, a->sbytes + GUARD);
}

void call_free(struct args *a)
{
    free(a->sbuf);
    free(a->scopy);
    free(a->rbuf);
    free(a->image);
    free(a->scounts);
    free(a->sdispls);
    free(a->rcounts);
    free(a->rdispls);
    free(a->stypes);
    free(a->rtypes);
    memset(a, 0, sizeof(*a));
}

/* --- the calls -------------------------------------------------------------------- */

#define ISSUE(blocking, nonblocking, persistent)                                          \
    switch (c->form) {                                                                   \
    case BLOCKING: return blocking;                                                      \
    case NONBLOCKING: return nonblocking;                                                \
    default: return persistent;                                                          \
    }

int call_issue(const struct call *c, struct args *a, MPI_Request *req)
{
    MPI_Comm comm = c->s->comm;
    MPI_Datatype t = c->t->dtype;
    MPI_Op op = E_PAIR == c->t - elemtypes ? affine_op : MPI_SUM;
    MPI_Info info = MPI_INFO_NULL;
    char *sb = a->sbuf, *rb = a->rbuf;
    int root = a->root_arg;

    switch (c->coll) {
    case BCAST:
        ISSUE(MPI_Bcast(rb, c->count, t, root, comm),
              MPI_Ibcast(rb, c->count, t, root, comm, req),
              MPI_Bcast_init(rb, c->count, t, root, comm, info, req));
    case ALLREDUCE:
        ISSUE(MPI_Allreduce(sb, rb, c->count, t, op, comm),
              MPI_Iallreduce(sb, rb, c->count, t, op, comm, req),
              MPI_Allreduce_init(sb, rb, c->count, t, op, comm, info, req));
    case REDUCE:
        ISSUE(MPI_Reduce(sb, rb, c->count, t, op, root, comm),
              MPI_Ireduce(sb, rb, c->count, t, op, root, comm, req),
              MPI_Reduce_init(sb, rb, c->count, t, op, root, comm, info, req));
    case ALLGATHER:
        ISSUE(MPI_Allgather(sb, c->count, t, rb, c->count, t, comm),
              MPI_Iallgather(sb, c->count, t, rb, c->count, t, comm, req),
              MPI_Allgather_init(sb, c->count, t, rb, c->count, t, comm, info, req));
    case ALLGATHERV:
        ISSUE(MPI_Allgatherv(sb, a->scount, t, rb, a->rcounts, a->rdispls, t, comm),
              MPI_Iallgatherv(sb, a->scount, t, rb, a->rcounts, a->rdispls, t, comm, req),
              MPI_Allgatherv_init(sb, a->scount, t, rb, a->rcounts, a->rdispls, t, comm, info,
                                  req));
    case ALLTOALL:
        ISSUE(MPI_Alltoall(sb, c->count, t, rb, c->count, t, comm),
              MPI_Ialltoall(sb, c->count, t, rb, c->count, t, comm, req),
              MPI_Alltoall_init(sb, c->count, t, rb, c->count, t, comm, info, req));
    case ALLTOALLV:
        ISSUE(MPI_Alltoallv(sb, a->scounts, a->sdispls, t, rb, a->rcounts, a->rdispls, t, comm),
              MPI_Ialltoallv(sb, a->scounts, a->sdispls, t, rb, a->rcounts, a->rdispls, t, comm,
                             req),
              MPI_Alltoallv_init(sb, a->scounts, a->sdispls, t, rb, a->rcounts, a->rdispls, t,
                                 comm, info, req));
    case ALLTOALLW:
        ISSUE(MPI_Alltoallw(sb, a->scounts, a->sdispls, a->stypes, rb, a->rcounts, a->rdispls,
                            a->rtypes, comm),
              MPI_Ialltoallw(sb, a->scounts, a->sdispls, a->stypes, rb, a->rcounts, a->rdispls,
                             a->rtypes, comm, req),
              MPI_Alltoallw_init(sb, a->scounts, a->sdispls, a->stypes, rb, a->rcounts,
                                 a->rdispls, a->rtypes, comm, info, req));
    case GATHER:
        ISSUE(MPI_Gather(sb, c->count, t, rb, c->count, t, root, comm),
              MPI_Igather(sb, c->count, t, rb, c->count, t, root, comm, req),
              MPI_Gather_init(sb, c->count, t, rb, c->count, t, root, comm, info, req));
    case GATHERV:
        ISSUE(MPI_Gatherv(sb, a->scount, t, rb, a->rcounts, a->rdispls, t, root, comm),
              MPI_Igatherv(sb, a->scount, t, rb, a->rcounts, a->rdispls, t, root, comm, req),
              MPI_Gatherv_init(sb, a->scount, t, rb, a->rcounts, a->rdispls, t, root, comm,
                               info, req));
    case SCATTER:
        ISSUE(MPI_Scatter(sb, c->count, t, rb, c->count, t, root, comm),
              MPI_Iscatter(sb, c->count, t, rb, c->count, t, root, comm, req),
              MPI_Scatter_init(sb, c->count, t, rb, c->count, t, root, comm, info, req));
    case SCATTERV:
        ISSUE(MPI_Scatterv(sb, a->scounts, a->sdispls, t, rb, a->rcount, t, root, comm),
              MPI_Iscatterv(sb, a->scounts, a->sdispls, t, rb, a->rcount, t, root, comm, req),
              MPI_Scatterv_init(sb, a->scounts, a->sdispls, t, rb, a->rcount, t, root, comm,
                                info, req));
    case REDUCE_SCATTER_BLOCK:
        ISSUE(MPI_Reduce_scatter_block(sb, rb, a->rcount, t, op, comm),
              MPI_Ireduce_scatter_block(sb, rb, a->rcount, t, op, comm, req),
              MPI_Reduce_scatter_block_init(sb, rb, a->rcount, t, op, comm, info, req));
    case REDUCE_SCATTER:
        ISSUE(MPI_Reduce_scatter(sb, rb, a->rcounts, t, op, comm),
              MPI_Ireduce_scatter(sb, rb, a->rcounts, t, op, comm, req),
              MPI_Reduce_scatter_init(sb, rb, a->rcounts, t, op, comm, info, req));
    case BARRIER:
        ISSUE(MPI_Barrier(comm), MPI_Ibarrier(comm, req), MPI_Barrier_init(comm, info, req));
    default:
        return MPI_ERR_OTHER;
    }
}
