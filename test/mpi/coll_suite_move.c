/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_suite: the data-movement collectives (allgather, allgatherv, alltoall,
 * alltoallv, alltoallw, bcast, gather, gatherv, scatter, scatterv), their
 * nonblocking and persistent forms, and barrier.
 *
 * Values: what rank s sends to rank d is s's data-movement input at the indices
 * of d's block, BLOCK(d) + k (for bcast, allgather and gather, which send the same
 * data to everyone, just k). Receive buffers start filled with sentinels and the
 * whole buffer is compared, so the gaps between the blocks of the v and w variants
 * must come back untouched; send buffers must not change.
 *
 * The v variants use uneven counts (some ranks contribute 0 elements) and
 * displacements in an order other than the ranks', with gaps; alltoallw also
 * changes the datatype from peer to peer. In place variants: allgather(v),
 * alltoall(v,w) (with symmetric counts and types, as the standard requires),
 * gather(v) and scatter(v) at the root.
 */

#include <stdio.h>
#include <string.h>

#include "coll_suite.h"

#define NELEMS(a) ((int) (sizeof(a) / sizeof((a)[0])))

static uint64_t BLOCK(int d) { return (uint64_t) (d + 1) << 32; }

/* In place at this rank: everywhere for the unrooted ones, at the root otherwise. */
static int here_in_place(const check *c)
{
    return c->in_place && (c->root < 0 || c->root == c->cx->rank);
}

static void *at(void *buf, size_t index, const type_info *t)
{
    return (char *) buf + index * t->extent;
}

/* ---- counts and layouts ------------------------------------------------------ */

/* Count of rank r in the gather/scatter style v variants: uneven, some ranks 0. */
static int v_count(size_t c, int r, int size)
{
    if (0 == c || (size > 1 && 1 == r % 3)) {
        return 0;
    }
    return (int) (c + (size_t) r);
}

/*
 * Count of the block from s to d in alltoallv/w; symmetric for in place (the
 * standard requires it: what s sends to d is what d receives from s, and in place
 * both use the same counts).
 *
 * Open MPI 4.1.4 bug: libnbc's in-place ialltoallv and ialltoallw
 * (a2av_sched_inplace / a2aw_sched_inplace in ompi/mca/coll/libnbc) put a send of
 * the block for rank+i and the receive into that same block in one round when the
 * block of rank-i is empty, so with a large (rendezvous) block the peer receives
 * data already overwritten. The nonblocking and persistent in-place forms therefore
 * get no empty blocks (`no_zero`); the blocking ones and the others keep them.
 */
static int pair_count(size_t c, int s, int d, int symmetric, int no_zero)
{
    if (symmetric && s > d) {
        int tmp = s;
        s = d;
        d = tmp;
    }
    if (0 == c || (!no_zero && 1 == (s + 2 * d) % 4)) {
        return 0;
    }
    return (int) (c + (size_t) ((s * 3 + d) % 3));
}

/* See pair_count(); libnbc's persistent forms run the same schedules. */
static int libnbc_in_place_bug(const check *c)
{
    return c->in_place && coll_has_request(c->coll);
}

/* Places `size` blocks in one buffer, in rank order or reversed, each after a gap
 * of 1 or 2 units; displacements in units. Returns the total in units. */
static size_t layout(int size, const int *counts, int *displs, int reverse, size_t unit_per_elem)
{
    size_t pos = 0;

    for (int i = 0; i < size; ++i) {
        int r = reverse ? size - 1 - i : i;
        pos += 1 + (size_t) (r % 2);
        displs[r] = (int) pos;
        pos += (size_t) counts[r] * unit_per_elem;
    }
    return pos + 1;
}

/* The counts and displacements of the v-collectives' "uneven" variant, one block per
 * rank: v_count() elements each, laid out in reverse order with gaps. Returns the
 * elements the buffer spans. */
