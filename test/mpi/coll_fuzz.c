/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_fuzz: a differential fuzzer of the collectives.
 *
 *   mpirun -np N coll_fuzz [--seed S] [--seconds T] [--steps K] [--soak]
 *                          [--max-bytes B] [--replay-step K] [--max-outstanding N]
 *                          [--only FAMILY[,FAMILY...]] [--forms blocking,nonblocking,persistent]
 *                          [--comms KIND[,KIND...]]
 *                          [--expect-component=yes|no] [--verbose]
 *
 * A run is a sequence of steps. Step K draws, from a generator seeded by (S, K)
 * alone and the same on every rank, up to 40 actions: start a collective of a
 * random family in a random form (blocking; nonblocking, up to 32 outstanding;
 * persistent, started again and again), on one of a pool of communicators made at
 * the start (world, a dup, splits with reversed and interleaved keys, a subset, a
 * single process, two intercommunicators, Cartesian and graph topologies for the
 * neighbourhood collectives), or complete what is outstanding (MPI_Wait,
 * MPI_Waitall, MPI_Waitany, MPI_Waitsome, MPI_Test and MPI_Testall loops, each
 * rank in its own order). Each call draws its own arguments from a generator of
 * (S, K, call): counts skewed toward small (0 to --max-bytes, default 4 MiB a
 * buffer), predefined and derived datatypes (contiguous, vector, indexed with
 * blocks out of order, struct, resized; a different one of the same type
 * signature on each side of a transfer where MPI allows it, MPI_Type_dup'd and
 * freed right after a nonblocking or persistent call's start), predefined
 * operations and user-defined ones (commutative, non-commutative: the first
 * non-zero, and 2x2 matrix products mod 2^32), random roots, MPI_IN_PLACE where
 * the standard allows it.
 *
 * Every rank computes what every call must leave in its receive buffer (data are
 * a hash of the call, the sender and the element; reductions use small integers,
 * exact in floating point too) and checks every byte of it, the holes of the
 * datatypes and 64 guard bytes on each side included, and that the send buffer
 * was not written. At the end of each step the MPI_T counters of coll/async must
 * show every call handled natively (--expect-component=no: not checked).
 *
 * On a wrong result, an error returned, or a hang (a watchdog at --seconds + 300 s),
 * a rank prints the seed, the step and the call (family, form, counts, datatypes,
 * operation, root, communicator) and the job aborts with a non-zero status.
 * `--seed S --replay-step K` runs step K alone (steps do not depend on each other);
 * `--seed S --steps K+1` runs the same sequence up to it. --soak runs until
 * stopped (or --seconds), one line every 100 steps. COLL_FUZZ_BREAK=1 corrupts one
 * reference, so test/run can prove the fuzzer fails.
 */

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi4_persistent.h"
#include "pvar_counter.h"

#define PROGRAM "coll_fuzz"
#define GUARD 64
#define SENTINEL 0xA5
#define SEND_FILL 0x5A
#define MAX_CALLS 40 /* actions per step */

/* ------------------------------------------------------------------ options */

static uint64_t opt_seed;
static double opt_seconds = 10;
static long opt_steps = -1;
static int opt_soak;
static size_t opt_max_bytes = 4u << 20;
static long opt_replay = -1;
static int opt_max_outstanding = 32;
static int opt_counters = 1;
static int opt_verbose;
static int opt_break;
static size_t mem_limit = 64u << 20; /* buffers of outstanding calls, per rank */

static int world_rank, world_size;

/* ------------------------------------------------------------------ random */

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t hash5(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
    return mix64(mix64(mix64(mix64(mix64(a) ^ b) ^ c) ^ d) ^ e);
}

struct rng {
    uint64_t s;
};

static uint64_t rnext(struct rng *r)
{
    r->s += 0x9e3779b97f4a7c15ull;
    return mix64(r->s);
}

static int rint_(struct rng *r, int n)
{
    return n <= 1 ? 0 : (int) (rnext(r) % (uint64_t) n);
}

static int chance(struct rng *r, int percent)
{
    return rint_(r, 100) < percent;
}

/* ------------------------------------------------------------------ types */

enum bkind { BK_INT, BK_UINT, BK_FLOAT, BK_MOVE };

struct base {
    MPI_Datatype t;
    int size;
    enum bkind kind;
    const char *name;
};

static struct base bases[] = {
    {MPI_SIGNED_CHAR, 1, BK_INT, "signed_char"}, {MPI_UNSIGNED_CHAR, 1, BK_UINT, "unsigned_char"},
    {MPI_SHORT, 2, BK_INT, "short"},             {MPI_INT, 4, BK_INT, "int"},
    {MPI_UNSIGNED, 4, BK_UINT, "unsigned"},      {MPI_LONG, 8, BK_INT, "long"},
    {MPI_UINT64_T, 8, BK_UINT, "uint64"},        {MPI_FLOAT, 4, BK_FLOAT, "float"},
    {MPI_DOUBLE, 8, BK_FLOAT, "double"},         {MPI_CHAR, 1, BK_MOVE, "char"},
    {MPI_BYTE, 1, BK_MOVE, "byte"},
};
#define NBASES ((int) (sizeof(bases) / sizeof(bases[0])))
#define BASE_UNSIGNED 4

enum { SH_PREDEF, SH_CONTIG, SH_VECTOR, SH_INDEXED, SH_STRUCT, SH_RESIZED, NSHAPES };
static const char *const shape_names[] = {"", "contig3", "vector", "indexed", "struct",
                                          "resized"};

struct tdesc {
    MPI_Datatype t;
    int base, shape, n;
    MPI_Aint extent;
    MPI_Aint offs[8];
    MPI_Aint end; /* one past the last byte of an instance's elements */
    char name[48];
};

static struct tdesc types[NBASES * NSHAPES + 1];
static int ntypes;
static int mat4_type; /* contiguous(4, MPI_UNSIGNED): the matrices' type */

static int type_at(int base, int shape)
{
    return base * NSHAPES + shape;
}

static void make_type(int base, int shape)
{
    struct tdesc *d = &types[type_at(base, shape)];
    MPI_Datatype b = bases[base].t, t = MPI_DATATYPE_NULL, tmp;
    MPI_Aint sz = bases[base].size, lb;
    static const int vec[] = {0, 1, 3, 4, 6, 7};
    static const int idx[] = {5, 6, 0, 2, 3, 4};
    static const int str[] = {8, 0, 1, 3};
    int bl3[3] = {2, 1, 3}, di3[3] = {5, 0, 2};

    d->base = base;
    d->shape = shape;
    switch (shape) {
    case SH_PREDEF:
        t = b;
        d->n = 1;
        d->offs[0] = 0;
        break;
    case SH_CONTIG:
        MPI_Type_contiguous(3, b, &t);
        d->n = 3;
        for (int i = 0; i < 3; ++i) d->offs[i] = i * sz;
        break;
    case SH_VECTOR:
        MPI_Type_vector(3, 2, 3, b, &t);
        d->n = 6;
        for (int i = 0; i < 6; ++i) d->offs[i] = vec[i] * sz;
        break;
    case SH_INDEXED:
        MPI_Type_indexed(3, bl3, di3, b, &t);
        d->n = 6;
        for (int i = 0; i < 6; ++i) d->offs[i] = idx[i] * sz;
        break;
    case SH_STRUCT: {
        int bl[3] = {1, 2, 1};
        MPI_Aint dd[3] = {8 * sz, 0, 3 * sz};
        MPI_Datatype ts[3] = {b, b, b};
        MPI_Type_create_struct(3, bl, dd, ts, &t);
        d->n = 4;
        for (int i = 0; i < 4; ++i) d->offs[i] = str[i] * sz;
        break;
    }
    default:
        MPI_Type_vector(2, 1, 2, b, &tmp);
        MPI_Type_create_resized(tmp, 0, 5 * sz, &t);
        MPI_Type_free(&tmp);
        d->n = 2;
        d->offs[0] = 0;
        d->offs[1] = 2 * sz;
        break;
    }
    if (SH_PREDEF != shape) {
        MPI_Type_commit(&t);
    }
    d->t = t;
    MPI_Type_get_extent(t, &lb, &d->extent);
    d->end = 0;
    for (int i = 0; i < d->n; ++i) {
        if (d->offs[i] + sz > d->end) d->end = d->offs[i] + sz;
    }
    snprintf(d->name, sizeof(d->name), "%s%s%s", SH_PREDEF == shape ? "" : shape_names[shape],
             SH_PREDEF == shape ? "" : "(", bases[base].name);
    if (SH_PREDEF != shape) strcat(d->name, ")");
}

static void make_types(void)
{
    struct tdesc *d;

    for (int b = 0; b < NBASES; ++b) {
        for (int s = 0; s < NSHAPES; ++s) make_type(b, s);
    }
    mat4_type = ntypes = NBASES * NSHAPES;
    d = &types[mat4_type];
    MPI_Type_contiguous(4, MPI_UNSIGNED, &d->t);
    MPI_Type_commit(&d->t);
    d->base = BASE_UNSIGNED;
    d->shape = SH_CONTIG;
    d->n = 4;
    for (int i = 0; i < 4; ++i) d->offs[i] = 4 * i;
    d->extent = 16;
    d->end = 16;
    strcpy(d->name, "mat2x2(unsigned)");
    ++ntypes;
}

/* Duplicates in use (a nonblocking call's, freed right after its start): the
 * handle the user operation may be called with, and what it stands for. */
#define MAX_DUPS 4096
static struct {
    MPI_Datatype t;
    int type;
} dups[MAX_DUPS];
static int ndups;

static int type_of_handle(MPI_Datatype t)
{
    for (int i = 0; i < ntypes; ++i) {
        if (types[i].t == t) return i;
    }
    for (int i = ndups - 1; i >= 0; --i) { /* the newest: a freed one's address may be reused */
        if (dups[i].t == t) return dups[i].type;
    }
    return -1;
}

/* ------------------------------------------------------------------ values */

static int64_t load(int base, const char *p)
{
    switch (bases[base].size * 10 + bases[base].kind) {
    case 10 + BK_INT: return *(const signed char *) p;
    case 10 + BK_UINT: case 10 + BK_MOVE: return *(const unsigned char *) p;
    case 20 + BK_INT: { short v; memcpy(&v, p, 2); return v; }
    case 40 + BK_INT: { int v; memcpy(&v, p, 4); return v; }
    case 40 + BK_UINT: { unsigned v; memcpy(&v, p, 4); return v; }
    case 40 + BK_FLOAT: { float v; memcpy(&v, p, 4); return (int64_t) v; }
    case 80 + BK_INT: { long v; memcpy(&v, p, 8); return v; }
    case 80 + BK_UINT: { uint64_t v; memcpy(&v, p, 8); return (int64_t) v; }
    default: { double v; memcpy(&v, p, 8); return (int64_t) v; }
    }
}

static void store(int base, char *p, int64_t x)
{
    switch (bases[base].size * 10 + bases[base].kind) {
    case 10 + BK_INT: case 10 + BK_UINT: case 10 + BK_MOVE: *p = (char) x; break;
    case 20 + BK_INT: { short v = (short) x; memcpy(p, &v, 2); break; }
    case 40 + BK_INT: { int v = (int) x; memcpy(p, &v, 4); break; }
    case 40 + BK_UINT: { unsigned v = (unsigned) x; memcpy(p, &v, 4); break; }
    case 40 + BK_FLOAT: { float v = (float) x; memcpy(p, &v, 4); break; }
    case 80 + BK_INT: { long v = (long) x; memcpy(p, &v, 8); break; }
    case 80 + BK_UINT: { uint64_t v = (uint64_t) x; memcpy(p, &v, 8); break; }
    default: { double v = (double) x; memcpy(p, &v, 8); break; }
    }
}

enum {
    OP_SUM, OP_PROD, OP_MAX, OP_MIN, OP_BAND, OP_BOR, OP_BXOR, OP_LAND, OP_LOR, OP_LXOR,
    OP_USUM, OP_UFIRST, OP_UMAT, NOPS, OP_MOVE = NOPS
};
static const char *const op_names[] = {"MPI_SUM",  "MPI_PROD", "MPI_MAX",  "MPI_MIN",
                                       "MPI_BAND", "MPI_BOR",  "MPI_BXOR", "MPI_LAND",
                                       "MPI_LOR",  "MPI_LXOR", "user sum (commutative)",
                                       "user first-non-zero (non-commutative)",
                                       "user 2x2 matrix product (non-commutative)", "-"};
static MPI_Op ops[NOPS];

/* The value of element k of the stream keyed key, for op (OP_MOVE: data movement). */
static int64_t gen(uint64_t key, size_t k, int op, int base, int nranks)
{
    uint64_t h = mix64(key ^ (k * 0xd6e8feb86659fd93ull));
    int uns = BK_UINT == bases[base].kind;

    switch (op) {
    case OP_SUM: case OP_USUM: return uns ? (int64_t) (h % 9) : (int64_t) (h % 9) - 4;
    case OP_PROD:
        if (nranks <= 6) return uns ? 1 + (int64_t) (h % 2) : (int64_t[]){-1, 1, 2}[h % 3];
        return uns || (h & 1) ? 1 : -1;
    case OP_MAX: case OP_MIN: return uns ? (int64_t) (h % 100) : (int64_t) (h % 101) - 50;
    case OP_BAND: case OP_BOR: case OP_BXOR: return (int64_t) (h % 128);
    case OP_LAND: case OP_LOR: case OP_LXOR: return (int64_t) (h % 3);
    case OP_UFIRST: return h % 5 < 3 ? 0 : 1 + (int64_t) (h % 50);
    case OP_UMAT: return (int64_t) (h % 4);
    default: return (int64_t) (h % 100);
    }
}

/* a op b, a from the lower ranks. */
static int64_t comb(int op, int64_t a, int64_t b)
{
    switch (op) {
    case OP_SUM: case OP_USUM: return a + b;
    case OP_PROD: return a * b;
    case OP_MAX: return a > b ? a : b;
    case OP_MIN: return a < b ? a : b;
    case OP_BAND: return a & b;
    case OP_BOR: return a | b;
    case OP_BXOR: return a ^ b;
    case OP_LAND: return a && b;
    case OP_LOR: return a || b;
    case OP_LXOR: return !a != !b;
    default: return a ? a : b; /* OP_UFIRST */
    }
}

static void mat_mul(uint32_t r[4], const uint32_t a[4], const uint32_t b[4])
{
    uint32_t t[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                     a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    memcpy(r, t, sizeof(t));
}

static int user_op_errors;

static void user_fn(void *in, void *inout, int *len, MPI_Datatype *dt, int op)
{
    int t = type_of_handle(*dt);
    const struct tdesc *d;

    if (t < 0 || (OP_UMAT == op) != (t == mat4_type)) {
        ++user_op_errors;
        return;
    }
    d = &types[t];
    for (int i = 0; i < *len; ++i) {
        char *a = (char *) in + (MPI_Aint) i * d->extent, *b = (char *) inout + (MPI_Aint) i * d->extent;
        if (OP_UMAT == op) {
            uint32_t x[4], y[4];
            memcpy(x, a, 16);
            memcpy(y, b, 16);
            mat_mul(y, x, y);
            memcpy(b, y, 16);
            continue;
        }
        for (int e = 0; e < d->n; ++e) {
            store(d->base, b + d->offs[e],
                  comb(op, load(d->base, a + d->offs[e]), load(d->base, b + d->offs[e])));
        }
    }
}

static void fn_usum(void *a, void *b, int *n, MPI_Datatype *t) { user_fn(a, b, n, t, OP_USUM); }
static void fn_ufirst(void *a, void *b, int *n, MPI_Datatype *t) { user_fn(a, b, n, t, OP_UFIRST); }
static void fn_umat(void *a, void *b, int *n, MPI_Datatype *t) { user_fn(a, b, n, t, OP_UMAT); }

static void make_ops(void)
{
    MPI_Op pre[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND,
                    MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR};

    memcpy(ops, pre, sizeof(pre));
    MPI_Op_create(fn_usum, 1, &ops[OP_USUM]);
    MPI_Op_create(fn_ufirst, 0, &ops[OP_UFIRST]);
    MPI_Op_create(fn_umat, 0, &ops[OP_UMAT]);
}

/* ------------------------------------------------------------------ communicators */

enum {
    C_WORLD, C_DUP, C_PARITY, C_REVERSED, C_INTERLEAVED, C_SUBSET, C_SELF, C_INTER_THIRDS,
    C_INTER_HALVES, C_CART1, C_CART2, C_GRAPH, C_DIST, NCOMMS
};
static const char *const comm_names[] = {
    "world", "dup(world)", "split(rank%2)", "split(reversed keys)", "split(interleaved keys)",
    "split(ranks 1..n-1)", "split(one rank each)", "intercomm(rank%3==0 | others)",
    "intercomm(halves)", "cart 1-D periodic", "cart 2-D", "graph", "dist graph adjacent"};

struct topo {
    int nout, nin;
    int *out, *in;     /* comm ranks, MPI_PROC_NULL where none */
    int *in_from_slot; /* in-slot k: the sender's out-slot whose block arrives */
};

struct cview {
    MPI_Comm comm; /* MPI_COMM_NULL: this rank is not in it */
    int kind, inter, group, rank, size[2], n_topo;
    struct topo *topo; /* every rank's, for topologies; NULL otherwise */
};

static struct cview views[NCOMMS];

static int lsize(const struct cview *v) { return v->size[v->group]; }
static int rgroup(const struct cview *v) { return v->inter ? 1 - v->group : v->group; }
static int rsize(const struct cview *v) { return v->size[rgroup(v)]; }

static void set_view(struct cview *v, int kind, MPI_Comm comm)
{
    v->kind = kind;
    v->comm = comm;
    if (MPI_COMM_NULL == comm) return;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_test_inter(comm, &v->inter);
    MPI_Comm_rank(comm, &v->rank);
    if (v->inter) {
        int l, r;
        MPI_Comm_size(comm, &l);
        MPI_Comm_remote_size(comm, &r);
        v->size[v->group] = l;
        v->size[1 - v->group] = r;
    } else {
        MPI_Comm_size(comm, &v->size[0]);
        v->size[1] = v->size[0];
    }
}

static int occurrence(const int *list, int upto, int x)
{
    int m = 0;
    for (int i = 0; i < upto; ++i) m += list[i] == x;
    return m;
}

static int nth_slot(const int *list, int len, int x, int m)
{
    for (int i = 0; i < len; ++i) {
        if (list[i] == x && 0 == m--) return i;
    }
    return -1;
}

/* Fills in_from_slot of every rank from the lists: the m-th occurrence of j in
 * i's in-list pairs with the m-th occurrence of i in j's out-list. */
static void pair_lists(struct topo *t, int n)
{
    for (int i = 0; i < n; ++i) {
        t[i].in_from_slot = malloc(sizeof(int) * (size_t) (t[i].nin + 1));
        for (int k = 0; k < t[i].nin; ++k) {
            int j = t[i].in[k];
            t[i].in_from_slot[k] =
                j < 0 ? -1 : nth_slot(t[j].out, t[j].nout, i, occurrence(t[i].in, k, j));
        }
    }
}

static void shuffle(struct rng *r, int *a, int n)
{
    for (int i = n - 1; i > 0; --i) {
        int j = rint_(r, i + 1), x = a[i];
        a[i] = a[j];
        a[j] = x;
    }
}

static void make_cart(struct cview *v, int kind, struct rng *r)
{
    int n = world_size, nd = C_CART1 == kind ? 1 : 2, dims[2] = {n, 1}, periods[2] = {1, 0};
    MPI_Comm comm;

    if (2 == nd) {
        for (int a = 2; a <= n; ++a) {
            if (0 == n % a) { dims[0] = a; dims[1] = n / a; break; }
        }
        periods[0] = rint_(r, 2);
        periods[1] = rint_(r, 2);
    }
    MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, 0, &comm);
    set_view(v, kind, comm);
    v->topo = calloc((size_t) n, sizeof(struct topo));
    for (int i = 0; i < n; ++i) {
        struct topo *t = &v->topo[i];
        int c[2] = {2 == nd ? i / dims[1] : i, 2 == nd ? i % dims[1] : 0};
        t->nout = t->nin = 2 * nd;
        t->out = malloc(sizeof(int) * 4);
        t->in = malloc(sizeof(int) * 4);
        t->in_from_slot = malloc(sizeof(int) * 4);
        for (int d = 0; d < nd; ++d) {
            for (int s = 0; s < 2; ++s) {
                int cc[2] = {c[0], c[1]}, x = cc[d] + (s ? 1 : -1);
                if (x < 0 || x >= dims[d]) {
                    if (!periods[d]) { t->out[2 * d + s] = t->in[2 * d + s] = MPI_PROC_NULL; continue; }
                    x = (x + dims[d]) % dims[d];
                }
                cc[d] = x;
                t->out[2 * d + s] = t->in[2 * d + s] = 2 == nd ? cc[0] * dims[1] + cc[1] : cc[0];
                /* MPI 4.0: the block sent the negative way arrives on the receiver's
                 * positive side, and the other way round. */
                t->in_from_slot[2 * d + s] = 2 * d + (1 - s);
            }
        }
    }
}

static void make_graph(struct cview *v, struct rng *r)
{
    int n = world_size, edges = n + rint_(r, n + 1), *index, *flat, total = 0;
    int *ea = malloc(sizeof(int) * (size_t) edges), *eb = malloc(sizeof(int) * (size_t) edges);
    MPI_Comm comm;

    v->topo = calloc((size_t) n, sizeof(struct topo));
    for (int i = 0; i < n; ++i) {
        v->topo[i].out = malloc(sizeof(int) * (size_t) (2 * edges + 1));
    }
    for (int e = 0; e < edges; ++e) {
        ea[e] = rint_(r, n);
        eb[e] = chance(r, 10) ? ea[e] : rint_(r, n);
        v->topo[ea[e]].out[v->topo[ea[e]].nout++] = eb[e];
        if (ea[e] != eb[e]) v->topo[eb[e]].out[v->topo[eb[e]].nout++] = ea[e];
    }
    index = malloc(sizeof(int) * (size_t) n);
    flat = malloc(sizeof(int) * (size_t) (2 * edges + 1));
    for (int i = 0; i < n; ++i) {
        struct topo *t = &v->topo[i];
        shuffle(r, t->out, t->nout);
        t->nin = t->nout;
        t->in = t->out;
        memcpy(flat + total, t->out, sizeof(int) * (size_t) t->nout);
        total += t->nout;
        index[i] = total;
    }
    pair_lists(v->topo, n);
    MPI_Graph_create(MPI_COMM_WORLD, n, index, flat, 0, &comm);
    set_view(v, C_GRAPH, comm);
    free(index), free(flat), free(ea), free(eb);
}

static void make_dist_graph(struct cview *v, struct rng *r)
{
    int n = world_size, edges = rint_(r, 2 * n + 2);
    MPI_Comm comm;
    struct topo *me;

    v->topo = calloc((size_t) n + 1, sizeof(struct topo));
    for (int i = 0; i < n; ++i) {
        v->topo[i].out = malloc(sizeof(int) * (size_t) (edges + 1));
        v->topo[i].in = malloc(sizeof(int) * (size_t) (edges + 1));
    }
    for (int e = 0; e < edges; ++e) {
        int a = rint_(r, n), b = rint_(r, n);
        v->topo[a].out[v->topo[a].nout++] = b;
        v->topo[b].in[v->topo[b].nin++] = a;
    }
    for (int i = 0; i < n; ++i) {
        shuffle(r, v->topo[i].out, v->topo[i].nout);
        shuffle(r, v->topo[i].in, v->topo[i].nin);
    }
    pair_lists(v->topo, n);
    me = &v->topo[world_rank];
    /* MPI_UNWEIGHTED through a variable: GCC reads Open MPI's ((int *) 2) as an
     * array of size 0 and warns */
    {
        int *volatile unweighted = MPI_UNWEIGHTED;
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, me->nin, me->in, unweighted, me->nout,
                                       me->out, unweighted, MPI_INFO_NULL, 0, &comm);
    }
    set_view(v, C_DIST, comm);
}

