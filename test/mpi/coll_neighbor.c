/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_neighbor: the neighborhood collectives on Cartesian, graph and distributed
 * graph communicators, checked against a reference every rank computes alone.
 *
 *   mpirun -np N coll_neighbor [--expect-component=yes|no] [--max-count C]
 *                              [--forms blocking,nonblocking,persistent]
 *                              [--small-periodic=check|skip] [--verbose]
 *                              [--thread-multiple]
 *
 * Collectives: MPI_Neighbor_allgather(v), MPI_Neighbor_alltoall(v,w), each blocking,
 * nonblocking (MPI_Ineighbor_..., MPI_Wait) and persistent (MPI_Neighbor_..._init,
 * then twice: new data, MPI_Start, MPI_Wait, check; then MPI_Request_free).
 *
 * Topologies (coll_neighbor_topo.c lists them): Cartesian 1-D and 2-D, periodic and
 * not, with periodic dimensions of size 1 and 2 and non-periodic ones of size 1;
 * MPI_Graph_create with repeated edges, a self-loop and (from 3 ranks on) a rank
 * with no neighbours; MPI_Dist_graph_create_adjacent with in- and out-lists in
 * different orders, repeated and self edges, and (from 3, 4, 5 ranks on) a rank
 * with no neighbours, one with no out-neighbours, one with no in-neighbours. Some of
 * them again on a communicator whose ranks run in the reverse order of
 * MPI_COMM_WORLD's, so that a topology's ranks are not the world's.
 *
 * What is assumed (MPI 4.0, section 8.6):
 *   - Cartesian: both lists are, per dimension d, the neighbour in the negative
 *     direction then the one in the positive direction (MPI_Cart_shift(d, 1)'s
 *     source then destination). Receive block 2d holds what the negative
 *     neighbour sent as its block 2d+1 (towards its positive side); receive block
 *     2d+1 holds what the positive neighbour sent as its block 2d. This also holds
 *     where both neighbours are one rank or the rank itself (periodic dimensions of
 *     size 2 and 1). MPI_PROC_NULL neighbours: nothing is received, the block keeps
 *     its fill pattern; what is addressed to them is dropped.
 *   - Graph and distributed graph: the k-th occurrence of destination d in rank
 *     s's destination list is matched with the k-th occurrence of s in d's source
 *     list (for MPI_Graph_create both lists are MPI_Graph_neighbors' list).
 *   - allgather(v): every receive block holds the sender's one send block.
 *
 * Data: element k (counting primitive ints through the datatype's type map) of the
 * block a rank s sends as block p of its destination list (p = 0 for allgather(v))
 * is a hash of (s, p, k, a per-call salt). Each rank builds the image its receive
 * buffer must have: the fill pattern everywhere, the expected values at the type
 * map positions of its receive blocks; the buffer, with a 64-byte guard before and
 * after, must match it byte for byte, so holes, gaps, blocks from MPI_PROC_NULL and
 * guards keep the fill pattern. Send buffers must not change.
 *
 * Counts 0, 1, 7, 1000, 100000 elements, of MPI_INT and of "holes" (a vector of 2
 * ints at bytes 0 and 8, resized to 16 bytes: two 4-byte holes per element) for
 * allgather(v) and alltoall(v). The v variants have uneven counts (blocks of rank 1,
 * or of sender+block = 1 mod 4, are empty) and displacements in reverse or rotated
 * block order with a one-element gap after every block (that element must keep the
 * fill pattern). alltoallw passes per neighbour MPI_INT, "pair"
 * (MPI_Type_contiguous(2, MPI_INT)) or holes, chosen differently on the sending and
 * the receiving side (one type signature), at byte displacements. In allgather and
 * alltoall blocks are adjacent: the element after a block is the next block's first.
 *
 * Around every call (every MPI_Start for the persistent form) coll/async's counter
 * coll_async_<name>_native must move by one and coll_async_<name>_delegated not at
 * all (creating a persistent request moves neither). Open MPI 4.1's bindings answer
 * blocking neighbor_allgather and neighbor_alltoall of count 0 without calling coll:
 * no counter may move for those. --expect-component=no skips the counters.
 *
 * Open MPI 4.1.4's libnbc (the nonblocking and persistent forms without the
 * component) pairs the two blocks of a periodic dimension of size 1 or 2 the other
 * way round (receive block 2d gets the sender's block 2d) in neighbor_alltoall(v,w);
 * where the two blocks' counts differ (v, w) the job aborts with MPI_ERR_TRUNCATE.
 * --small-periodic=skip skips those calls (default with --expect-component=no);
 * --small-periodic=check runs them (default with the component). Open MPI's blocking
 * forms (coll/basic) follow MPI 4.0 there.
 *
 * --max-count C skips the counts above C; --forms narrows the run to some forms;
 * --verbose prints each call before it runs.
 *
 * COLL_NEIGHBOR_BREAK=1 in the environment corrupts one expected value (the first
 * blocking alltoall of 7 ints on the 1-D periodic communicator), so the run must
 * fail. Ends with "coll_neighbor: N checks, M failures" (summed over the ranks) on
 * rank 0; the exit status is non-zero on any failure.
 */

#include <mpi.h>
#include "mpi4_persistent.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_neighbor_topo.h"
#include "coll_program.h"
#include "pvar_counter.h"

#define PROGRAM "coll_neighbor"
#define SENTINEL 0xA5
#define GUARD 64

/* --- datatypes ------------------------------------------------------------------ */

struct ttype {
    const char *name;
    int nprim;     /* ints per element */
    size_t off[2]; /* their byte offsets */
    size_t extent;
    MPI_Datatype dt;
};

enum { T_INT, T_PAIR, T_HOLES, NUM_TTYPES, T_MIXED = NUM_TTYPES };

static struct ttype ttypes[NUM_TTYPES] = {
    [T_INT] = {"int", 1, {0, 0}, 4, MPI_DATATYPE_NULL},
    [T_PAIR] = {"pair", 2, {0, 4}, 8, MPI_DATATYPE_NULL},
    [T_HOLES] = {"holes", 2, {0, 8}, 16, MPI_DATATYPE_NULL},
};

static void create_types(void)
{
    MPI_Datatype vec;

    ttypes[T_INT].dt = MPI_INT;
    MPI_Type_contiguous(2, MPI_INT, &ttypes[T_PAIR].dt);
    MPI_Type_commit(&ttypes[T_PAIR].dt);
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 16, &ttypes[T_HOLES].dt);
    MPI_Type_free(&vec);
    MPI_Type_commit(&ttypes[T_HOLES].dt);
}

static int world_rank, world_size;

static void *zeroed(size_t n, size_t size)
{
    void *p = calloc(n + 1, size); /* never NULL for n = 0: MPI gets a valid address */

    if (NULL == p) {
        fprintf(stderr, PROGRAM ": out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* --- checks ------------------------------------------------------------------------ */

static long checks, failures;

#define FAIL_AT(what, ...)                                                               \
    do {                                                                                 \
        if (failures++ < 20) {                                                           \
            char line_[512];                                                             \
            snprintf(line_, sizeof(line_), __VA_ARGS__);                                 \
            fprintf(stderr, PROGRAM ": rank %d: FAIL %s: %s\n", world_rank, (what), line_); \
        }                                                                                \
    } while (0)

/* --- one call: its blocks, buffers and expected image -------------------------------- */

enum family { ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV, ALLTOALLW, NUM_FAMILIES };
enum form { BLOCKING, NONBLOCKING, PERSISTENT, NUM_FORMS };

static const char *const family_names[NUM_FAMILIES] = {
    "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall", "neighbor_alltoallv",
    "neighbor_alltoallw",
};
static const char *const form_names[NUM_FORMS] = {"blocking", "nonblocking", "persistent"};

struct call {
    enum family family;
    enum form form;
    struct topo *t;
    int type;  /* T_INT, T_HOLES, or T_MIXED (alltoallw) */
    int count;
    int start; /* persistent: which start (0, 1) */
    uint32_t salt;
};

static void describe(char *out, size_t len, const struct call *c)
{
    snprintf(out, len, "%s %s, %s, count %d, %s%s", form_names[c->form],
             family_names[c->family],
             T_MIXED == c->type ? "int/pair/holes per neighbour" : ttypes[c->type].name,
             c->count, c->t->name,
             PERSISTENT != c->form ? "" : 0 == c->start ? ", start 1" : ", start 2");
}

#define FAIL(c, ...)                                                                     \
    do {                                                                                 \
        char what_[256];                                                                 \
        describe(what_, sizeof(what_), (c));                                             \
        FAIL_AT(what_, __VA_ARGS__);                                                     \
    } while (0)

struct block {
    int count;                /* elements of type */
    const struct ttype *type;
    size_t disp;              /* bytes from the buffer's start */
    int from, from_block;     /* receive blocks: the sender and its block (-1: none) */
};

struct plan {
    int ns, nr;
    struct block *s, *r;
    size_t sbytes, rbytes;
    /* The arguments in MPI's form. */
    int *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Aint *swdispls, *rwdispls;
    MPI_Datatype *stypes, *rtypes;
};

/* Elements in the v variants: uneven, some blocks empty. */
static int allgatherv_count(int sender, int count)
{
    return 0 == count || 1 == sender % 3 ? 0 : count + sender;
}

static int alltoallv_count(int sender, int block, int count)
{
    return 0 == count || 1 == (sender + block) % 4 ? 0 : count + (sender + block) % 3;
}

/* alltoallw: the types of the sending and the receiving side differ. */
static const struct ttype *w_send_type(int rank, int block)
{
    return &ttypes[(rank + 2 * block) % NUM_TTYPES];
}

static const struct ttype *w_recv_type(int rank, int block)
{
    return &ttypes[(rank + block + 1) % NUM_TTYPES];
}

/* Lays blocks out: in order without gaps, or (v/w) in reverse (receive) or rotated
 * (send) order with one element of gap after each block. Returns the bytes used. */
static size_t place(struct block *b, int nb, int gapped, int reverse)
{
    size_t at = 0;

    for (int k = 0; k < nb; ++k) {
        int i = !gapped ? k : reverse ? nb - 1 - k : (k + 1) % nb;

        b[i].disp = at;
        at += ((size_t) b[i].count + (gapped ? 1 : 0)) * b[i].type->extent;
    }
    return at;
}

static void plan_call(const struct call *c, struct plan *p)
{
    const struct topo *t = c->t;
    int v = ALLGATHERV == c->family || ALLTOALLV == c->family || ALLTOALLW == c->family;
    int gather = ALLGATHER == c->family || ALLGATHERV == c->family;
    const struct ttype *one = T_MIXED == c->type ? NULL : &ttypes[c->type];

    p->ns = gather ? 1 : t->outdeg;
    p->nr = t->indeg;
    p->s = zeroed((size_t) p->ns, sizeof(struct block));
    p->r = zeroed((size_t) p->nr, sizeof(struct block));
    for (int j = 0; j < p->ns; ++j) {
        struct block *b = &p->s[j];

        b->type = one;
        switch (c->family) {
        case ALLGATHERV: b->count = allgatherv_count(t->me, c->count); break;
        case ALLTOALLV: b->count = alltoallv_count(t->me, j, c->count); break;
        case ALLTOALLW:
            b->type = w_send_type(t->me, j);
            b->count = 2 * alltoallv_count(t->me, j, c->count) / b->type->nprim;
            break;
        default: b->count = c->count; break;
        }
    }
    for (int i = 0; i < p->nr; ++i) {
        struct block *b = &p->r[i];
        int s = t->src[i], sb = t->from_block[i], none = MPI_PROC_NULL == s;

        b->type = one;
        b->from = s;
        b->from_block = gather ? 0 : sb;
        switch (c->family) {
        case ALLGATHERV: b->count = none ? c->count : allgatherv_count(s, c->count); break;
        case ALLTOALLV: b->count = none ? c->count : alltoallv_count(s, sb, c->count); break;
        case ALLTOALLW:
            b->type = w_recv_type(t->me, i);
            b->count = 2 * (none ? c->count : alltoallv_count(s, sb, c->count)) / b->type->nprim;
            break;
        default: b->count = c->count; break;
        }
    }
    p->sbytes = place(p->s, p->ns, v, 0);
    p->rbytes = place(p->r, p->nr, v, 1);
    p->scounts = zeroed((size_t) p->ns, sizeof(int));
    p->sdispls = zeroed((size_t) p->ns, sizeof(int));
    p->rcounts = zeroed((size_t) p->nr, sizeof(int));
    p->rdispls = zeroed((size_t) p->nr, sizeof(int));
    p->swdispls = zeroed((size_t) p->ns, sizeof(MPI_Aint));
    p->rwdispls = zeroed((size_t) p->nr, sizeof(MPI_Aint));
    p->stypes = zeroed((size_t) p->ns, sizeof(MPI_Datatype));
    p->rtypes = zeroed((size_t) p->nr, sizeof(MPI_Datatype));
    for (int j = 0; j < p->ns; ++j) {
        p->scounts[j] = p->s[j].count;
        p->sdispls[j] = (int) (p->s[j].disp / p->s[j].type->extent);
        p->swdispls[j] = (MPI_Aint) p->s[j].disp;
        p->stypes[j] = p->s[j].type->dt;
    }
    for (int i = 0; i < p->nr; ++i) {
        p->rcounts[i] = p->r[i].count;
        p->rdispls[i] = (int) (p->r[i].disp / p->r[i].type->extent);
        p->rwdispls[i] = (MPI_Aint) p->r[i].disp;
        p->rtypes[i] = p->r[i].type->dt;
    }
}

static void free_plan(struct plan *p)
{
    free(p->s);
    free(p->r);
    free(p->scounts);
    free(p->sdispls);
    free(p->rcounts);
    free(p->rdispls);
    free(p->swdispls);
    free(p->rwdispls);
    free(p->stypes);
    free(p->rtypes);
}

/* Primitive element k of block `block` that rank `sender` sends in the call salted so. */
static int32_t value_of(int sender, int block, size_t k, uint32_t salt)
{
    uint64_t h = (uint64_t) (sender + 1) * 0x9E3779B97F4A7C15ull
                 ^ (uint64_t) (block + 1) * 0xC2B2AE3D27D4EB4Full
                 ^ (uint64_t) k * 0xBF58476D1CE4E5B9ull ^ (uint64_t) salt * 0x94D049BB133111EBull;

    h ^= h >> 31;
    h *= 0xD6E9A0D5A3F1C2B7ull;
    h ^= h >> 29;
    return (int32_t) (uint32_t) h;
}

/* Writes block b's values (sent by `sender` as its block `block`) into buf. */
static void write_block(char *buf, const struct block *b, int sender, int block, uint32_t salt)
{
    const struct ttype *ty = b->type;

    for (size_t e = 0; e < (size_t) b->count; ++e) {
        for (int q = 0; q < ty->nprim; ++q) {
            int32_t v = value_of(sender, block, e * (size_t) ty->nprim + (size_t) q, salt);

            memcpy(buf + b->disp + e * ty->extent + ty->off[q], &v, sizeof(v));
        }
    }
}

static char *alloc_guarded(size_t bytes)
{
    char *buf = malloc(bytes + 2 * GUARD);

    if (NULL == buf) {
        fprintf(stderr, PROGRAM ": out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return buf + GUARD;
}

static int break_reference; /* COLL_NEIGHBOR_BREAK=1 */
static int broken;          /* the one corrupted expectation was used */

/* The receive buffer as it must be after the call. */
static void build_image(const struct call *c, const struct plan *p, char *image)
{
    memset(image - GUARD, SENTINEL, p->rbytes + 2 * GUARD);
    for (int i = 0; i < p->nr; ++i) {
        if (MPI_PROC_NULL != p->r[i].from) {
            write_block(image, &p->r[i], p->r[i].from, p->r[i].from_block, c->salt);
        }
    }
    if (break_reference && !broken && ALLTOALL == c->family && BLOCKING == c->form
        && T_INT == c->type && 7 == c->count && 0 == strncmp(c->t->name, "cart {", 6)
        && 1 == c->t->ndims && c->t->periods[0] && p->nr > 0) {
        image[p->r[0].disp + 3 * sizeof(int)] ^= 0x10; /* the deliberate mistake */
        broken = 1;
    }
}

/* Compares the receive buffer (guards included) with its image; names the first
 * difference. */
static void check_image(const struct call *c, const struct plan *p, const char *rbuf,
                        const char *image)
{
    size_t len = p->rbytes + 2 * GUARD;
    const char *got = rbuf - GUARD, *want = image - GUARD;

    ++checks;
    if (0 == memcmp(got, want, len)) {
        return;
    }
    for (size_t at = 0; at < len; ++at) {
        if (got[at] != want[at]) {
            long off = (long) at - GUARD;
            char where[160] = "a guard or gap between blocks";

            for (int i = 0; i < p->nr; ++i) {
                const struct block *b = &p->r[i];

                if (off >= (long) b->disp
                    && off < (long) (b->disp + (size_t) b->count * b->type->extent)) {
                    snprintf(where, sizeof(where), "receive block %d (from rank %d%s, its "
                             "block %d), element %ld", i, b->from,
                             MPI_PROC_NULL == b->from ? " = MPI_PROC_NULL" : "", b->from_block,
                             (off - (long) b->disp) / (long) b->type->extent);
                }
            }
            FAIL(c, "byte %ld of the receive buffer, in %s, is 0x%02X, expected 0x%02X",
                 off, where, (unsigned char) got[at], (unsigned char) want[at]);
            return;
        }
    }
}

/* --- counters ------------------------------------------------------------------------ */

static int use_counters = 1;
static struct pvar_families counters; /* unless --expect-component=no */

/* Open MPI 4.1's bindings answer these without calling coll (see above). */
static int reaches_coll(const struct call *c)
{
    return !(BLOCKING == c->form && 0 == c->count
             && (ALLGATHER == c->family || ALLTOALL == c->family));
}

static void read_counters(const struct call *c, unsigned long long out[PVAR_PATHS])
{
    if (use_counters) {
        pvar_families_read(&counters, c->family, c->form, out);
    } else {
        out[PVAR_PATH_NATIVE] = out[PVAR_PATH_DELEGATED] = 0;
    }
}

static void check_counters(const struct call *c, const unsigned long long before[PVAR_PATHS],
                           unsigned long long want_native)
{
    char why[PVAR_PATHS][PVAR_WHY_MAX];

    if (!use_counters) {
        return;
    }
    checks += PVAR_PATHS;
    pvar_families_check(&counters, c->family, c->form, before, want_native, why);
    for (int p = 0; p < PVAR_PATHS; ++p) {
        if ('\0' != why[p][0]) {
            FAIL(c, "%s", why[p]);
        }
    }
}

/* --- running a call ------------------------------------------------------------------ */

/* Issues the call: blocking runs it; nonblocking and persistent return the request. */
static int issue(const struct call *c, const struct plan *p, const void *sb, void *rb,
                 MPI_Request *req)
{
    MPI_Comm comm = c->t->comm;
    MPI_Datatype dt = T_MIXED == c->type ? MPI_DATATYPE_NULL : ttypes[c->type].dt;
    int n = c->count;

    switch (c->form) {
    case BLOCKING:
        switch (c->family) {
        case ALLGATHER: return MPI_Neighbor_allgather(sb, n, dt, rb, n, dt, comm);
        case ALLGATHERV:
            return MPI_Neighbor_allgatherv(sb, p->scounts[0], dt, rb, p->rcounts, p->rdispls,
                                           dt, comm);
        case ALLTOALL: return MPI_Neighbor_alltoall(sb, n, dt, rb, n, dt, comm);
        case ALLTOALLV:
            return MPI_Neighbor_alltoallv(sb, p->scounts, p->sdispls, dt, rb, p->rcounts,
                                          p->rdispls, dt, comm);
        case ALLTOALLW:
            return MPI_Neighbor_alltoallw(sb, p->scounts, p->swdispls, p->stypes, rb,
                                          p->rcounts, p->rwdispls, p->rtypes, comm);
        default: return MPI_ERR_OTHER;
        }
    case NONBLOCKING:
        switch (c->family) {
        case ALLGATHER: return MPI_Ineighbor_allgather(sb, n, dt, rb, n, dt, comm, req);
        case ALLGATHERV:
            return MPI_Ineighbor_allgatherv(sb, p->scounts[0], dt, rb, p->rcounts, p->rdispls,
                                            dt, comm, req);
        case ALLTOALL: return MPI_Ineighbor_alltoall(sb, n, dt, rb, n, dt, comm, req);
        case ALLTOALLV:
            return MPI_Ineighbor_alltoallv(sb, p->scounts, p->sdispls, dt, rb, p->rcounts,
                                           p->rdispls, dt, comm, req);
        case ALLTOALLW:
            return MPI_Ineighbor_alltoallw(sb, p->scounts, p->swdispls, p->stypes, rb,
                                           p->rcounts, p->rwdispls, p->rtypes, comm, req);
        default: return MPI_ERR_OTHER;
        }
    case PERSISTENT:
        switch (c->family) {
        case ALLGATHER:
            return MPI_Neighbor_allgather_init(sb, n, dt, rb, n, dt, comm, MPI_INFO_NULL, req);
        case ALLGATHERV:
            return MPI_Neighbor_allgatherv_init(sb, p->scounts[0], dt, rb, p->rcounts,
                                                p->rdispls, dt, comm, MPI_INFO_NULL, req);
        case ALLTOALL:
            return MPI_Neighbor_alltoall_init(sb, n, dt, rb, n, dt, comm, MPI_INFO_NULL, req);
        case ALLTOALLV:
            return MPI_Neighbor_alltoallv_init(sb, p->scounts, p->sdispls, dt, rb, p->rcounts,
                                               p->rdispls, dt, comm, MPI_INFO_NULL, req);
        case ALLTOALLW:
            return MPI_Neighbor_alltoallw_init(sb, p->scounts, p->swdispls, p->stypes, rb,
                                               p->rcounts, p->rwdispls, p->rtypes, comm,
                                               MPI_INFO_NULL, req);
        default: return MPI_ERR_OTHER;
        }
    default:
        return MPI_ERR_OTHER;
    }
}

static uint32_t next_salt; /* the same sequence on every rank, inside a topology or not */
static int verbose;
static int skip_small_periodic; /* --small-periodic=skip */
static long skipped;

static void run_case(struct call *c)
{
    int starts = PERSISTENT == c->form ? 2 : 1, rc;
    struct plan p;
    char *sbuf, *scopy, *rbuf, *image;
    unsigned long long before[PVAR_PATHS];
    MPI_Request req = MPI_REQUEST_NULL;

    if (MPI_COMM_NULL == c->t->comm) {
        next_salt += (uint32_t) starts;
        return;
    }
    if (skip_small_periodic && c->t->small_periodic && BLOCKING != c->form
        && c->family >= ALLTOALL) {
        next_salt += (uint32_t) starts;
        ++skipped;
        return;
    }
    plan_call(c, &p);
    sbuf = alloc_guarded(p.sbytes);
    scopy = alloc_guarded(p.sbytes);
    rbuf = alloc_guarded(p.rbytes);
    image = alloc_guarded(p.rbytes);
    for (c->start = 0; c->start < starts; ++c->start) {
        c->salt = next_salt++;
        if (verbose) {
            char what[256];

            describe(what, sizeof(what), c);
            fprintf(stderr, PROGRAM ": rank %d: %s\n", world_rank, what);
        }
        memset(sbuf - GUARD, SENTINEL, p.sbytes + 2 * GUARD);
        for (int j = 0; j < p.ns; ++j) {
            write_block(sbuf, &p.s[j], c->t->me, j, c->salt);
        }
        memcpy(scopy - GUARD, sbuf - GUARD, p.sbytes + 2 * GUARD);
        memset(rbuf - GUARD, SENTINEL, p.rbytes + 2 * GUARD);
        build_image(c, &p, image);
        if (0 == c->start) {
            read_counters(c, before);
            rc = issue(c, &p, sbuf, rbuf, &req);
            if (MPI_SUCCESS != rc) {
                FAIL(c, "returned %d", rc);
                break;
            }
            if (PERSISTENT == c->form) {
                check_counters(c, before, 0); /* creating the request runs nothing */
            }
        }
        if (PERSISTENT == c->form) {
            read_counters(c, before);
            rc = MPI_Start(&req);
            if (MPI_SUCCESS != rc) {
                FAIL(c, "MPI_Start returned %d", rc);
                break;
            }
        }
        if (BLOCKING != c->form) {
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (MPI_SUCCESS != rc) {
                FAIL(c, "MPI_Wait returned %d", rc);
                break;
            }
        }
        check_counters(c, before, (unsigned long long) reaches_coll(c));
        check_image(c, &p, rbuf, image);
        ++checks;
        if (0 != memcmp(sbuf - GUARD, scopy - GUARD, p.sbytes + 2 * GUARD)) {
            FAIL(c, "the send buffer changed");
        }
    }
    /* A failed start leaves salts unused: keep the sequence in step with the others. */
    for (; c->start < starts; ++c->start) {
        ++next_salt;
    }
    if (PERSISTENT == c->form && MPI_REQUEST_NULL != req) {
        MPI_Request_free(&req);
    }
    free(sbuf - GUARD);
    free(scopy - GUARD);
    free(rbuf - GUARD);
    free(image - GUARD);
    free_plan(&p);
}

/* --- main ---------------------------------------------------------------------------- */

static const int counts[] = {0, 1, 7, 1000, 100000};

/* --small-periodic=check|skip: whether to check the calls where Open MPI 4.1.4's
 * libnbc pairs blocks wrongly (by default: only where the component is expected). */
static int read_small_periodic(int argc, char **argv, int i, void *context)
{
    int *small_periodic = context;

    (void) argc;
    if (0 == strcmp(argv[i], "--small-periodic=check")
        || 0 == strcmp(argv[i], "--small-periodic=skip")) {
        *small_periodic = 0 == strcmp(argv[i], "--small-periodic=check");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int form_enabled[NUM_FORMS] = {1, 1, 1};
    struct coll_program_options opt = {.use_counters = 1,
                                       .max_count = 100000,
                                       .form_names = form_names,
                                       .form_enabled = form_enabled,
                                       .num_forms = NUM_FORMS};
    int max_count;
    int small_periodic = -1; /* -1: by --expect-component */
    long skipped_total;
    struct topo topos[TOPO_MAX];
    int ntopos, lists_wrong;

    if (!coll_program_start(PROGRAM, "[--small-periodic=check|skip]", &argc, &argv, &opt,
                            read_small_periodic, &small_periodic)) {
        return 2;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    use_counters = opt.use_counters;
    verbose = opt.verbose;
    max_count = opt.max_count;
    if (world_size > 8) { /* the graph builders' arrays */
        if (0 == world_rank) {
            fprintf(stderr, PROGRAM ": at most 8 ranks\n");
        }
        MPI_Finalize();
        return 2;
    }
    skip_small_periodic = small_periodic < 0 ? !use_counters : !small_periodic;
    break_reference = coll_program_break("COLL_NEIGHBOR_BREAK");

    create_types();
    ntopos = topos_create(topos, &lists_wrong);
    checks += ntopos;
    if (lists_wrong > 0) {
        FAIL_AT("the topologies", "MPI's neighbour lists differ from the specification's on "
                "%d of them", lists_wrong);
    }

    if (use_counters) {
        pvar_families_open(&counters, family_names, NUM_FAMILIES, PROGRAM);
    }
    for (int ti = 0; ti < ntopos; ++ti) {
        for (int f = 0; f < NUM_FAMILIES; ++f) {
            int types[2] = {T_INT, T_HOLES}, ntypes = ALLTOALLW == f ? 1 : 2;

            if (ALLTOALLW == f) {
                types[0] = T_MIXED;
            }
            for (int k = 0; k < ntypes; ++k) {
                for (size_t ni = 0; ni < sizeof(counts) / sizeof(counts[0]); ++ni) {
                    if (counts[ni] > max_count) {
                        continue;
                    }
                    for (int m = 0; m < NUM_FORMS; ++m) {
                        struct call c = {
                            .family = (enum family) f,
                            .form = (enum form) m,
                            .t = &topos[ti],
                            .type = types[k],
                            .count = counts[ni],
                        };

                        if (form_enabled[m]) {
                            run_case(&c);
                        }
                    }
                }
            }
        }
    }
    if (use_counters) {
        pvar_families_close(&counters);
    }
    topos_free(topos, ntopos);
    MPI_Type_free(&ttypes[T_PAIR].dt);
    MPI_Type_free(&ttypes[T_HOLES].dt);

    MPI_Reduce(&skipped, &skipped_total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 == world_rank && skipped_total > 0) {
        printf(PROGRAM ": skipped %ld calls (nonblocking and persistent alltoall(v,w) on "
               "periodic dimensions of size 1 or 2: --small-periodic=skip)\n", skipped_total);
    }
    return coll_program_finish(PROGRAM, checks, failures,
                               break_reference ? "; COLL_NEIGHBOR_BREAK=1 corrupted a reference"
                                               : "");
}