static size_t uneven_blocks(check *c, size_t n, int size, int **counts, int **displs)
{
    *counts = check_alloc(c, (size_t) size * sizeof(int));
    *displs = check_alloc(c, (size_t) size * sizeof(int));
    for (int r = 0; r < size; ++r) {
        (*counts)[r] = v_count(n, r, size);
    }
    return layout(size, *counts, *displs, 1, 1);
}

/* Like layout() in bytes, each block aligned to 16 bytes (alltoallw). */
static size_t layout_bytes(int size, const int *counts, const type_info *const *types,
                           int *displs, int reverse)
{
    size_t pos = 0;

    for (int i = 0; i < size; ++i) {
        int r = reverse ? size - 1 - i : i;
        pos += 16 * (1 + (size_t) (r % 2));
        displs[r] = (int) pos;
        pos += (size_t) counts[r] * types[r]->extent;
        pos = (pos + 15) / 16 * 16;
    }
    return pos + 16;
}

/* Adds the regions of a byte buffer made of typed blocks (one per peer) and the
 * byte gaps between them. */
static void blocks_regions(check *c, const char *what, const void *got, void *want, int size,
                           const int *counts, const int *displs,
                           const type_info *const *types, size_t total)
{
    const type_info *byte = type_by_name("MPI_BYTE");
    size_t pos = 0;

    /* The blocks in the order of their displacements, which layout_bytes() made
     * strictly increasing (size is small). */
    for (int done = 0; done < size; ++done) {
        int next = -1;
        char *name = check_alloc(c, 96);

        for (int r = 0; r < size; ++r) {
            if ((size_t) displs[r] >= pos && (next < 0 || displs[r] < displs[next])) {
                next = r;
            }
        }
        check_region(c, what, (const char *) got + pos, (char *) want + pos,
                     (size_t) displs[next] - pos, byte, pos);
        pos = (size_t) displs[next];
        snprintf(name, 96, "%s block of peer %d at byte %zu", what, next, pos);
        check_region(c, name, (const char *) got + pos, (char *) want + pos,
                     (size_t) counts[next], types[next], 0);
        pos += (size_t) counts[next] * types[next]->extent;
    }
    check_region(c, what, (const char *) got + pos, (char *) want + pos, total - pos, byte, pos);
}

/* ---- the calls ---------------------------------------------------------------- */

#define IN(c) (here_in_place(c) ? MPI_IN_PLACE : (c)->sbuf)
#define DT(c) ((c)->type->dt)

static int call_allgather(check *c)
{
    int n = (int) c->count;
    return FORMS(c, Allgather, allgather, IN(c), n, DT(c), c->rbuf, n, DT(c), c->cx->comm);
}

static int call_allgatherv(check *c)
{
    return FORMS(c, Allgatherv, allgatherv, IN(c), c->scount, DT(c), c->rbuf, c->rcounts,
                 c->rdispls, DT(c), c->cx->comm);
}

static int call_alltoall(check *c)
{
    int n = (int) c->count;
    return FORMS(c, Alltoall, alltoall, IN(c), n, DT(c), c->rbuf, n, DT(c), c->cx->comm);
}

/* In place, the send counts, displacements and type are ignored: NULL is passed. */
static int call_alltoallv(check *c)
{
    int ip = here_in_place(c);
    const int *sc = ip ? NULL : c->scounts, *sd = ip ? NULL : c->sdispls;
    MPI_Datatype st = ip ? MPI_DATATYPE_NULL : DT(c);

    return FORMS(c, Alltoallv, alltoallv, IN(c), sc, sd, st, c->rbuf, c->rcounts, c->rdispls,
                 DT(c), c->cx->comm);
}

static int call_alltoallw(check *c)
{
    int ip = here_in_place(c);
    const int *sc = ip ? NULL : c->scounts, *sd = ip ? NULL : c->sdispls;
    const MPI_Datatype *st = ip ? NULL : c->stypes;

    return FORMS(c, Alltoallw, alltoallw, IN(c), sc, sd, st, c->rbuf, c->rcounts, c->rdispls,
                 c->rtypes, c->cx->comm);
}