static void make_comms(void)
{
    struct rng r = {hash5(opt_seed, 0xC0, 0, 0, 0)};
    int n = world_size, me = world_rank;
    MPI_Comm c, local;

    set_view(&views[C_WORLD], C_WORLD, MPI_COMM_WORLD);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    set_view(&views[C_DUP], C_DUP, c);
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &c);
    set_view(&views[C_PARITY], C_PARITY, c);
    MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, &c);
    set_view(&views[C_REVERSED], C_REVERSED, c);
    MPI_Comm_split(MPI_COMM_WORLD, 0, (me % 2) * n + me, &c);
    set_view(&views[C_INTERLEAVED], C_INTERLEAVED, c);
    MPI_Comm_split(MPI_COMM_WORLD, me > 0 || n == 1 ? 0 : MPI_UNDEFINED, n - me, &c);
    set_view(&views[C_SUBSET], C_SUBSET, c);
    MPI_Comm_split(MPI_COMM_WORLD, me, 0, &c);
    set_view(&views[C_SELF], C_SELF, c);
    for (int k = C_INTER_THIRDS; k <= C_INTER_HALVES; ++k) {
        int g = C_INTER_THIRDS == k ? me % 3 != 0 : me >= n / 2, leader;
        views[k].kind = k;
        views[k].comm = MPI_COMM_NULL;
        if (n < 2) continue;
        /* the other group's leader (its local rank 0), by world rank: the thirds'
         * groups are split with reversed keys, so their highest */
        if (C_INTER_THIRDS == k) {
            leader = -1;
            for (int i = 0; i < n; ++i) if ((i % 3 != 0) != g) leader = i;
        } else {
            leader = g ? 0 : n / 2;
        }
        MPI_Comm_split(MPI_COMM_WORLD, g, C_INTER_THIRDS == k ? n - me : me, &local);
        views[k].group = g;
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, leader, 77 + k, &c);
        MPI_Comm_free(&local);
        set_view(&views[k], k, c);
    }
    make_cart(&views[C_CART1], C_CART1, &r);
    make_cart(&views[C_CART2], C_CART2, &r);
    make_graph(&views[C_GRAPH], &r);
    make_dist_graph(&views[C_DIST], &r);
}

/* ------------------------------------------------------------------ families */

enum {
    F_ALLGATHER, F_ALLGATHERV, F_ALLREDUCE, F_ALLTOALL, F_ALLTOALLV, F_ALLTOALLW, F_BARRIER,
    F_BCAST, F_EXSCAN, F_GATHER, F_GATHERV, F_REDUCE, F_REDUCE_SCATTER_BLOCK, F_REDUCE_SCATTER,
    F_SCAN, F_SCATTER, F_SCATTERV, F_NALLGATHER, F_NALLGATHERV, F_NALLTOALL, F_NALLTOALLV,
    F_NALLTOALLW, NFAMILIES
};
static const char *const family_names[NFAMILIES] = {
    "allgather", "allgatherv", "allreduce", "alltoall", "alltoallv", "alltoallw",
    "barrier", "bcast", "exscan", "gather", "gatherv", "reduce", "reduce_scatter_block",
    "reduce_scatter", "scan", "scatter", "scatterv", "neighbor_allgather",
    "neighbor_allgatherv", "neighbor_alltoall", "neighbor_alltoallv", "neighbor_alltoallw"};
enum { FORM_BLOCKING, FORM_NONBLOCKING, FORM_PERSISTENT, NFORMS };
static const char *const form_names[NFORMS] = {"blocking", "nonblocking", "persistent"};
static int family_enabled[NFAMILIES], form_enabled[NFORMS];
static int comm_enabled[NCOMMS];
/* --comms names them so */
static const char *const comm_short[NCOMMS] = {"world", "dup", "parity", "reversed", "interleaved",
                                               "subset", "self", "inter_thirds", "inter_halves",
                                               "cart1", "cart2", "graph", "dist_graph"};

static int is_reduction(int f)
{
    return F_ALLREDUCE == f || F_REDUCE == f || F_REDUCE_SCATTER == f
           || F_REDUCE_SCATTER_BLOCK == f || F_SCAN == f || F_EXSCAN == f;
}

static int is_neighbor(int f) { return f >= F_NALLGATHER; }


/* ------------------------------------------------------------------ calls */

/* A block of typed data in a buffer: count instances of a type from byte disp. */
struct blk {
    int type, count;
    MPI_Aint disp;
};

/* What a block holds: the stream of (group, rank, id) from element first, or the
 * fold over ranks r0..r1 of group's vectors from element first. */
enum { X_NONE, X_COPY, X_FOLD };
struct fill {
    struct blk b;
    int what, group, rank, id, r0, r1;
    size_t first;
};

struct call {
    int id, family, form, comm, op, root, root_group, in_place, dup;
    uint64_t uid;
    int starts, start_no, active, certain;
    MPI_Request req;
    const struct cview *v;
    char desc[320];
    /* arguments */
    int scount, rcount, stype, rtype;
    int *scounts, *sdispls, *rcounts, *rdispls, *stypes, *rtypes;
    MPI_Aint *swdispls, *rwdispls;
    MPI_Datatype *sdt, *rdt, st, rt;
    int sroot; /* the root argument as passed */
    /* buffers */
    char *sraw, *rraw, *expect;
    size_t sbytes, rbytes;
    uint64_t scheck;
    int nsend, nrecv;
    struct fill *send, *recv; /* send: into sraw; recv: expectations, and in-place inputs */
    struct fill *inputs;      /* written into the receive buffer before the call */
    int ninputs;
    size_t care_from, care_to; /* bytes of the receive buffer [from, to) not checked */
    size_t mem;
};

static long step_no;
static struct call *current; /* for the watchdog */
static size_t mem_outstanding;
static long checks, calls_made;

static void die(const struct call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
/* The report is composed whole and written once: mpirun prints MPI_Abort's banner
 * on another channel, and a report written piecemeal was seen cut in two by it. */
static void die(const struct call *c, const char *fmt, ...)
{
    char line[2048];
    size_t n = 0;
    va_list ap;

#define APPEND(...) (n += (size_t) snprintf(line + n, n < sizeof(line) ? sizeof(line) - n : 0, __VA_ARGS__))
    APPEND("%s: FAIL rank %d: seed %llu step %ld", PROGRAM, world_rank,
           (unsigned long long) opt_seed, step_no);
    if (NULL != c) APPEND(" call %d (start %d): %s", c->id, c->start_no, c->desc);
    APPEND(": ");
    if (n < sizeof(line)) {
        va_start(ap, fmt);
        n += (size_t) vsnprintf(line + n, sizeof(line) - n, fmt, ap);
        va_end(ap);
    }
    APPEND("\n%s: replay: --seed %llu --replay-step %ld (or --seed %llu --steps %ld)\n", PROGRAM,
           (unsigned long long) opt_seed, step_no, (unsigned long long) opt_seed, step_no + 1);
#undef APPEND
    if (n >= sizeof(line)) n = sizeof(line) - 1;
    (void) !write(2, line, n);
    MPI_Abort(MPI_COMM_WORLD, 3);
    exit(3);
}

static void mpi_check(const struct call *c, int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (MPI_SUCCESS != rc) {
        MPI_Error_string(rc, msg, &len);
        die(c, "%s returned %d (%s)", what, rc, msg);
    }
}

static size_t blk_span(const struct blk *b)
{
    const struct tdesc *d = &types[b->type];
    return b->count <= 0 ? 0 : (size_t) ((b->count - 1) * d->extent + d->end);
}

static size_t elems(const struct blk *b)
{
    return (size_t) b->count * (size_t) types[b->type].n;
}

static uint64_t key_of(const struct call *c, int g, int r, int id)
{
    return hash5(c->uid, (uint64_t) c->start_no, (uint64_t) g, (uint64_t) r, (uint64_t) id);
}

static char *elem_at(char *buf, const struct blk *b, size_t k)
{
    const struct tdesc *d = &types[b->type];
    return buf + b->disp + (MPI_Aint) (k / (size_t) d->n) * d->extent + d->offs[k % (size_t) d->n];
}

static int op_of(const struct call *c)
{
    return is_reduction(c->family) ? c->op : OP_MOVE;
}

static int vranks(const struct call *c)
{
    return c->v->size[0] > c->v->size[1] ? c->v->size[0] : c->v->size[1];
}

static void put(const struct call *c, char *buf, const struct fill *f)
{
    int base = types[f->b.type].base, op = op_of(c), nr = vranks(c);
    size_t n = elems(&f->b);

    if (X_COPY == f->what) {
        uint64_t key = key_of(c, f->group, f->rank, f->id);
        for (size_t k = 0; k < n; ++k) store(base, elem_at(buf, &f->b, k), gen(key, f->first + k, op, base, nr));
        return;
    }
    if (X_FOLD != f->what) return;
    if (OP_UMAT == op) {
        for (size_t k = 0; k < n; k += 4) {
            uint32_t acc[4], x[4];
            for (int r = f->r0; r <= f->r1; ++r) {
                uint64_t key = key_of(c, f->group, r, 0);
                for (int e = 0; e < 4; ++e) x[e] = (uint32_t) gen(key, f->first + k + (size_t) e, op, base, nr);
                if (r == f->r0) memcpy(acc, x, sizeof(x)); else mat_mul(acc, acc, x);
            }
            for (int e = 0; e < 4; ++e) store(base, elem_at(buf, &f->b, k + (size_t) e), acc[e]);
        }
        return;
    }
    for (size_t k = 0; k < n; ++k) {
        int64_t acc = 0;
        for (int r = f->r0; r <= f->r1; ++r) {
            int64_t x = gen(key_of(c, f->group, r, 0), f->first + k, op, base, nr);
            acc = r == f->r0 ? x : comb(op, acc, x);
        }
        store(base, elem_at(buf, &f->b, k), acc);
    }
}

static uint64_t checksum(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ (unsigned char) p[i]) * 1099511628211ull;
    return h;
}

/* Sets the buffers for the next start: send data, receive buffer (sentinel, the
 * in-place inputs), the expected image. */