static int call_bcast(check *c)
{
    return FORMS(c, Bcast, bcast, c->rbuf, (int) c->count, DT(c), c->root, c->cx->comm);
}

static int call_gather(check *c)
{
    int n = (int) c->count;
    return FORMS(c, Gather, gather, IN(c), n, DT(c), c->rbuf, n, DT(c), c->root, c->cx->comm);
}

static int call_gatherv(check *c)
{
    return FORMS(c, Gatherv, gatherv, IN(c), c->scount, DT(c), c->rbuf, c->rcounts,
                 c->rdispls, DT(c), c->root, c->cx->comm);
}

/* scatter(v) in place: the root passes MPI_IN_PLACE as its receive buffer. */
static int call_scatter(check *c)
{
    int n = (int) c->count;
    void *r = here_in_place(c) ? MPI_IN_PLACE : c->rbuf;
    return FORMS(c, Scatter, scatter, c->sbuf, n, DT(c), r, n, DT(c), c->root, c->cx->comm);
}

static int call_scatterv(check *c)
{
    void *r = here_in_place(c) ? MPI_IN_PLACE : c->rbuf;
    return FORMS(c, Scatterv, scatterv, c->sbuf, c->scounts, c->sdispls, DT(c), r, c->rcount,
                 DT(c), c->root, c->cx->comm);
}

static int call_barrier(check *c)
{
    return FORMS(c, Barrier, barrier, c->cx->comm);
}

/* ---- building a check ------------------------------------------------------------ */

/* The send buffer must not change: keep a copy and compare it afterwards. */
static void keep_sendbuf(check *c, size_t n)
{
    c->want_s = check_alloc(c, n * c->type->extent);
    memcpy(c->want_s, c->sbuf, n * c->type->extent);
    check_region(c, "sendbuf (must not change)", c->sbuf, c->want_s, n, c->type, 0);
}

/* A receive buffer of n elements full of sentinels, and its expected copy. */
static void sentinel_recv(check *c, size_t n)
{
    c->rbuf = check_alloc(c, n * c->type->extent);
    c->want_r = check_alloc(c, n * c->type->extent);
    fill_sentinel(c->type, c->rbuf, n, 7);
    fill_sentinel(c->type, c->want_r, n, 7);
}

/* The types alltoallw mixes; the type of the block from s to d. */
static const char *const w_type_names[] = {
    "MPI_INT", "MPI_DOUBLE", "MPI_BYTE", "MPI_DOUBLE_INT", "MPI_SHORT_INT", "MPI_C_FLOAT_COMPLEX",
};

static const type_info *w_type(int s, int d, int shift, int symmetric)
{
    if (symmetric && s > d) {
        int tmp = s;
        s = d;
        d = tmp;
    }
    return type_by_name(w_type_names[(s + 2 * d + shift) % NELEMS(w_type_names)]);
}

static void build_alltoallw(check *c, int shift)
{
    const int rank = c->cx->rank, size = c->cx->size, ip = c->in_place;
    const type_info **stt = check_alloc(c, (size_t) size * sizeof(*stt));
    const type_info **rtt = check_alloc(c, (size_t) size * sizeof(*rtt));
    size_t stotal, rtotal;
    const type_info *byte = type_by_name("MPI_BYTE");

    /*
     * Open MPI 4.1 bug: coll/self's alltoallw (the module Open MPI picks for
     * single-process communicators) multiplies the byte displacements by the
     * datatype's extent (ompi/mca/coll/self/coll_self_alltoallw.c: "sdisps[0] *
     * sextent"), so it reads and writes at the wrong place. Only when the suite
     * checks Open MPI itself (--expect-component=no) on a single-process
     * communicator, the block uses MPI_BYTE, whose extent of 1 makes that harmless;
     * coll/async, which runs these calls natively, gets the strict check.
     */
    const int self_bug = !opt.expect_component && 1 == size;

    c->variant = self_bug ? "datatypes differ per peer; MPI_BYTE only (Open MPI coll/self bug)"
                 : 0 == shift ? "datatypes differ per peer"
                              : "datatypes differ per peer (shifted)";
    c->scounts = check_alloc(c, (size_t) size * sizeof(int));
    c->sdispls = check_alloc(c, (size_t) size * sizeof(int));
    c->rcounts = check_alloc(c, (size_t) size * sizeof(int));
    c->rdispls = check_alloc(c, (size_t) size * sizeof(int));
    c->stypes = check_alloc(c, (size_t) size * sizeof(MPI_Datatype));
    c->rtypes = check_alloc(c, (size_t) size * sizeof(MPI_Datatype));
    for (int p = 0; p < size; ++p) {
        stt[p] = self_bug ? byte : w_type(rank, p, shift, ip);
        rtt[p] = self_bug ? byte : w_type(p, rank, shift, ip);
        c->scounts[p] = pair_count(c->count, rank, p, ip, libnbc_in_place_bug(c));
        c->rcounts[p] = pair_count(c->count, p, rank, ip, libnbc_in_place_bug(c));
        c->stypes[p] = stt[p]->dt;
        c->rtypes[p] = rtt[p]->dt;
    }
    stotal = layout_bytes(size, c->scounts, stt, c->sdispls, 1);
    rtotal = layout_bytes(size, c->rcounts, rtt, c->rdispls, 0);

    c->rbuf = check_alloc(c, rtotal);
    c->want_r = check_alloc(c, rtotal);
    fill_sentinel(byte, c->rbuf, rtotal, 8);
    fill_sentinel(byte, c->want_r, rtotal, 8);
    if (ip) {
        /* What goes to p sits where what comes from p will land. */
        for (int p = 0; p < size; ++p) {
            stt[p]->gen((char *) c->rbuf + c->rdispls[p], (size_t) c->rcounts[p], OP_NONE, rank,
                        size, BLOCK(p));
        }
    } else {
        c->sbuf = check_alloc(c, stotal);
        c->want_s = check_alloc(c, stotal);
        fill_sentinel(byte, c->sbuf, stotal, 9);
        for (int p = 0; p < size; ++p) {
            stt[p]->gen((char *) c->sbuf + c->sdispls[p], (size_t) c->scounts[p], OP_NONE, rank,
                        size, BLOCK(p));
        }
        memcpy(c->want_s, c->sbuf, stotal);
        blocks_regions(c, "sendbuf (must not change)", c->sbuf, c->want_s, size, c->scounts,
                       c->sdispls, stt, stotal);
    }
    for (int p = 0; p < size; ++p) {
        rtt[p]->gen((char *) c->want_r + c->rdispls[p], (size_t) c->rcounts[p], OP_NONE, p, size,
                    BLOCK(rank));
    }
    blocks_regions(c, "recvbuf", c->rbuf, c->want_r, size, c->rcounts, c->rdispls, rtt, rtotal);
    c->call = call_alltoallw;
}

static check *rebuild_movement(const check *c);