static void prepare(struct call *c)
{
    memset(c->sraw, SEND_FILL, c->sbytes + 2 * GUARD);
    for (int i = 0; i < c->nsend; ++i) put(c, c->sraw + GUARD, &c->send[i]);
    c->scheck = checksum(c->sraw, c->sbytes + 2 * GUARD);
    memset(c->rraw, SENTINEL, c->rbytes + 2 * GUARD);
    for (int i = 0; i < c->ninputs; ++i) put(c, c->rraw + GUARD, &c->inputs[i]);
    memcpy(c->expect, c->rraw, c->rbytes + 2 * GUARD);
    for (int i = 0; i < c->nrecv; ++i) put(c, c->expect + GUARD, &c->recv[i]);
    if (opt_break && 0 == world_rank && 1 == step_no % 3 && c->rbytes > 0 && c->nrecv > 0) {
        c->expect[GUARD] ^= 1; /* COLL_FUZZ_BREAK: a wrong reference */
    }
}

static void verify(struct call *c)
{
    ++checks;
    if (c->care_to > c->care_from) {
        memcpy(c->expect + GUARD + c->care_from, c->rraw + GUARD + c->care_from,
               c->care_to - c->care_from);
    }
    if (0 != memcmp(c->expect, c->rraw, c->rbytes + 2 * GUARD)) {
        size_t i = 0;
        while (c->expect[i] == c->rraw[i]) ++i;
        die(c, "receive buffer byte %ld (of %zu, guard %d before) is 0x%02x, expected 0x%02x",
            (long) i - GUARD, c->rbytes, GUARD, (unsigned char) c->rraw[i],
            (unsigned char) c->expect[i]);
    }
    if (checksum(c->sraw, c->sbytes + 2 * GUARD) != c->scheck) {
        die(c, "the send buffer (or its guards) changed");
    }
    if (user_op_errors) {
        die(c, "the user-defined operation was called with a datatype it was not given");
    }
}

/* ---- argument drawing ---- */

static int gcd(int a, int b) { return 0 == b ? a : gcd(b, a % b); }
static int lcm(int a, int b) { return a / gcd(a, b) * b; }

/* Elements of a block, skewed toward small, at most max, a multiple of unit. */
static int pick_elems(struct rng *r, size_t max, int unit)
{
    int x = rint_(r, 100);
    size_t e;

    if (x < 30) e = (size_t) rint_(r, 9);
    else if (x < 60) e = 9 + (size_t) rint_(r, 248);
    else if (x < 85) e = 257 + (size_t) rint_(r, 8000);
    else if (x < 97) e = 8193 + (size_t) rint_(r, 120000);
    else e = (size_t) (rnext(r) % (max + 1));
    if (e > max) e = max;
    return (int) (e / (size_t) unit * (size_t) unit);
}

static int pick_base(struct rng *r, int op)
{
    for (;;) {
        int b = rint_(r, NBASES);
        enum bkind k = bases[b].kind;
        if (OP_MOVE == op || OP_USUM == op || OP_UFIRST == op) return b;
        if (BK_MOVE == k) continue;
        if (op >= OP_BAND && op <= OP_LXOR && BK_FLOAT == k) continue;
        return b;
    }
}

/* A type of base: predefined half the time, else one of the derived shapes. */
static int pick_type(struct rng *r, int base, int derived_ok)
{
    if (!derived_ok || chance(r, 45)) return type_at(base, SH_PREDEF);
    return type_at(base, 1 + rint_(r, NSHAPES - 1));
}

/* The element budget of one of nblocks blocks of type t. */
static size_t budget(int nblocks, int t)
{
    const struct tdesc *d = &types[t];
    size_t per = (size_t) (d->extent + d->n - 1) / (size_t) d->n;
    size_t e = opt_max_bytes / (size_t) (nblocks > 0 ? nblocks : 1) / (per ? per : 1);
    return e < 1 ? 1 : e;
}