static check *build_movement(enum coll_id coll, const comm_ctx *cx, const type_info *t,
                             size_t count, int root, int in_place, int shift)
{
    const enum coll_id base = coll_blocking_form(coll);
    const int rank = cx->rank, size = cx->size;
    check *c = check_new(coll, cx, t, OP_NONE, count, root, in_place);
    const int ip = here_in_place(c), at_root = rank == root;
    const size_t n = count;

    c->rebuild = rebuild_movement;
    c->shift = shift;

    switch (base) {
    case COLL_allgather:
    case COLL_gather:
        c->call = COLL_allgather == base ? call_allgather : call_gather;
        if (COLL_allgather == base || at_root) {
            sentinel_recv(c, (size_t) size * n);
            for (int s = 0; s < size; ++s) {
                t->gen(at(c->want_r, (size_t) s * n, t), n, OP_NONE, s, size, 0);
            }
            check_region(c, "recvbuf", c->rbuf, c->want_r, (size_t) size * n, t, 0);
        }
        if (ip) {
            t->gen(at(c->rbuf, (size_t) rank * n, t), n, OP_NONE, rank, size, 0);
        } else {
            c->sbuf = check_alloc(c, n * t->extent);
            t->gen(c->sbuf, n, OP_NONE, rank, size, 0);
            keep_sendbuf(c, n);
        }
        break;

    case COLL_allgatherv:
    case COLL_gatherv: {
        c->call = COLL_allgatherv == base ? call_allgatherv : call_gatherv;
        c->variant = "counts uneven, some 0, displacements reversed with gaps";
        c->scount = v_count(n, rank, size);
        if (COLL_allgatherv == base || at_root) {
            size_t total;
            total = uneven_blocks(c, n, size, &c->rcounts, &c->rdispls);
            sentinel_recv(c, total);
            for (int s = 0; s < size; ++s) {
                t->gen(at(c->want_r, (size_t) c->rdispls[s], t), (size_t) c->rcounts[s], OP_NONE,
                       s, size, 0);
            }
            check_region(c, "recvbuf", c->rbuf, c->want_r, total, t, 0);
        }
        if (ip) {
            t->gen(at(c->rbuf, (size_t) c->rdispls[rank], t), (size_t) c->scount, OP_NONE, rank,
                   size, 0);
        } else {
            c->sbuf = check_alloc(c, (size_t) c->scount * t->extent);
            t->gen(c->sbuf, (size_t) c->scount, OP_NONE, rank, size, 0);
            keep_sendbuf(c, (size_t) c->scount);
        }
        break;
    }

    case COLL_alltoall: {
        size_t total = (size_t) size * n;
        c->call = call_alltoall;
        sentinel_recv(c, total);
        if (!ip) {
            c->sbuf = check_alloc(c, total * t->extent);
        }
        for (int p = 0; p < size; ++p) {
            t->gen(at(ip ? c->rbuf : c->sbuf, (size_t) p * n, t), n, OP_NONE, rank, size,
                   BLOCK(p));
            t->gen(at(c->want_r, (size_t) p * n, t), n, OP_NONE, p, size, BLOCK(rank));
        }
        if (!ip) {
            keep_sendbuf(c, total);
        }
        check_region(c, "recvbuf", c->rbuf, c->want_r, total, t, 0);
        break;
    }

    case COLL_alltoallv: {
        size_t stotal, rtotal;
        c->call = call_alltoallv;
        c->variant = ip ? "counts uneven, some 0, symmetric; displacements with gaps"
                        : "counts uneven, some 0; displacements reversed, with gaps";
        c->scounts = check_alloc(c, (size_t) size * sizeof(int));
        c->sdispls = check_alloc(c, (size_t) size * sizeof(int));
        c->rcounts = check_alloc(c, (size_t) size * sizeof(int));
        c->rdispls = check_alloc(c, (size_t) size * sizeof(int));
        for (int p = 0; p < size; ++p) {
            c->scounts[p] = pair_count(n, rank, p, ip, libnbc_in_place_bug(c));
            c->rcounts[p] = pair_count(n, p, rank, ip, libnbc_in_place_bug(c));
        }
        stotal = layout(size, c->scounts, c->sdispls, 1, 1);
        rtotal = layout(size, c->rcounts, c->rdispls, 0, 1);
        sentinel_recv(c, rtotal);
        if (ip) {
            for (int p = 0; p < size; ++p) {
                t->gen(at(c->rbuf, (size_t) c->rdispls[p], t), (size_t) c->rcounts[p], OP_NONE,
                       rank, size, BLOCK(p));
            }
        } else {
            c->sbuf = check_alloc(c, stotal * t->extent);
            fill_sentinel(t, c->sbuf, stotal, 10);
            for (int p = 0; p < size; ++p) {
                t->gen(at(c->sbuf, (size_t) c->sdispls[p], t), (size_t) c->scounts[p], OP_NONE,
                       rank, size, BLOCK(p));
            }
            keep_sendbuf(c, stotal);
        }
        for (int p = 0; p < size; ++p) {
            t->gen(at(c->want_r, (size_t) c->rdispls[p], t), (size_t) c->rcounts[p], OP_NONE, p,
                   size, BLOCK(rank));
        }
        check_region(c, "recvbuf", c->rbuf, c->want_r, rtotal, t, 0);
        break;
    }

    case COLL_alltoallw:
        build_alltoallw(c, shift);
        c->type = NULL; /* one per peer, named in the regions */
        break;

    case COLL_bcast:
        c->call = call_bcast;
        sentinel_recv(c, n);
        t->gen(c->want_r, n, OP_NONE, root, size, 0);
        if (at_root) {
            memcpy(c->rbuf, c->want_r, n * t->extent);
        }
        check_region(c, at_root ? "buffer (root's, must not change)" : "buffer", c->rbuf,
                     c->want_r, n, t, 0);
        break;

    case COLL_scatter:
        c->call = call_scatter;
        if (at_root) {
            size_t total = (size_t) size * n;
            c->sbuf = check_alloc(c, total * t->extent);
            for (int p = 0; p < size; ++p) {
                t->gen(at(c->sbuf, (size_t) p * n, t), n, OP_NONE, rank, size, BLOCK(p));
            }
            keep_sendbuf(c, total);
        }
        if (!ip) {
            sentinel_recv(c, n);
            t->gen(c->want_r, n, OP_NONE, root, size, BLOCK(rank));
            check_region(c, "recvbuf", c->rbuf, c->want_r, n, t, 0);
        }
        break;

    case COLL_scatterv:
        c->call = call_scatterv;
        c->variant = "counts uneven, some 0, displacements reversed with gaps";
        c->rcount = v_count(n, rank, size);
        if (at_root) {
            size_t total;
            total = uneven_blocks(c, n, size, &c->scounts, &c->sdispls);
            c->sbuf = check_alloc(c, total * t->extent);
            fill_sentinel(t, c->sbuf, total, 11);
            for (int p = 0; p < size; ++p) {
                t->gen(at(c->sbuf, (size_t) c->sdispls[p], t), (size_t) c->scounts[p], OP_NONE,
                       rank, size, BLOCK(p));
            }
            keep_sendbuf(c, total);
        }
        if (!ip) {
            sentinel_recv(c, (size_t) c->rcount);
            t->gen(c->want_r, (size_t) c->rcount, OP_NONE, root, size, BLOCK(rank));
            check_region(c, "recvbuf", c->rbuf, c->want_r, (size_t) c->rcount, t, 0);
        }
        break;

    default:
        fprintf(stderr, "coll_suite: internal error: %s is no data movement\n", coll_names[coll]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return c;
}

/* alltoallw's c->type is NULL (the types come from the peers): MPI_BYTE rebuilds it. */
static check *rebuild_movement(const check *c)
{
    const type_info *t = c->type ? c->type : type_by_name("MPI_BYTE");
    return build_movement(c->coll, c->cx, t, c->count, c->root, c->in_place, c->shift);
}

/* ---- the plan ------------------------------------------------------------------ */

static const char *const small_types[] = {
    "MPI_BYTE", "MPI_INT", "MPI_DOUBLE", "MPI_DOUBLE_INT", "MPI_SHORT_INT", "MPI_C_FLOAT_COMPLEX",
};
static const char *const large_types[] = {"MPI_BYTE", "MPI_DOUBLE", "MPI_DOUBLE_INT"};
static const char *const huge_types[] = {"MPI_BYTE", "MPI_DOUBLE"};

static int is_rooted(enum coll_id base)
{
    return COLL_bcast == base || COLL_gather == base || COLL_gatherv == base ||
           COLL_scatter == base || COLL_scatterv == base;
}

static int has_in_place(enum coll_id base)
{
    return COLL_bcast != base;
}

/* The collectives whose buffers grow with the communicator size. */
static int per_rank(enum coll_id base)
{
    return COLL_bcast != base;
}

static void run_movement(enum coll_id coll, const comm_ctx *cx, const type_info *t, size_t count,
                         int root, int in_place, int shift)
{
    check *c = build_movement(coll, cx, t, count, root, in_place, shift);
    run_check(c);
    check_free(c);
}

void plan_movement(enum coll_id coll, const comm_ctx *cx)
{
    const enum coll_id base = coll_blocking_form(coll);
    int roots[3], nroots = suite_roots(cx->size, roots);
    int rooted = is_rooted(base), ip_max = has_in_place(base) ? 1 : 0;

    if (!rooted) {
        roots[0] = -1;
        nroots = 1;
    }
    for (int k = 0; k < num_suite_counts; ++k) {
        size_t count = suite_counts[k];
        size_t arg = per_rank(base) ? per_rank_count(count, cx->size) : count;
        const char *const *types = small_types;
        int ntypes = NELEMS(small_types), large = count >= COUNT_LARGE_MIN;

        if (count > opt.max_count) {
            continue;
        }
        if (count > COUNT_LARGE_MIN) {
            /* ~1M: one check per root (rooted) or per in-place choice (unrooted),
             * the type and the other choice alternating. */
            for (int i = 0; i < (rooted ? nroots : ip_max + 1); ++i) {
                int ip = rooted ? (int) (i % 2) && ip_max : i;
                run_movement(coll, cx, type_by_name(huge_types[i % NELEMS(huge_types)]), arg,
                             roots[rooted ? i : 0], ip, 0);
            }
            continue;
        }
        if (large) {
            types = large_types, ntypes = NELEMS(large_types);
        }
        if (COLL_alltoallw == base) {
            ntypes = large ? 1 : 3; /* the types come from the peers; these are shifts */
        }
        for (int ti = 0; ti < ntypes; ++ti) {
            const type_info *t = type_by_name(COLL_alltoallw == base ? "MPI_BYTE" : types[ti]);
            for (int ri = 0; ri < nroots; ++ri) {
                for (int ip = 0; ip <= ip_max; ++ip) {
                    /* Large counts: half of the (root, in place) combinations. */
                    if (large && rooted && ip_max && (ti + ri + ip) % 2) {
                        continue;
                    }
                    run_movement(coll, cx, t, arg, roots[ri], ip, ti);
                }
            }
        }
    }

    /* Several outstanding nonblocking calls, one MPI_Waitall; or several persistent
     * requests, MPI_Startall and MPI_Waitall. */
    if (coll_has_request(coll) && opt.max_count >= 7) {
        static const char *const batch[] = {"MPI_INT", "MPI_DOUBLE", "MPI_DOUBLE_INT"};
        check *cs[NELEMS(batch)];
        for (int i = 0; i < NELEMS(batch); ++i) {
            cs[i] = build_movement(coll, cx, type_by_name(batch[i]), 7,
                                   rooted ? roots[i % nroots] : -1, ip_max && 1 == i, i);
            cs[i]->variant = BATCH_VARIANT(coll);
        }
        run_batch(cs, NELEMS(batch));
        for (int i = 0; i < NELEMS(batch); ++i) {
            check_free(cs[i]);
        }
    }
}

static check *rebuild_barrier(const check *c);

static check *build_barrier(enum coll_id coll, const comm_ctx *cx)
{
    check *c = check_new(coll, cx, NULL, OP_NONE, 0, -1, 0);
    c->call = call_barrier;
    c->rebuild = rebuild_barrier;
    return c;
}

static check *rebuild_barrier(const check *c)
{
    return build_barrier(c->coll, c->cx);
}

void plan_barrier(enum coll_id coll, const comm_ctx *cx)
{
    for (int i = 0; i < 3; ++i) {
        check *c = build_barrier(coll, cx);
        run_check(c);
        check_free(c);
    }
    if (coll_has_request(coll)) {
        check *cs[3];
        for (int i = 0; i < 3; ++i) {
            cs[i] = build_barrier(coll, cx);
            cs[i]->variant = BATCH_VARIANT(coll);
        }
        run_batch(cs, 3);
        for (int i = 0; i < 3; ++i) {
            check_free(cs[i]);
        }
    }
}