static void *xcalloc(size_t n, size_t s)
{
    void *p = calloc(n ? n : 1, s ? s : 1);
    if (NULL == p) {
        fprintf(stderr, "%s: out of memory\n", PROGRAM);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* Places blocks one after another in a random order with gaps, in units of unit
 * bytes (the type's extent for the v-collectives, 1 for w); disp[i] in units. */
static size_t place(struct rng *r, struct blk *b, int n, MPI_Aint unit, int *disp_units)
{
    int *order = xcalloc((size_t) n, sizeof(int));
    size_t at = 0, end = 0;

    for (int i = 0; i < n; ++i) order[i] = i;
    shuffle(r, order, n);
    for (int i = 0; i < n; ++i) {
        struct blk *x = &b[order[i]];
        size_t span = blk_span(x);
        at += (size_t) rint_(r, 3) * (size_t) unit;
        at = (at + (size_t) unit - 1) / (size_t) unit * (size_t) unit;
        x->disp = (MPI_Aint) at;
        if (NULL != disp_units) disp_units[order[i]] = (int) (at / (size_t) unit);
        at += span;
        if (at > end) end = at;
    }
    free(order);
    return end;
}

static struct fill *add_fill(struct fill **list, int *n, struct blk b, int what, int group,
                             int rank, int id, size_t first)
{
    struct fill *f = &(*list)[(*n)++];
    *f = (struct fill){.b = b, .what = what, .group = group, .rank = rank, .id = id, .first = first};
    return f;
}

static size_t end_of(const struct blk *b) { return (size_t) b->disp + blk_span(b); }

/* Draws the call's arguments and this rank's part of them. */
static void plan(struct call *c, struct rng *r)
{
    const struct cview *v = c->v;
    int f = c->family, g = v->group, rg = rgroup(v), me = v->rank, n = lsize(v), m = rsize(v);
    int inter = v->inter, base, op = OP_MOVE, maxp = n > m ? n : m;
    int nb = 2 * (n + m) + 8;
    struct topo *tp = NULL;

    if (NULL != v->topo) {
        tp = &v->topo[me];
        nb += 2 * (tp->nin + tp->nout);
    }
    c->send = xcalloc((size_t) nb, sizeof(struct fill));
    c->recv = xcalloc((size_t) nb, sizeof(struct fill));
    c->inputs = xcalloc((size_t) nb, sizeof(struct fill));
    c->scounts = xcalloc((size_t) maxp + 1 + (tp ? (size_t) tp->nout : 0), sizeof(int));
    c->sdispls = xcalloc((size_t) maxp + 1 + (tp ? (size_t) tp->nout : 0), sizeof(int));
    c->stypes = xcalloc((size_t) maxp + 1 + (tp ? (size_t) tp->nout : 0), sizeof(int));
    c->rcounts = xcalloc((size_t) maxp + 1 + (tp ? (size_t) tp->nin : 0), sizeof(int));
    c->rdispls = xcalloc((size_t) maxp + 1 + (tp ? (size_t) tp->nin : 0), sizeof(int));
    c->rtypes = xcalloc((size_t) maxp + 1 + (tp ? (size_t) tp->nin : 0), sizeof(int));
    c->sroot = 0;

    c->sdt = xcalloc((size_t) maxp + 1 + (tp ? (size_t) tp->nout : 0), sizeof(MPI_Datatype));
    c->rdt = xcalloc((size_t) maxp + 1 + (tp ? (size_t) tp->nin : 0), sizeof(MPI_Datatype));
    c->swdispls = xcalloc((size_t) maxp + 1 + (tp ? (size_t) tp->nout : 0), sizeof(MPI_Aint));
    c->rwdispls = xcalloc((size_t) maxp + 1 + (tp ? (size_t) tp->nin : 0), sizeof(MPI_Aint));
    if (is_reduction(f)) {
        c->op = rint_(r, NOPS);
        op = c->op;
    }
    c->root_group = inter ? rint_(r, 2) : g;
    c->root = rint_(r, v->size[c->root_group]);
    base = pick_base(r, op);
    /* MPI_IN_PLACE: intracommunicators only, where MPI allows it. */
    c->in_place = !inter && chance(r, 25);
    /* a duplicate of a predefined type is no predefined type: not with MPI_SUM... */
    c->dup = c->form != FORM_BLOCKING && chance(r, 20) && (OP_MOVE == op || op >= OP_USUM);

    size_t sz_s = 0, sz_r = 0;
    struct blk b;
    int is_root = inter ? (g == c->root_group && me == c->root) : me == c->root;
    int in_root_group = g == c->root_group;
    /* The root argument: intra: the root; inter: MPI_ROOT / MPI_PROC_NULL in the
     * root's group, the root's rank in the other. */
    c->sroot = !inter ? c->root : in_root_group ? (is_root ? MPI_ROOT : MPI_PROC_NULL) : c->root;

    switch (f) {
    case F_BARRIER:
        c->in_place = 0;
        break;

    case F_BCAST: {
        /* one type and count on every rank (the known limit on mixed contiguity) */
        int t = pick_type(r, base, 1), e = pick_elems(r, budget(1, t), types[t].n);
        c->in_place = 0;
        b = (struct blk){t, e / types[t].n, 0};
        c->stype = c->rtype = t;
        c->scount = c->rcount = b.count;
        if (inter) {
            if (is_root) { add_fill(&c->send, &c->nsend, b, X_COPY, g, me, 0, 0); sz_s = end_of(&b); }
            else if (!in_root_group) { add_fill(&c->recv, &c->nrecv, b, X_COPY, rg, c->root, 0, 0); sz_r = end_of(&b); }
        } else if (is_root) {
            /* the root's buffer is sent and must not change: it is the receive
             * buffer, prepared as input */
            add_fill(&c->inputs, &c->ninputs, b, X_COPY, g, me, 0, 0);
            add_fill(&c->recv, &c->nrecv, b, X_COPY, g, me, 0, 0);
            sz_r = end_of(&b);
        } else {
            add_fill(&c->recv, &c->nrecv, b, X_COPY, g, c->root, 0, 0);
            sz_r = end_of(&b);
        }
        break;
    }

    case F_GATHER: case F_SCATTER: case F_ALLGATHER: case F_ALLTOALL: {
        /* per-rank send and receive types, one signature: the same pair on every
         * rank for allgather (the known limit on mixed contiguity) */
        /* the budget from sizes both groups know (m differs between them) */
        int uni = F_ALLGATHER == f, nblk = maxp;
        int st[2][64], rt[2][64], unit = 1, e, ts, tr;
        for (int gg = 0; gg < 2; ++gg) {
            for (int i = 0; i < v->size[gg] && i < 64; ++i) {
                st[gg][i] = pick_type(r, base, 1);
                rt[gg][i] = uni ? st[gg][i] : pick_type(r, base, 1);
                if (uni && (gg || i)) { st[gg][i] = st[0][0]; rt[gg][i] = rt[0][0]; }
                unit = lcm(unit, lcm(types[st[gg][i]].n, types[rt[gg][i]].n));
            }
        }
        if (uni && chance(r, 50)) { rt[0][0] = pick_type(r, base, 1); unit = lcm(unit, types[rt[0][0]].n);
            for (int gg = 0; gg < 2; ++gg) for (int i = 0; i < v->size[gg] && i < 64; ++i) rt[gg][i] = rt[0][0]; }
        e = pick_elems(r, budget(nblk, type_at(base, SH_VECTOR)), unit);
        ts = st[g][me];
        tr = rt[g][me];
        c->stype = ts, c->rtype = tr;
        c->scount = e / types[ts].n;
        c->rcount = e / types[tr].n;
        if (F_GATHER == f || F_SCATTER == f) {
            int gather = F_GATHER == f;
            int rootside = is_root, leaf = inter ? !in_root_group : 1;
            /* the root's blocks */
            int rtroot = rt[c->root_group][c->root], stroot = st[c->root_group][c->root];
            if (gather) { c->rtype = rtroot; c->rcount = e / types[rtroot].n; }
            else { c->stype = stroot; c->scount = e / types[stroot].n; }
            if (!inter && c->root != me) { c->in_place = 0; }
            if (rootside) {
                int t = gather ? c->rtype : c->stype, cnt = gather ? c->rcount : c->scount;
                for (int j = 0; j < m; ++j) {
                    b = (struct blk){t, cnt, (MPI_Aint) j * cnt * types[t].extent};
                    if (gather) {
                        if (!inter && j == me && c->in_place) {
                            add_fill(&c->inputs, &c->ninputs, b, X_COPY, g, me, 0, 0);
                            add_fill(&c->recv, &c->nrecv, b, X_COPY, g, me, 0, 0);
                        } else {
                            add_fill(&c->recv, &c->nrecv, b, X_COPY, rg, j, 0, 0);
                        }
                        if (end_of(&b) > sz_r) sz_r = end_of(&b);
                    } else {
                        add_fill(&c->send, &c->nsend, b, X_COPY, g, me, j, 0);
                        if (end_of(&b) > sz_s) sz_s = end_of(&b);
                    }
                }
            }
            if (leaf && !(rootside && c->in_place)) {
                if (gather) {
                    b = (struct blk){ts, e / types[ts].n, 0};
                    c->scount = b.count; c->stype = ts;
                    add_fill(&c->send, &c->nsend, b, X_COPY, g, me, 0, 0);
                    sz_s = end_of(&b);
                } else {
                    b = (struct blk){tr, e / types[tr].n, 0};
                    c->rcount = b.count; c->rtype = tr;
                    add_fill(&c->recv, &c->nrecv, b, X_COPY, inter ? rg : g, c->root, me, 0);
                    sz_r = end_of(&b);
                }
            }
            if (inter && in_root_group && !is_root) { c->nsend = c->nrecv = 0; sz_s = sz_r = 0; }
            break;
        }
        /* allgather, alltoall */
        for (int j = 0; j < m; ++j) {
            b = (struct blk){tr, c->rcount, (MPI_Aint) j * c->rcount * types[tr].extent};
            if (c->in_place && j == me) {
                add_fill(&c->inputs, &c->ninputs, b, X_COPY, g, me, F_ALLTOALL == f ? me : 0, 0);
                add_fill(&c->recv, &c->nrecv, b, X_COPY, g, me, F_ALLTOALL == f ? me : 0, 0);
            } else {
                if (c->in_place && F_ALLTOALL == f) add_fill(&c->inputs, &c->ninputs, b, X_COPY, g, me, j, 0);
                add_fill(&c->recv, &c->nrecv, b, X_COPY, rg, j, F_ALLTOALL == f ? me : 0, 0);
            }
            if (end_of(&b) > sz_r) sz_r = end_of(&b);
        }
        if (!c->in_place) {
            int ns = F_ALLTOALL == f ? m : 1;
            for (int j = 0; j < ns; ++j) {
                b = (struct blk){ts, c->scount, (MPI_Aint) j * c->scount * types[ts].extent};
                add_fill(&c->send, &c->nsend, b, X_COPY, g, me, F_ALLTOALL == f ? j : 0, 0);
                if (end_of(&b) > sz_s) sz_s = end_of(&b);
            }
        }
        break;
    }

    case F_GATHERV: case F_SCATTERV: case F_ALLGATHERV: case F_ALLTOALLV: case F_ALLTOALLW: {
        int gather = F_GATHERV == f, scatter = F_SCATTERV == f, all = F_ALLGATHERV == f;
        int w = F_ALLTOALLW == f, ng = inter ? 2 : 1;
        /* global index of (group, rank): group * 64 + rank */
        int *st = xcalloc(128, sizeof(int)), *rt = xcalloc(128, sizeof(int));
        int *E = xcalloc(128 * 128, sizeof(int)), *S = NULL, *R = NULL;
        int rootgi = c->root_group * 64 + c->root, megi = g * 64 + me;
        struct blk *bl;
        int nbl = 0;

        if (!inter && (gather || scatter) && me != c->root) c->in_place = 0;
        if (!(gather || scatter)) c->root = -1;
        for (int gg = 0; gg < ng; ++gg) {
            for (int i = 0; i < v->size[gg]; ++i) {
                st[gg * 64 + i] = pick_type(r, base, 1);
                rt[gg * 64 + i] = pick_type(r, base, 1);
            }
        }
        if (w) {
            /* per pair (sender, receiver): one base, the sender's and the receiver's types */
            S = xcalloc(128 * 128, sizeof(int));
            R = xcalloc(128 * 128, sizeof(int));
            for (int gs = 0; gs < ng; ++gs) {
                int gr = inter ? 1 - gs : gs;
                for (int i = 0; i < v->size[gs]; ++i)
                    for (int j = 0; j < v->size[gr]; ++j) {
                        int pb = pick_base(r, op), a = gs * 64 + i, z = gr * 64 + j;
                        S[a * 128 + z] = pick_type(r, pb, 1);
                        R[a * 128 + z] = pick_type(r, pb, 1);
                    }
            }
            if (c->in_place) {
                /* in place, i sends j its receive block j: one base both ways */
                for (int i = 0; i < n; ++i)
                    for (int j = 0; j < i; ++j)
                        R[i * 128 + j] = type_at(types[R[j * 128 + i]].base, types[R[i * 128 + j]].shape);
            }
        }
        /* elements from a to z */
        for (int gs = 0; gs < ng; ++gs) {
            int gr = inter ? 1 - gs : gs;
            for (int i = 0; i < v->size[gs]; ++i) {
                int a = gs * 64 + i, once = -1;
                for (int j = 0; j < v->size[gr]; ++j) {
                    int z = gr * 64 + j, unit;
                    if (gather && z != rootgi) continue;
                    if (scatter && a != rootgi) continue;
                    if (all) {
                        if (once < 0) {
                            unit = types[st[a]].n; /* rt[a]'s is among the receivers' */
                            for (int jj = 0; jj < v->size[gr]; ++jj) unit = lcm(unit, types[rt[gr * 64 + jj]].n);
                            once = pick_elems(r, budget(2 * v->size[gr], type_at(base, SH_VECTOR)), unit);
                        }
                        E[a * 128 + z] = once;
                        continue;
                    }
                    if (w) unit = c->in_place ? lcm(types[R[z * 128 + a]].n, types[R[a * 128 + z]].n)
                                              : lcm(types[S[a * 128 + z]].n, types[R[a * 128 + z]].n);
                    else unit = lcm(types[st[a]].n, types[rt[z]].n);
                    if (c->in_place && F_ALLTOALLV == f) unit = lcm(types[rt[a]].n, types[rt[z]].n);
                    E[a * 128 + z] = pick_elems(r, budget(2 * v->size[gr], type_at(base, SH_VECTOR)), unit);
                }
            }
        }
        if (c->in_place && (F_ALLTOALLV == f || w)) {
            for (int i = 0; i < n; ++i)
                for (int j = 0; j < i; ++j) E[i * 128 + j] = E[j * 128 + i];
        }
        c->stype = st[megi];
        c->rtype = rt[megi];
        bl = xcalloc((size_t) m + 2, sizeof(struct blk));
        if (inter && in_root_group && !is_root && (gather || scatter)) {
            /* MPI_PROC_NULL: nothing */
        } else {
            /* receives */
            int from_root = scatter, receives = !(gather && !is_root) && !(scatter && is_root && (inter || c->in_place));
            if (receives) {
                nbl = from_root ? 1 : m;
                for (int j = 0; j < nbl; ++j) {
                    int a = from_root ? rootgi : rg * 64 + j;
                    int t = w ? R[a * 128 + megi] : rt[megi];
                    int e = all ? E[a * 128 + (g * 64)] : E[a * 128 + megi];
                    if (all && !inter) e = E[a * 128 + 0];
                    bl[j] = (struct blk){t, e / types[t].n, 0};
                    c->rcounts[j] = bl[j].count;
                    c->rtypes[j] = t;
                }
                sz_r = place(r, bl, nbl, w ? 1 : types[rt[megi]].extent, c->rdispls);
                if (scatter) {
                    /* one block at the buffer's start */
                    c->rcount = bl[0].count;
                    bl[0].disp = 0;
                    sz_r = end_of(&bl[0]);
                }
                for (int j = 0; j < nbl; ++j) {
                    int src = from_root ? c->root : j, sg = from_root ? c->root_group : rg;
                    int id = gather || all ? 0 : me;
                    if (w) c->rwdispls[j] = bl[j].disp;
                    if (c->in_place && !scatter && src == me) {
                        add_fill(&c->inputs, &c->ninputs, bl[j], X_COPY, g, me, id, 0);
                        add_fill(&c->recv, &c->nrecv, bl[j], X_COPY, g, me, id, 0);
                        continue;
                    }
                    if (c->in_place && (F_ALLTOALLV == f || w)) add_fill(&c->inputs, &c->ninputs, bl[j], X_COPY, g, me, j, 0);
                    add_fill(&c->recv, &c->nrecv, bl[j], X_COPY, sg, src, id, 0);
                }
            }
            /* sends */
            int sends = !(scatter && !is_root) && !(gather && is_root && c->in_place) && !(gather && inter && is_root)
                        && !(c->in_place && !gather && !scatter);
            if (sends) {
                int to_root = gather, one = gather || all;
                nbl = one ? 1 : m;
                for (int j = 0; j < nbl; ++j) {
                    int z = to_root ? rootgi : rg * 64 + j;
                    int t = w ? S[megi * 128 + z] : st[megi];
                    int e = all ? E[megi * 128 + rg * 64] : E[megi * 128 + z];
                    bl[j] = (struct blk){t, e / types[t].n, 0};
                    c->scounts[j] = bl[j].count;
                    c->stypes[j] = t;
                }
                sz_s = place(r, bl, nbl, w ? 1 : types[st[megi]].extent, c->sdispls);
                if (one) {
                    bl[0].disp = 0;
                    sz_s = end_of(&bl[0]);
                }
                for (int j = 0; j < nbl; ++j) {
                    if (w) c->swdispls[j] = bl[j].disp;
                    add_fill(&c->send, &c->nsend, bl[j], X_COPY, g, me, one ? 0 : j, 0);
                }
                if (one) c->scount = bl[0].count;
            }
        }
        free(bl), free(st), free(rt), free(E), free(S), free(R);
        break;
    }

    case F_ALLREDUCE: case F_REDUCE: case F_SCAN: case F_EXSCAN:
    case F_REDUCE_SCATTER: case F_REDUCE_SCATTER_BLOCK: {
        /* one type on every rank (the known limit on mixed contiguity) */
        int t = OP_UMAT == op ? mat4_type : pick_type(r, base, c->op >= OP_USUM);
        int L, unit = types[t].n, nl = n, cnt;
        if (OP_UMAT == op) unit = 4;
        if (F_REDUCE_SCATTER_BLOCK == f) {
            int u = inter ? lcm(v->size[0], v->size[1]) : n;
            L = pick_elems(r, budget(2, t), unit * u);
            c->rcount = L / nl / unit;
        } else if (F_REDUCE_SCATTER == f) {
            /* counts of this group's ranks, summing to one L in both groups */
            int parts[2][64], tot = 0;
            int maxb = (int) budget(2, t);
            L = 0;
            for (int gg = 0; gg < (inter ? 2 : 1); ++gg) {
                int s = 0, sg = inter ? gg : g;
                for (int i = 0; i < v->size[sg]; ++i) {
                    parts[sg][i] = pick_elems(r, (size_t) maxb / (size_t) v->size[sg], unit) / unit;
                    s += parts[sg][i];
                }
                if (0 == gg) tot = s;
                else {
                    /* make group 1 sum to group 0's total */
                    for (int i = 0; i < v->size[sg]; ++i) parts[sg][i] = 0;
                    for (int i = 0; tot > 0; i = (i + 1) % v->size[sg]) {
                        int take = tot > 1 ? 1 + rint_(r, tot) : 1;
                        parts[sg][i] += take;
                        tot -= take;
                    }
                }
            }
            for (int i = 0; i < n; ++i) { c->rcounts[i] = parts[g][i]; L += parts[g][i]; }
            L *= unit;
        } else {
            L = pick_elems(r, budget(2, t), unit);
        }
        cnt = L / types[t].n;
        c->stype = c->rtype = t;
        c->scount = cnt;
        if (F_REDUCE == f && !inter && me != c->root) c->in_place = 0;
        if (F_REDUCE_SCATTER_BLOCK == f || F_REDUCE_SCATTER == f) {
            size_t first = 0;
            int mine = F_REDUCE_SCATTER_BLOCK == f ? c->rcount : c->rcounts[me];
            for (int i = 0; i < me; ++i)
                first += (size_t) (F_REDUCE_SCATTER_BLOCK == f ? c->rcount : c->rcounts[i]);
            b = (struct blk){t, cnt, 0};
            if (c->in_place) {
                add_fill(&c->inputs, &c->ninputs, b, X_COPY, g, me, 0, 0);
                sz_r = end_of(&b);
                c->care_from = blk_span(&(struct blk){t, mine, 0});
                c->care_to = sz_r;
            } else {
                add_fill(&c->send, &c->nsend, b, X_COPY, g, me, 0, 0);
                sz_s = end_of(&b);
            }
            b = (struct blk){t, mine, 0};
            add_fill(&c->recv, &c->nrecv, b, X_FOLD, rg, 0, 0, first * (size_t) types[t].n)->r1 = m - 1;
            if (end_of(&b) > sz_r) sz_r = end_of(&b);
            if (c->in_place && c->care_from >= c->care_to) c->care_from = c->care_to = 0;
            break;
        }
        b = (struct blk){t, cnt, 0};
        int gets = F_REDUCE != f || is_root;
        int gives = F_REDUCE != f || !inter || !in_root_group;
        if (c->in_place) {
            add_fill(&c->inputs, &c->ninputs, b, X_COPY, g, me, 0, 0);
            sz_r = end_of(&b);
        } else if (gives) {
            add_fill(&c->send, &c->nsend, b, X_COPY, g, me, 0, 0);
            sz_s = end_of(&b);
        }
        if (gets) {
            struct fill *x;
            int r0 = 0, r1 = m - 1;
            if (F_SCAN == f) r1 = me;
            if (F_EXSCAN == f) r1 = me - 1;
            if (r1 >= r0) {
                x = add_fill(&c->recv, &c->nrecv, b, X_FOLD, rg, 0, 0, 0);
                x->r0 = r0, x->r1 = r1;
            } else {
                /* exscan's rank 0: its receive buffer is undefined */
                c->care_from = 0;
                c->care_to = blk_span(&b);
            }
            if (end_of(&b) > sz_r) sz_r = end_of(&b);
        }
        if (inter && F_REDUCE == f && in_root_group && !is_root) { c->nsend = c->nrecv = 0; sz_s = sz_r = 0; }
        break;
    }

    default: { /* neighbourhood collectives */
        int t0 = pick_type(r, base, 1), nn = v->size[0];
        int maxn = 1;
        int *out_e; /* elements per (rank, out-slot) */
        for (int i = 0; i < nn; ++i) if (v->topo[i].nout > maxn) maxn = v->topo[i].nout;
        for (int i = 0; i < nn; ++i) if (v->topo[i].nin > maxn) maxn = v->topo[i].nin;
        out_e = xcalloc((size_t) nn * (size_t) maxn, sizeof(int));
        /* shapes per rank: send and receive */
        int st[64], rt[64];
        c->in_place = 0;
        for (int i = 0; i < nn && i < 64; ++i) {
            st[i] = pick_type(r, base, 1);
            rt[i] = pick_type(r, base, 1);
            if (F_NALLGATHER == f || F_NALLTOALL == f) { st[i] = st[0]; rt[i] = rt[0]; }
        }
        (void) t0;
        int one;
        {
            int unit = 1;
            for (int i = 0; i < nn; ++i) unit = lcm(unit, lcm(types[st[i]].n, types[rt[i]].n));
            one = pick_elems(r, budget(maxn + 1, type_at(base, SH_VECTOR)), unit);
            for (int i = 0; i < nn; ++i) {
                int e_i = F_NALLGATHERV == f ? pick_elems(r, budget(maxn + 1, type_at(base, SH_VECTOR)), unit) : one;
                for (int k = 0; k < v->topo[i].nout; ++k) {
                    int e = F_NALLTOALLV == f || F_NALLTOALLW == f ? pick_elems(r, budget(maxn + 1, type_at(base, SH_VECTOR)), unit) : (F_NALLGATHERV == f ? e_i : one);
                    out_e[i * maxn + k] = e;
                }
            }
        }
        int ts = st[me], tr = rt[me];
        c->stype = ts, c->rtype = tr;
        int ns = F_NALLGATHER == f || F_NALLGATHERV == f ? 1 : tp->nout;
        struct blk *sb = xcalloc((size_t) ns + 1, sizeof(struct blk)), *rb = xcalloc((size_t) tp->nin + 1, sizeof(struct blk));
        int w = F_NALLTOALLW == f, v_ = F_NALLTOALLV == f || F_NALLGATHERV == f;
        for (int k = 0; k < ns; ++k) {
            int e = out_e[me * maxn + (ns == 1 ? 0 : k)];
            if (ns == 1 && 0 == tp->nout) e = out_e[me * maxn] = F_NALLGATHERV == f || F_NALLGATHER == f ? 0 : 0;
            sb[k] = (struct blk){ts, e / types[ts].n, 0};
            c->scounts[k] = sb[k].count;
            if (w) c->stypes[k] = ts;
        }
        for (int k = 0; k < tp->nin; ++k) {
            int j = tp->in[k], e;
            if (j < 0) {
                /* MPI_PROC_NULL: nothing arrives; the count is this rank's choice */
                e = F_NALLTOALLV == f || F_NALLGATHERV == f || w ? 0 : out_e[me * maxn];
                if (F_NALLGATHER == f || F_NALLTOALL == f) e = one;
            } else {
                int slot = F_NALLGATHER == f || F_NALLGATHERV == f ? 0 : tp->in_from_slot[k];
                e = out_e[j * maxn + slot];
            }
            rb[k] = (struct blk){tr, e / types[tr].n, 0};
            c->rcounts[k] = rb[k].count;
            if (w) c->rtypes[k] = tr;
        }
        if (F_NALLGATHER == f || F_NALLTOALL == f) {
            /* uniform counts: blocks adjacent */
            int sc = one / types[ts].n, rc = one / types[tr].n;
            c->scount = sc;
            c->rcount = rc;
            for (int k = 0; k < ns; ++k) { sb[k].count = sc; sb[k].disp = (MPI_Aint) k * sc * types[ts].extent; }
            for (int k = 0; k < tp->nin; ++k) { rb[k].count = rc; rb[k].disp = (MPI_Aint) k * rc * types[tr].extent; }
            for (int k = 0; k < ns; ++k) if (end_of(&sb[k]) > sz_s) sz_s = end_of(&sb[k]);
            for (int k = 0; k < tp->nin; ++k) if (end_of(&rb[k]) > sz_r) sz_r = end_of(&rb[k]);
        } else {
            sz_s = place(r, sb, ns, w ? 1 : types[ts].extent, c->sdispls);
            if (F_NALLGATHERV == f) {
                sb[0].disp = 0; /* one block at the buffer's start */
                sz_s = end_of(&sb[0]);
            }
            sz_r = place(r, rb, tp->nin, w ? 1 : types[tr].extent, c->rdispls);
            if (w) {
                for (int k = 0; k < ns; ++k) c->swdispls[k] = sb[k].disp;
                for (int k = 0; k < tp->nin; ++k) c->rwdispls[k] = rb[k].disp;
            }
            if (F_NALLGATHERV == f) c->scount = sb[0].count;
        }
        (void) v_;
        for (int k = 0; k < ns; ++k) add_fill(&c->send, &c->nsend, sb[k], X_COPY, 0, me, ns == 1 ? 0 : k, 0);
        for (int k = 0; k < tp->nin; ++k) {
            int j = tp->in[k];
            if (j < 0) { add_fill(&c->recv, &c->nrecv, rb[k], X_NONE, 0, 0, 0, 0); continue; }
            add_fill(&c->recv, &c->nrecv, rb[k], X_COPY, 0, j,
                     F_NALLGATHER == f || F_NALLGATHERV == f ? 0 : tp->in_from_slot[k], 0);
        }
        free(sb), free(rb), free(out_e);
        break;
    }
    }
    c->sbytes = sz_s;
    c->rbytes = sz_r;
}

/* ------------------------------------------------------------------ running */

static MPI_Datatype dt(struct call *c, int t)
{
    MPI_Datatype d;

    if (!c->dup) return types[t].t;
    MPI_Type_dup(types[t].t, &d);
    if (ndups < MAX_DUPS) {
        dups[ndups].t = d;
        dups[ndups++].type = t;
    }
    return d;
}

/* The datatypes made for one start: freed right after it (MPI lets them go). */
#define MAX_MADE 256
static MPI_Datatype made[MAX_MADE];
static int nmade;

static MPI_Datatype use(struct call *c, int t)
{
    MPI_Datatype d = dt(c, t);
    if (c->dup && nmade < MAX_MADE) made[nmade++] = d;
    return d;
}

static void free_made(void)
{
    for (int i = 0; i < nmade; ++i) MPI_Type_free(&made[i]);
    nmade = 0;
}

#define ISSUE(U, l, ...)                                                                      \
    (FORM_BLOCKING == c->form ? MPI_##U(__VA_ARGS__)                                          \
     : FORM_NONBLOCKING == c->form ? MPI_I##l(__VA_ARGS__, &c->req)                           \
                                   : MPI_##U##_init(__VA_ARGS__, MPI_INFO_NULL, &c->req))

static int issue(struct call *c)
{
    char *sb = c->sraw + GUARD, *rb = c->rraw + GUARD;
    const void *sbuf = c->in_place ? MPI_IN_PLACE : sb;
    MPI_Comm comm = c->v->comm;
    MPI_Op op = is_reduction(c->family) ? ops[c->op] : MPI_OP_NULL;
    MPI_Datatype st = use(c, c->stype), rt = use(c, c->rtype);
    int m = rsize(c->v), nin = c->v->topo ? c->v->topo[c->v->rank].nin : 0,
        nout = c->v->topo ? c->v->topo[c->v->rank].nout : 0;
    int rc;

    if (NULL != c->sdt) {
        int ns = c->family == F_ALLTOALLW ? m : nout, nr = c->family == F_ALLTOALLW ? m : nin;
        for (int j = 0; j < ns; ++j) c->sdt[j] = use(c, c->in_place ? c->rtypes[j] : c->stypes[j]);
        for (int j = 0; j < nr; ++j) c->rdt[j] = use(c, c->rtypes[j]);
        if (F_ALLTOALLW == c->family) {
            for (int j = 0; j < m; ++j) {
                c->sdispls[j] = (int) c->swdispls[j];
                c->rdispls[j] = (int) c->rwdispls[j];
            }
        }
    }
    switch (c->family) {
    case F_BARRIER: rc = FORM_BLOCKING == c->form ? MPI_Barrier(comm)
                         : FORM_NONBLOCKING == c->form ? MPI_Ibarrier(comm, &c->req)
                                                       : MPI_Barrier_init(comm, MPI_INFO_NULL, &c->req);
        break;
    case F_BCAST: rc = ISSUE(Bcast, bcast, c->v->inter && c->v->group != c->root_group ? rb : (c->v->inter ? sb : rb), c->scount, st, c->sroot, comm); break;
    case F_GATHER: rc = ISSUE(Gather, gather, sbuf, c->scount, st, rb, c->rcount, rt, c->sroot, comm); break;
    case F_SCATTER: rc = ISSUE(Scatter, scatter, sb, c->scount, st, c->in_place ? MPI_IN_PLACE : rb, c->rcount, rt, c->sroot, comm); break;
    case F_ALLGATHER: rc = ISSUE(Allgather, allgather, sbuf, c->scount, st, rb, c->rcount, rt, comm); break;
    case F_ALLTOALL: rc = ISSUE(Alltoall, alltoall, sbuf, c->scount, st, rb, c->rcount, rt, comm); break;
    case F_GATHERV: rc = ISSUE(Gatherv, gatherv, sbuf, c->scount, st, rb, c->rcounts, c->rdispls, rt, c->sroot, comm); break;
    case F_SCATTERV: rc = ISSUE(Scatterv, scatterv, sb, c->scounts, c->sdispls, st, c->in_place ? MPI_IN_PLACE : rb, c->rcount, rt, c->sroot, comm); break;
    case F_ALLGATHERV: rc = ISSUE(Allgatherv, allgatherv, sbuf, c->scount, st, rb, c->rcounts, c->rdispls, rt, comm); break;
    case F_ALLTOALLV: rc = ISSUE(Alltoallv, alltoallv, sbuf, c->scounts, c->sdispls, st, rb, c->rcounts, c->rdispls, rt, comm); break;
    case F_ALLTOALLW: rc = ISSUE(Alltoallw, alltoallw, sbuf, c->in_place ? c->rcounts : c->scounts, c->in_place ? c->rdispls : c->sdispls, c->sdt, rb, c->rcounts, c->rdispls, c->rdt, comm); break;
    case F_REDUCE: rc = ISSUE(Reduce, reduce, sbuf, rb, c->scount, st, op, c->sroot, comm); break;
    case F_ALLREDUCE: rc = ISSUE(Allreduce, allreduce, sbuf, rb, c->scount, st, op, comm); break;
    case F_SCAN: rc = ISSUE(Scan, scan, sbuf, rb, c->scount, st, op, comm); break;
    case F_EXSCAN: rc = ISSUE(Exscan, exscan, sbuf, rb, c->scount, st, op, comm); break;
    case F_REDUCE_SCATTER_BLOCK: rc = ISSUE(Reduce_scatter_block, reduce_scatter_block, sbuf, rb, c->rcount, st, op, comm); break;
    case F_REDUCE_SCATTER: rc = ISSUE(Reduce_scatter, reduce_scatter, sbuf, rb, c->rcounts, st, op, comm); break;
    case F_NALLGATHER: rc = ISSUE(Neighbor_allgather, neighbor_allgather, sb, c->scount, st, rb, c->rcount, rt, comm); break;
    case F_NALLGATHERV: rc = ISSUE(Neighbor_allgatherv, neighbor_allgatherv, sb, c->scount, st, rb, c->rcounts, c->rdispls, rt, comm); break;
    case F_NALLTOALL: rc = ISSUE(Neighbor_alltoall, neighbor_alltoall, sb, c->scount, st, rb, c->rcount, rt, comm); break;
    case F_NALLTOALLV: rc = ISSUE(Neighbor_alltoallv, neighbor_alltoallv, sb, c->scounts, c->sdispls, st, rb, c->rcounts, c->rdispls, rt, comm); break;
    default: rc = ISSUE(Neighbor_alltoallw, neighbor_alltoallw, sb, c->scounts, c->swdispls, c->sdt, rb, c->rcounts, c->rwdispls, c->rdt, comm); break;
    }
    return rc;
}

static void describe(struct call *c)
{
    int n = 0;
    const size_t len = sizeof(c->desc);

    n += snprintf(c->desc + n, len - (size_t) n, "%s %s on %s (rank %d of %d%s%s)",
                  family_names[c->family], form_names[c->form], comm_names[c->comm],
                  c->v->rank, lsize(c->v), c->v->inter ? ", group " : "",
                  c->v->inter ? (c->v->group ? "B" : "A") : "");
    if (n < (int) len) n += snprintf(c->desc + n, len - (size_t) n, ", send %d x %s, recv %d x %s",
                                     c->scount, types[c->stype].name, c->rcount, types[c->rtype].name);
    if (is_reduction(c->family) && n < (int) len) n += snprintf(c->desc + n, len - (size_t) n, ", op %s", op_names[c->op]);
    if (n < (int) len) n += snprintf(c->desc + n, len - (size_t) n, ", root %d%s%s%s, %zu/%zu bytes",
                                     c->root, c->v->inter ? (c->root_group ? " of group B" : " of group A") : "",
                                     c->in_place ? ", MPI_IN_PLACE" : "", c->dup ? ", dup'd types" : "",
                                     c->sbytes, c->rbytes);
}

/* Which calls certainly reach coll (the bindings answer some zero-count calls
 * themselves): every count of this rank's non-zero. */
static int certainly_reaches_coll(const struct call *c)
{
    if (F_BARRIER == c->family) return c->v->inter || lsize(c->v) > 1;
    if (F_BCAST == c->family && !c->v->inter && lsize(c->v) <= 1) return 0;
    if (0 == c->nsend + c->nrecv + c->ninputs) return 0;
    for (int i = 0; i < c->nsend; ++i) if (0 == c->send[i].b.count) return 0;
    for (int i = 0; i < c->nrecv; ++i) if (0 == c->recv[i].b.count) return 0;
    for (int i = 0; i < c->ninputs; ++i) if (0 == c->inputs[i].b.count) return 0;
    if (c->v->inter && F_BCAST != c->family && F_BARRIER != c->family) return 0;
    return 1;
}

/* Counters: per family and form, calls made (upper bound) and calls that must
 * show (lower bound). */
static struct pvar_families pvars;
static unsigned long long pv_before[NFAMILIES][NFORMS][PVAR_PATHS];
static long pv_total[NFAMILIES][NFORMS], pv_certain[NFAMILIES][NFORMS];

static void counters_begin(void)
{
    if (!opt_counters) return;
    for (int f = 0; f < NFAMILIES; ++f)
        for (int m = 0; m < NFORMS; ++m) {
            pvar_families_read(&pvars, f, m, pv_before[f][m]);
            pv_total[f][m] = pv_certain[f][m] = 0;
        }
}

static void counters_check(void)
{
    if (!opt_counters) return;
    for (int f = 0; f < NFAMILIES; ++f)
        for (int m = 0; m < NFORMS; ++m) {
            unsigned long long now[PVAR_PATHS];
            pvar_families_read(&pvars, f, m, now);
            long nat = (long) (now[PVAR_PATH_NATIVE] - pv_before[f][m][PVAR_PATH_NATIVE]);
            long del = (long) (now[PVAR_PATH_DELEGATED] - pv_before[f][m][PVAR_PATH_DELEGATED]);
            if (0 != del || nat < pv_certain[f][m] || nat > pv_total[f][m]) {
                die(NULL, "%s %s: counters moved native %ld, delegated %ld; expected native %ld to %ld, "
                    "delegated 0 (coll/async did not handle them all)", family_names[f],
                    form_names[m], nat, del, pv_certain[f][m], pv_total[f][m]);
            }
        }
}

static struct call *calls[MAX_CALLS];
static int ncalls;

static void start(struct call *c)
{
    int rc;

    prepare(c);
    current = c;
    if (opt_verbose) {
        printf("%s: rank %d step %ld call %d start %d: %s\n", PROGRAM, world_rank, step_no, c->id,
               c->start_no, c->desc);
        fflush(stdout);
    }
    ++calls_made;
    if (FORM_PERSISTENT == c->form) {
        if (0 == c->start_no) {
            rc = issue(c);
            mpi_check(c, rc, "creating the persistent request");
            free_made();
        }
        rc = MPI_Start(&c->req);
        mpi_check(c, rc, "MPI_Start");
        c->active = 1;
    } else {
        rc = issue(c);
        free_made();
        mpi_check(c, rc, form_names[c->form]);
        if (FORM_BLOCKING == c->form) verify(c);
        else c->active = 1;
    }
    if (c->certain) ++pv_certain[c->family][c->form];
    ++pv_total[c->family][c->form];
    current = NULL;
}

static void release(struct call *c)
{
    if (c->mem) { mem_outstanding -= c->mem; c->mem = 0; }
    free(c->sraw), free(c->rraw), free(c->expect);
    c->sraw = c->rraw = c->expect = NULL;
}

static void destroy(struct call *c)
{
    release(c);
    free(c->send), free(c->recv), free(c->inputs);
    free(c->scounts), free(c->sdispls), free(c->stypes), free(c->rcounts), free(c->rdispls), free(c->rtypes);
    free(c->sdt), free(c->rdt), free(c->swdispls), free(c->rwdispls);
    free(c);
}

/* A request found complete: check it (a status error is a failure). */
static void completed(struct call *c, const MPI_Status *st)
{
    c->active = 0;
    if (NULL != st && MPI_SUCCESS != st->MPI_ERROR && st->MPI_ERROR != 0) {
        /* MPI_ERROR is set only where a multiple completion reports an error */
    }
    verify(c);
    if (FORM_NONBLOCKING == c->form) release(c);
}

static void wait_one(struct call *c)
{
    MPI_Status st;

    if (!c->active) return;
    current = c;
    mpi_check(c, MPI_Wait(&c->req, &st), "MPI_Wait");
    completed(c, &st);
    current = NULL;
}

/* Local order: a generator of this rank's own, so ranks complete differently. */
static void complete_some(struct rng *shared, struct rng *local)
{
    MPI_Request reqs[MAX_CALLS];
    struct call *who[MAX_CALLS];
    MPI_Status sts[MAX_CALLS];
    int n = 0, idx[MAX_CALLS], outc, how = rint_(shared, 6), rc;

    for (int i = 0; i < ncalls; ++i) {
        if (calls[i] && calls[i]->active) { who[n] = calls[i]; reqs[n++] = calls[i]->req; }
    }
    if (0 == n) return;
    current = who[0];
    switch (how) {
    case 0: /* MPI_Waitall */
        rc = MPI_Waitall(n, reqs, sts);
        mpi_check(who[0], rc, "MPI_Waitall");
        for (int i = 0; i < n; ++i) { who[i]->req = reqs[i]; completed(who[i], &sts[i]); }
        break;
    case 1: { /* MPI_Waitany, some times */
        int times = 1 + rint_(local, n);
        for (int k = 0; k < times; ++k) {
            int i;
            rc = MPI_Waitany(n, reqs, &i, sts);
            mpi_check(who[0], rc, "MPI_Waitany");
            if (MPI_UNDEFINED == i) break;
            who[i]->req = reqs[i];
            completed(who[i], &sts[0]);
        }
        break;
    }
    case 2: /* MPI_Waitsome once */
        rc = MPI_Waitsome(n, reqs, &outc, idx, sts);
        mpi_check(who[0], rc, "MPI_Waitsome");
        for (int k = 0; k < outc && MPI_UNDEFINED != outc; ++k) { who[idx[k]]->req = reqs[idx[k]]; completed(who[idx[k]], &sts[k]); }
        break;
    case 3: { /* MPI_Test on one at a time until it completes, in a local order */
        int order[MAX_CALLS], times = 1 + rint_(local, n);
        for (int i = 0; i < n; ++i) order[i] = i;
        shuffle(local, order, n);
        for (int k = 0; k < times; ++k) {
            int i = order[k], flag = 0;
            current = who[i];
            while (!flag) {
                rc = MPI_Test(&reqs[i], &flag, sts);
                mpi_check(who[i], rc, "MPI_Test");
            }
            who[i]->req = reqs[i];
            completed(who[i], &sts[0]);
        }
        break;
    }
    case 4: { /* MPI_Testall until all */
        int flag = 0;
        while (!flag) {
            rc = MPI_Testall(n, reqs, &flag, sts);
            mpi_check(who[0], rc, "MPI_Testall");
        }
        for (int i = 0; i < n; ++i) { who[i]->req = reqs[i]; completed(who[i], &sts[i]); }
        break;
    }
    default: /* MPI_Wait each, in a local order */
        for (int i = n - 1; i >= 0; --i) {
            int j = rint_(local, i + 1);
            wait_one(who[j]);
            who[j] = who[i];
        }
        break;
    }
    current = NULL;
}

static int outstanding(void)
{
    int n = 0;
    for (int i = 0; i < ncalls; ++i) n += calls[i] && calls[i]->active;
    return n;
}

static void wait_all(void)
{
    for (int i = 0; i < ncalls; ++i) if (calls[i]) wait_one(calls[i]);
}

/* What every rank knows of each action's call, member of its communicator or
 * not, so that the choices that follow stay the same everywhere. */
static struct {
    int persistent, starts, start_no;
} ghosts[MAX_CALLS];

static void restart(int a)
{
    struct call *p = calls[a];

    ++ghosts[a].start_no;
    if (NULL == p) return;
    wait_one(p);
    ++p->start_no;
    start(p);
}

/* One step: actions drawn from (seed, step). */
static void run_step(long k)
{
    struct rng shared = {hash5(opt_seed, 0x5E, (uint64_t) k, 0, 0)};
    struct rng local = {hash5(opt_seed, 0x10C, (uint64_t) k, (uint64_t) world_rank, 0)};
    int actions = 4 + rint_(&shared, MAX_CALLS - 4), persistent = 0;

    step_no = k;
    ncalls = actions;
    memset(calls, 0, sizeof(calls));
    memset(ghosts, 0, sizeof(ghosts));
    counters_begin();
    alarm(180); /* the watchdog: a step that hangs says which */
    for (int a = 0; a < actions; ++a) {
        int what = rint_(&shared, 100);
        uint64_t call_seed = rnext(&shared);
        int fam = rint_(&shared, NFAMILIES), form = rint_(&shared, NFORMS), comm = rint_(&shared, NCOMMS);
        int pidx = rint_(&shared, MAX_CALLS);
        const struct cview *v = &views[comm];
        struct rng r = {call_seed};
        struct call *c;
        int ok;

        if (what < 15) {
            complete_some(&shared, &local);
            continue;
        }
        if (what < 22) {
            /* a persistent call waited for and started again */
            for (int i = 0; i < a; ++i) {
                int j = (pidx + i) % a;
                if (ghosts[j].persistent && ghosts[j].start_no + 1 < ghosts[j].starts) {
                    restart(j);
                    break;
                }
            }
            continue;
        }
        if (!family_enabled[fam] || !form_enabled[form] || !comm_enabled[comm]) continue;
        /* whether the family suits the communicator's kind: the same on every rank */
        if (C_INTER_THIRDS == comm || C_INTER_HALVES == comm)
            ok = world_size >= 2 && F_SCAN != fam && F_EXSCAN != fam && !is_neighbor(fam);
        else
            ok = comm >= C_CART1 || !is_neighbor(fam);
        /* at most 6 persistent calls a step: their buffers stay to its end */
        if (!ok || (FORM_PERSISTENT == form && persistent >= 6)) continue;
        persistent += FORM_PERSISTENT == form;
        ghosts[a].persistent = FORM_PERSISTENT == form;
        ghosts[a].starts = FORM_PERSISTENT == form ? 1 + rint_(&r, 4) : 1;
        if (outstanding() >= opt_max_outstanding) wait_all();
        if (MPI_COMM_NULL == v->comm) continue;
        c = xcalloc(1, sizeof(*c));
        c->id = a;
        c->family = fam;
        c->form = form;
        c->comm = comm;
        c->v = v;
        c->uid = hash5(opt_seed, (uint64_t) k, (uint64_t) a, 0xCA11, 0);
        c->starts = ghosts[a].starts;
        c->req = MPI_REQUEST_NULL;
        plan(c, &r);
        c->mem = c->sbytes + 2 * c->rbytes + 6 * GUARD;
        describe(c);
        c->certain = certainly_reaches_coll(c);
        /* waiting is local: each rank may do it at any point */
        if (mem_outstanding + c->mem > mem_limit) wait_all();
        c->sraw = xcalloc(c->sbytes + 2 * GUARD, 1);
        c->rraw = xcalloc(c->rbytes + 2 * GUARD, 1);
        c->expect = xcalloc(c->rbytes + 2 * GUARD, 1);
        mem_outstanding += c->mem;
        calls[a] = c;
        start(c);
        if (FORM_BLOCKING == c->form) release(c);
    }
    /* the step's end: the persistent calls' remaining starts, then everything */
    for (int a = 0; a < actions; ++a) {
        while (ghosts[a].persistent && ghosts[a].start_no + 1 < ghosts[a].starts) restart(a);
    }
    wait_all();
    for (int a = 0; a < actions; ++a) {
        if (NULL == calls[a]) continue;
        if (FORM_PERSISTENT == calls[a]->form && MPI_REQUEST_NULL != calls[a]->req) {
            MPI_Request_free(&calls[a]->req);
        }
        destroy(calls[a]);
        calls[a] = NULL;
    }
    ndups = 0;
    counters_check();
    alarm(0);
}

/* ------------------------------------------------------------------ main */

static void on_alarm(int sig)
{
    char line[600];
    int n;

    (void) sig;
    n = snprintf(line, sizeof(line), "%s: FAIL rank %d: seed %llu step %ld: hang (watchdog) in %s\n"
                 "%s: replay: --seed %llu --replay-step %ld\n", PROGRAM, world_rank,
                 (unsigned long long) opt_seed, step_no, current ? current->desc : "(between calls)",
                 PROGRAM, (unsigned long long) opt_seed, step_no);
    if (n > 0) (void) !write(2, line, (size_t) n);
    _exit(4);
}

static int list_enable(const char *list, const char *const *names, int count, int *enabled)
{
    char *copy = strdup(list), *save = NULL;

    for (int i = 0; i < count; ++i) enabled[i] = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int i = 0; i < count; ++i) if (0 == strcmp(t, names[i])) enabled[i] = found = 1;
        if (!found) { free(copy); return 0; }
    }
    free(copy);
    return 1;
}

static void usage(void)
{
    if (0 == world_rank) {
        fprintf(stderr, "usage: %s [--seed S] [--seconds T] [--steps K] [--soak] [--max-bytes B]\n"
                "       [--replay-step K] [--max-outstanding N] [--only FAMILY,...]\n"
                "       [--forms blocking,nonblocking,persistent] [--comms world,dup,parity,reversed,\n"
                "       interleaved,subset,self,inter_thirds,inter_halves,cart1,cart2,graph,dist_graph]\n"
                "       [--expect-component=yes|no] [--verbose]\n",
                PROGRAM);
    }
    MPI_Finalize();
    exit(2);
}

int main(int argc, char **argv)
{
    double t0;
    long k = 0, last_said = 0;
    int seeded = 0, seconds_given = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    for (int i = 0; i < NFAMILIES; ++i) family_enabled[i] = 1;
    for (int i = 0; i < NFORMS; ++i) form_enabled[i] = 1;
    for (int i = 0; i < NCOMMS; ++i) comm_enabled[i] = 1;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (0 == strcmp(a, "--seed") && next) { opt_seed = strtoull(next, NULL, 0); seeded = 1; ++i; }
        else if (0 == strcmp(a, "--seconds") && next) { opt_seconds = atof(next); seconds_given = 1; ++i; }
        else if (0 == strcmp(a, "--steps") && next) { opt_steps = atol(next); ++i; }
        else if (0 == strcmp(a, "--soak")) { opt_soak = 1; }
        else if (0 == strcmp(a, "--max-bytes") && next) { opt_max_bytes = strtoull(next, NULL, 0); ++i; }
        else if (0 == strcmp(a, "--replay-step") && next) { opt_replay = atol(next); ++i; }
        else if (0 == strcmp(a, "--max-outstanding") && next) { opt_max_outstanding = atoi(next); ++i; }
        else if (0 == strcmp(a, "--only") && next) { if (!list_enable(next, family_names, NFAMILIES, family_enabled)) usage(); ++i; }
        else if (0 == strcmp(a, "--comms") && next) { if (!list_enable(next, comm_short, NCOMMS, comm_enabled)) usage(); ++i; }
        else if (0 == strcmp(a, "--forms") && next) { if (!list_enable(next, form_names, NFORMS, form_enabled)) usage(); ++i; }
        else if (0 == strcmp(a, "--expect-component=yes")) { opt_counters = 1; }
        else if (0 == strcmp(a, "--expect-component=no")) { opt_counters = 0; }
        else if (0 == strcmp(a, "--verbose")) { opt_verbose = 1; }
        else usage();
    }
    if (opt_max_outstanding < 1 || opt_max_outstanding > MAX_CALLS) opt_max_outstanding = 32;
    if (opt_max_bytes > (size_t) INT_MAX / 8) opt_max_bytes = (size_t) INT_MAX / 8;
    if (!seeded) {
        unsigned long long s = (unsigned long long) time(NULL) ^ ((unsigned long long) getpid() << 20);
        MPI_Bcast(&s, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
        opt_seed = s;
    }
    opt_break = NULL != getenv("COLL_FUZZ_BREAK") && 0 == strcmp(getenv("COLL_FUZZ_BREAK"), "1");
    if (0 == world_rank) {
        printf("%s: seed %llu, %d ranks, %s%s\n", PROGRAM, (unsigned long long) opt_seed, world_size,
               opt_replay >= 0 ? "replaying one step" : opt_soak ? "soak" : "timed",
               opt_counters ? ", counters checked" : "");
        fflush(stdout);
    }
    make_types();
    make_ops();
    make_comms();
    if (opt_counters) pvar_families_open(&pvars, family_names, NFAMILIES, PROGRAM);
    signal(SIGALRM, on_alarm);
    t0 = MPI_Wtime();
    if (opt_replay >= 0) {
        run_step(opt_replay);
        k = 1;
    } else {
        for (;; ++k) {
            int go = 1;
            if (0 == world_rank) {
                double el = MPI_Wtime() - t0;
                if (opt_steps >= 0 && k >= opt_steps) go = 0;
                if (seconds_given || (!opt_soak && opt_steps < 0)) go = go && el < opt_seconds;
            }
            MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (!go) break;
            run_step(k);
            if (opt_soak && 0 == world_rank && k - last_said >= 100) {
                printf("%s: seed %llu: %ld steps, %ld calls, %.0f s\n", PROGRAM,
                       (unsigned long long) opt_seed, k + 1, calls_made, MPI_Wtime() - t0);
                fflush(stdout);
                last_said = k;
            }
        }
    }
    alarm(0);
    {
        long tot[2] = {checks, calls_made}, sum[2];
        MPI_Reduce(tot, sum, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (0 == world_rank) {
            printf("%s: seed %llu: %ld steps, %ld calls checked on %d ranks, 0 failures\n", PROGRAM,
                   (unsigned long long) opt_seed, k, sum[1], world_size);
        }
    }
    if (opt_counters) pvar_families_close(&pvars);
    MPI_Finalize();
    return 0;
}
