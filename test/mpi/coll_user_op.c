/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_user_op: reductions with user-defined operations (MPI_Op_create), the
 * non-commutative ones in particular, checked against a serial reference.
 *
 *   mpirun -np N coll_user_op [--expect-component=yes|no] [--max-count C]
 *                             [--forms blocking,nonblocking,persistent] [--verbose]
 *                             [--thread-multiple]
 *
 * --thread-multiple initializes MPI with MPI_THREAD_MULTIPLE, where coll/async's
 * progress thread completes the requests, and with them the callback by which
 * Open MPI's bindings release the op and datatypes they retained.
 *
 * Operations (each on its own datatype):
 *   affine       an element is a pair of uint32 (a, b), the map x -> a*x + b
 *                (mod 2^32); u op v is "u, then v": (v.a*u.a, v.a*u.b + v.b).
 *                Associative, NOT commutative (MPI_Op_create(..., 0, ...)), on
 *                MPI_Type_contiguous(2, MPI_UINT32_T).
 *   affine-gaps  the same operation on a non-contiguous type: a vector of 2 uint32
 *                with stride 2 (a at byte 0, b at byte 8) resized to an extent of
 *                16, so every element has two 4-byte holes that nobody may write.
 *   int-sum+1    commutative (commute = 1) on MPI_INT: x op y = x + y + 1 (mod 2^32).
 * MPI defines the result as x_0 op x_1 op ... op x_{n-1} in rank order, the user
 * function being called as f(invec, inoutvec) with inoutvec = invec op inoutvec;
 * the reference folds every rank's input (each rank can compute every rank's
 * input: a hash of the rank in the communicator, the element and a per-call salt)
 * in exactly that order.
 *
 * Collectives: MPI_Allreduce, MPI_Reduce (root 0, the middle rank, the last
 * rank), MPI_Scan, MPI_Exscan (rank 0's result is undefined: not checked),
 * MPI_Reduce_scatter_block and MPI_Reduce_scatter (uneven counts, one of them
 * zero from 2 ranks on), each in blocking, nonblocking (MPI_I..., MPI_Wait) and
 * persistent form (MPI_..._init, then twice: new inputs, MPI_Start, MPI_Wait,
 * check; then MPI_Request_free), with and without MPI_IN_PLACE (at the root only
 * for MPI_Reduce), at counts 0, 1, 7, 1000 and 100000 (the largest crosses the
 * component's 256 KiB shared-memory slots, so the exchange runs several rounds),
 * on MPI_COMM_WORLD and on a communicator whose ranks run in the reverse order of
 * MPI_COMM_WORLD's (MPI_Comm_split with key size-1-rank), so folding in world
 * order instead of communicator order gives wrong results.
 *
 * Each result is checked element by element; the holes of affine-gaps and one
 * element past the end of every receive buffer must keep the pattern they were
 * filled with; the user function must be called with the datatype of the call.
 *
 * Around every call (every MPI_Start for the persistent form) coll/async's
 * counter coll_async_<name>_native must move by one and
 * coll_async_<name>_delegated not at all, so the component, not a fallback,
 * ran it; calls Open MPI's bindings answer without calling coll (a zero count,
 * see coll_suite_expected.c) must move neither. --expect-component=no skips the
 * counters (for runs without the component).
 *
 * COLL_USER_OP_BREAK=1 in the environment corrupts one reference value, so the run
 * must fail: proof that the checks can fail.
 *
 * Ends with "coll_user_op: N checks, M failures" (summed over the ranks) on rank
 * 0; the exit status is non-zero on any failure.
 */

#include <mpi.h>
#include "mpi4_persistent.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_program.h"
#include "pvar_counter.h"

#define SENTINEL 0xA5
#define PROGRAM "coll_user_op"

/* --- the operations and their datatypes --------------------------------------- */

struct value {
    uint32_t a, b;
};

struct optype {
    const char *name;
    int pair;      /* 1: (a, b) affine maps; 0: one int */
    int commute;   /* as given to MPI_Op_create */
    size_t extent; /* bytes from one element to the next */
    size_t off_b;  /* offset of b in an element (pairs) */
    MPI_Datatype dtype;
    MPI_Op op;
};

enum { AFFINE, AFFINE_GAPS, INT_SUM1, NUM_OPTYPES };

static struct optype optypes[NUM_OPTYPES] = {
    [AFFINE] = {"affine", 1, 0, 8, 4, MPI_DATATYPE_NULL, MPI_OP_NULL},
    [AFFINE_GAPS] = {"affine-gaps", 1, 0, 16, 8, MPI_DATATYPE_NULL, MPI_OP_NULL},
    [INT_SUM1] = {"int-sum+1", 0, 1, sizeof(int), 0, MPI_DATATYPE_NULL, MPI_OP_NULL},
};

/* Calls of a user function with a datatype other than its operation's. */
static long bad_dtype_calls;

static struct value load(const struct optype *t, const char *buf, size_t i)
{
    struct value v = {0, 0};

    memcpy(&v.a, buf + i * t->extent, sizeof(uint32_t));
    if (t->pair) {
        memcpy(&v.b, buf + i * t->extent + t->off_b, sizeof(uint32_t));
    }
    return v;
}

static void store(const struct optype *t, char *buf, size_t i, struct value v)
{
    memcpy(buf + i * t->extent, &v.a, sizeof(uint32_t));
    if (t->pair) {
        memcpy(buf + i * t->extent + t->off_b, &v.b, sizeof(uint32_t));
    }
}

/* u op v, u from the lower rank. */
static struct value combine(const struct optype *t, struct value u, struct value v)
{
    struct value r;

    if (t->pair) {
        r.a = v.a * u.a;
        r.b = v.a * u.b + v.b;
    } else {
        r.a = u.a + v.a + 1u; /* int arithmetic mod 2^32, without signed overflow */
        r.b = 0;
    }
    return r;
}

static const struct optype *optype_of_dtype(MPI_Datatype dtype)
{
    for (int k = 0; k < NUM_OPTYPES; ++k) {
        if (optypes[k].dtype == dtype) {
            return &optypes[k];
        }
    }
    return NULL;
}

/* The user functions: inoutvec[i] = invec[i] op inoutvec[i]. */
static void apply(const struct optype *want, void *invec, void *inoutvec, int *len,
                  MPI_Datatype *dtype)
{
    const struct optype *t = optype_of_dtype(*dtype);

    if (NULL == t || t != want) {
        ++bad_dtype_calls;
        return;
    }
    for (int i = 0; i < *len; ++i) {
        store(t, inoutvec, (size_t) i,
              combine(t, load(t, invec, (size_t) i), load(t, inoutvec, (size_t) i)));
    }
}

static void affine_fn(void *invec, void *inoutvec, int *len, MPI_Datatype *dtype)
{
    /* One function for both affine types: which one is told by the datatype. */
    const struct optype *t = optype_of_dtype(*dtype);

    apply(t != NULL && t->pair ? t : &optypes[AFFINE], invec, inoutvec, len, dtype);
}

static void int_fn(void *invec, void *inoutvec, int *len, MPI_Datatype *dtype)
{
    apply(&optypes[INT_SUM1], invec, inoutvec, len, dtype);
}

static void create_optypes(void)
{
    MPI_Datatype vec;

    MPI_Type_contiguous(2, MPI_UINT32_T, &optypes[AFFINE].dtype);
    MPI_Type_commit(&optypes[AFFINE].dtype);
    MPI_Op_create(affine_fn, 0, &optypes[AFFINE].op);

    MPI_Type_vector(2, 1, 2, MPI_UINT32_T, &vec);
    MPI_Type_create_resized(vec, 0, 16, &optypes[AFFINE_GAPS].dtype);
    MPI_Type_free(&vec);
    MPI_Type_commit(&optypes[AFFINE_GAPS].dtype);
    MPI_Op_create(affine_fn, 0, &optypes[AFFINE_GAPS].op);

    optypes[INT_SUM1].dtype = MPI_INT;
    MPI_Op_create(int_fn, 1, &optypes[INT_SUM1].op);
}

static void free_optypes(void)
{
    for (int k = 0; k < NUM_OPTYPES; ++k) {
        MPI_Op_free(&optypes[k].op);
        if (optypes[k].dtype != MPI_INT) {
            MPI_Type_free(&optypes[k].dtype);
        }
    }
}

/* Element idx of rank's input in the call with this salt. */
static struct value input_of(const struct optype *t, int rank, size_t idx, uint32_t salt)
{
    uint64_t h = (uint64_t) rank * 0x9E3779B97F4A7C15ull ^ (uint64_t) idx * 0xBF58476D1CE4E5B9ull
                 ^ (uint64_t) salt * 0x94D049BB133111EBull;
    struct value v;

    h ^= h >> 31;
    h *= 0xD6E9A0D5A3F1C2B7ull;
    h ^= h >> 29;
    v.a = (uint32_t) h;
    v.b = (uint32_t) (h >> 32);
    if (t->pair) {
        v.a |= 1; /* odd multipliers: compositions never collapse to 0 */
    } else {
        v.b = 0;
    }
    return v;
}

/* input[lo] op input[lo+1] op ... op input[hi] of element idx. */
static struct value reference(const struct optype *t, int lo, int hi, size_t idx, uint32_t salt)
{
    struct value acc = input_of(t, lo, idx, salt);

    for (int r = lo + 1; r <= hi; ++r) {
        acc = combine(t, acc, input_of(t, r, idx, salt));
    }
    return acc;
}

/* --- collectives, forms and counters ------------------------------------------ */

enum family { ALLREDUCE, REDUCE, SCAN, EXSCAN, REDUCE_SCATTER_BLOCK, REDUCE_SCATTER, NUM_FAMILIES };
enum form { BLOCKING, NONBLOCKING, PERSISTENT, NUM_FORMS };

static const char *const family_names[NUM_FAMILIES] = {
    "allreduce", "reduce", "scan", "exscan", "reduce_scatter_block", "reduce_scatter",
};
static const char *const form_names[NUM_FORMS] = {"blocking", "nonblocking", "persistent"};

static int use_counters = 1;
static int verbose; /* --verbose: each case on stderr before it runs */
static int form_enabled[NUM_FORMS] = {1, 1, 1}; /* --forms */
static struct pvar_families counters; /* unless --expect-component=no */

/*
 * Whether Open MPI 4.1's bindings hand the call to coll at all: a zero count
 * (all counts zero for reduce_scatter) is answered by the binding for allreduce,
 * reduce and reduce_scatter in every form, for blocking and nonblocking
 * reduce_scatter_block, and for blocking scan and exscan (coll_suite_expected.c).
 */
static int reaches_coll(enum family f, enum form m, int count, int any_count)
{
    switch (f) {
    case ALLREDUCE:
    case REDUCE:
        return count > 0;
    case REDUCE_SCATTER:
        return any_count;
    case REDUCE_SCATTER_BLOCK:
        return PERSISTENT == m || count > 0;
    case SCAN:
    case EXSCAN:
        return BLOCKING != m || count > 0;
    default:
        return 1;
    }
}

/* --- checks ------------------------------------------------------------------- */

static int world_rank;
static long checks, failures;
static int break_reference; /* COLL_USER_OP_BREAK=1 */
static int broken;          /* the one corrupted reference was used */

struct call {
    enum family family;
    enum form form;
    const struct optype *t;
    MPI_Comm comm;
    const char *comm_name;
    int count, root, in_place;
    uint32_t salt;
    int start; /* persistent: which start (0, 1) */
};

static void describe(char *out, size_t len, const struct call *c)
{
    int n = snprintf(out, len, "%s %s, op %s, %s, count %d", form_names[c->form],
                     family_names[c->family], c->t->name, c->comm_name, c->count);

    if (REDUCE == c->family && n > 0 && (size_t) n < len) {
        n += snprintf(out + n, len - (size_t) n, ", root %d", c->root);
    }
    if (c->in_place && n > 0 && (size_t) n < len) {
        n += snprintf(out + n, len - (size_t) n, ", MPI_IN_PLACE");
    }
    if (PERSISTENT == c->form && n > 0 && (size_t) n < len) {
        snprintf(out + n, len - (size_t) n, ", start %d", c->start + 1);
    }
}

#define FAIL(c, ...)                                                                     \
    do {                                                                                 \
        if (failures++ < 20) {                                                           \
            char what_[256], line_[512];                                                 \
            describe(what_, sizeof(what_), (c));                                         \
            snprintf(line_, sizeof(line_), __VA_ARGS__);                                 \
            fprintf(stderr, PROGRAM ": rank %d: FAIL %s: %s\n", world_rank, what_, line_); \
        }                                                                                \
    } while (0)

/* Checks that bytes [from, to) of buf still hold the fill pattern. */
static int untouched(const char *buf, size_t from, size_t to)
{
    for (size_t i = from; i < to; ++i) {
        if ((unsigned char) buf[i] != SENTINEL) {
            return 0;
        }
    }
    return 1;
}

/*
 * Checks elements [0, nres) of rbuf against the fold of ranks lo..hi of input
 * element first + i, the holes of those elements, and the guard element at
 * rbuf_elems (one past the end of the buffer).
 */
static void check_result(const struct call *c, const char *rbuf, size_t nres, size_t first,
                         int lo, int hi, size_t rbuf_elems)
{
    const struct optype *t = c->t;
    size_t shown = 0;

    ++checks;
    for (size_t i = 0; i < nres; ++i) {
        struct value want = reference(t, lo, hi, first + i, c->salt);
        struct value got = load(t, rbuf, i);

        if (break_reference && !broken && 7 == c->count && ALLREDUCE == c->family
            && BLOCKING == c->form && i == 3) {
            want.a ^= 0x10; /* the deliberate mistake: the run must fail */
            broken = 1;
        }
        if (want.a != got.a || want.b != got.b) {
            if (shown++ < 2) {
                FAIL(c, "element %zu is (%u, %u), expected (%u, %u) (ranks %d..%d folded "
                     "in order)", i, (unsigned) got.a, (unsigned) got.b, (unsigned) want.a,
                     (unsigned) want.b, lo, hi);
            }
        }
        if (t->pair && (!untouched(rbuf, i * t->extent + 4, i * t->extent + t->off_b)
                        || !untouched(rbuf, i * t->extent + t->off_b + 4, (i + 1) * t->extent))) {
            if (shown++ < 2) {
                FAIL(c, "a hole of element %zu was written (expected the 0x%02X pattern)", i,
                     SENTINEL);
            }
        }
    }
    if (!untouched(rbuf, rbuf_elems * t->extent, (rbuf_elems + 1) * t->extent)) {
        FAIL(c, "the element past the end of the receive buffer was written (expected the "
             "0x%02X pattern)", SENTINEL);
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

static void read_counters(const struct call *c, unsigned long long out[PVAR_PATHS])
{
    if (use_counters) {
        pvar_families_read(&counters, c->family, c->form, out);
    } else {
        out[PVAR_PATH_NATIVE] = out[PVAR_PATH_DELEGATED] = 0;
    }
}

/* --- one case ----------------------------------------------------------------- */

struct layout {
    int n, me;
    int *rcounts;      /* reduce_scatter: per rank; else NULL */
    size_t in_elems;   /* elements of one rank's input */
    size_t res_elems;  /* elements of this rank's result (0: none defined) */
    size_t res_first;  /* input element of result element 0 */
    int lo, hi;        /* ranks folded into this rank's result */
    int any_count;
};

static void plan_layout(const struct call *c, struct layout *l)
{
    MPI_Comm_size(c->comm, &l->n);
    MPI_Comm_rank(c->comm, &l->me);
    l->rcounts = NULL;
    l->in_elems = (size_t) c->count;
    l->res_elems = (size_t) c->count;
    l->res_first = 0;
    l->lo = 0;
    l->hi = l->n - 1;
    l->any_count = c->count > 0;
    switch (c->family) {
    case ALLREDUCE:
        break;
    case REDUCE:
        if (l->me != c->root) {
            l->res_elems = 0;
        }
        break;
    case SCAN:
        l->hi = l->me;
        break;
    case EXSCAN:
        l->hi = l->me - 1;
        if (0 == l->me) {
            l->res_elems = 0; /* undefined */
            l->hi = 0;
        }
        break;
    case REDUCE_SCATTER_BLOCK:
        l->in_elems = (size_t) l->n * (size_t) c->count;
        l->res_first = (size_t) l->me * (size_t) c->count;
        break;
    case REDUCE_SCATTER:
        /* Uneven: rank r gets count + r elements, rank 1 none. */
        l->rcounts = malloc((size_t) l->n * sizeof(int));
        l->in_elems = 0;
        l->any_count = 0;
        for (int r = 0; r < l->n; ++r) {
            l->rcounts[r] = 1 == r ? 0 : c->count + (c->count > 0 ? r : 0);
            if (r == l->me) {
                l->res_first = l->in_elems;
            }
            l->in_elems += (size_t) l->rcounts[r];
            l->any_count |= l->rcounts[r] > 0;
        }
        l->res_elems = (size_t) l->rcounts[l->me];
        break;
    default:
        break;
    }
}

static char *alloc_filled(const struct optype *t, size_t elems)
{
    size_t bytes = (elems + 1) * t->extent; /* one guard element */
    char *buf = malloc(bytes);

    if (NULL == buf) {
        fprintf(stderr, PROGRAM ": out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, SENTINEL, bytes);
    return buf;
}

static void fill_input(const struct call *c, const struct layout *l, char *buf)
{
    for (size_t i = 0; i < l->in_elems; ++i) {
        store(c->t, buf, i, input_of(c->t, l->me, i, c->salt));
    }
}

/* Starts the call (nonblocking, persistent: the request; blocking: runs it). */
static int issue(const struct call *c, const struct layout *l, const void *sbuf, void *rbuf,
                 MPI_Request *req)
{
    MPI_Datatype dt = c->t->dtype;
    MPI_Op op = c->t->op;

    switch (c->form) {
    case BLOCKING:
        switch (c->family) {
        case ALLREDUCE: return MPI_Allreduce(sbuf, rbuf, c->count, dt, op, c->comm);
        case REDUCE: return MPI_Reduce(sbuf, rbuf, c->count, dt, op, c->root, c->comm);
        case SCAN: return MPI_Scan(sbuf, rbuf, c->count, dt, op, c->comm);
        case EXSCAN: return MPI_Exscan(sbuf, rbuf, c->count, dt, op, c->comm);
        case REDUCE_SCATTER_BLOCK:
            return MPI_Reduce_scatter_block(sbuf, rbuf, c->count, dt, op, c->comm);
        case REDUCE_SCATTER: return MPI_Reduce_scatter(sbuf, rbuf, l->rcounts, dt, op, c->comm);
        default: return MPI_ERR_OTHER;
        }
    case NONBLOCKING:
        switch (c->family) {
        case ALLREDUCE: return MPI_Iallreduce(sbuf, rbuf, c->count, dt, op, c->comm, req);
        case REDUCE: return MPI_Ireduce(sbuf, rbuf, c->count, dt, op, c->root, c->comm, req);
        case SCAN: return MPI_Iscan(sbuf, rbuf, c->count, dt, op, c->comm, req);
        case EXSCAN: return MPI_Iexscan(sbuf, rbuf, c->count, dt, op, c->comm, req);
        case REDUCE_SCATTER_BLOCK:
            return MPI_Ireduce_scatter_block(sbuf, rbuf, c->count, dt, op, c->comm, req);
        case REDUCE_SCATTER:
            return MPI_Ireduce_scatter(sbuf, rbuf, l->rcounts, dt, op, c->comm, req);
        default: return MPI_ERR_OTHER;
        }
    case PERSISTENT:
        switch (c->family) {
        case ALLREDUCE:
            return MPI_Allreduce_init(sbuf, rbuf, c->count, dt, op, c->comm, MPI_INFO_NULL, req);
        case REDUCE:
            return MPI_Reduce_init(sbuf, rbuf, c->count, dt, op, c->root, c->comm,
                                   MPI_INFO_NULL, req);
        case SCAN:
            return MPI_Scan_init(sbuf, rbuf, c->count, dt, op, c->comm, MPI_INFO_NULL, req);
        case EXSCAN:
            return MPI_Exscan_init(sbuf, rbuf, c->count, dt, op, c->comm, MPI_INFO_NULL, req);
        case REDUCE_SCATTER_BLOCK:
            return MPI_Reduce_scatter_block_init(sbuf, rbuf, c->count, dt, op, c->comm,
                                                 MPI_INFO_NULL, req);
        case REDUCE_SCATTER:
            return MPI_Reduce_scatter_init(sbuf, rbuf, l->rcounts, dt, op, c->comm,
                                           MPI_INFO_NULL, req);
        default: return MPI_ERR_OTHER;
        }
    default:
        return MPI_ERR_OTHER;
    }
}

static uint32_t next_salt;

static void run_case(struct call *c)
{
    struct layout l;
    char *sbuf = NULL, *rbuf = NULL;
    size_t rbuf_elems;
    int root_side, rc, want;
    unsigned long long before[PVAR_PATHS];
    MPI_Request req = MPI_REQUEST_NULL;
    long bad_before = bad_dtype_calls;

    plan_layout(c, &l);
    /* MPI_Reduce: the receive buffer only at the root, MPI_IN_PLACE there only. */
    root_side = REDUCE != c->family || l.me == c->root;
    int in_place = c->in_place && root_side;
    rbuf_elems = in_place ? (l.in_elems > l.res_elems ? l.in_elems : l.res_elems) : l.res_elems;
    if (root_side) {
        rbuf = alloc_filled(c->t, rbuf_elems);
    }
    if (!in_place) {
        sbuf = alloc_filled(c->t, l.in_elems);
    }
    want = reaches_coll(c->family, c->form, c->count, l.any_count);

    for (c->start = 0; c->start < (PERSISTENT == c->form ? 2 : 1); ++c->start) {
        c->salt = next_salt++;
        if (verbose) {
            char what[256];

            describe(what, sizeof(what), c);
            fprintf(stderr, PROGRAM ": rank %d: %s\n", world_rank, what);
        }
        if (in_place) {
            memset(rbuf, SENTINEL, (rbuf_elems + 1) * c->t->extent);
            fill_input(c, &l, rbuf);
        } else {
            fill_input(c, &l, sbuf);
            if (NULL != rbuf) {
                memset(rbuf, SENTINEL, (rbuf_elems + 1) * c->t->extent);
            }
        }
        if (PERSISTENT != c->form || 0 == c->start) {
            read_counters(c, before);
            rc = issue(c, &l, in_place ? MPI_IN_PLACE : sbuf, rbuf, &req);
            if (MPI_SUCCESS != rc) {
                FAIL(c, "returned %d", rc);
                goto out;
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
                goto out;
            }
        }
        if (BLOCKING != c->form) {
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (MPI_SUCCESS != rc) {
                FAIL(c, "MPI_Wait returned %d", rc);
                goto out;
            }
        }
        check_counters(c, before, (unsigned long long) want);
        if (NULL != rbuf) {
            check_result(c, rbuf, l.res_elems, l.res_first, l.lo, l.hi, rbuf_elems);
        }
        ++checks;
        if (bad_dtype_calls != bad_before) {
            FAIL(c, "the user function was called %ld times with a datatype other than the "
                 "call's (expected none)", bad_dtype_calls - bad_before);
            bad_before = bad_dtype_calls;
        }
    }
out:
    if (PERSISTENT == c->form && MPI_REQUEST_NULL != req) {
        MPI_Request_free(&req);
    }
    free(sbuf);
    free(rbuf);
    free(l.rcounts);
}

/* --- main --------------------------------------------------------------------- */

static const int counts[] = {0, 1, 7, 1000, 100000};

int main(int argc, char **argv)
{
    struct coll_program_options opt = {.use_counters = 1,
                                       .max_count = 100000,
                                       .form_names = form_names,
                                       .form_enabled = form_enabled,
                                       .num_forms = NUM_FORMS};
    int world_size, max_count;
    MPI_Comm reversed;

    if (!coll_program_start(PROGRAM, "", &argc, &argv, &opt, NULL, NULL)) {
        return 2;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    use_counters = opt.use_counters;
    verbose = opt.verbose;
    max_count = opt.max_count;
    break_reference = coll_program_break("COLL_USER_OP_BREAK");

    create_optypes();
    MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - 1 - world_rank, &reversed);
    if (use_counters) {
        pvar_families_open(&counters, family_names, NUM_FAMILIES, PROGRAM);
    }

    struct {
        MPI_Comm comm;
        const char *name;
    } comms[] = {{MPI_COMM_WORLD, "MPI_COMM_WORLD"}, {reversed, "rank-reversed communicator"}};

    for (size_t ci = 0; ci < sizeof(comms) / sizeof(comms[0]); ++ci) {
        int n;

        MPI_Comm_size(comms[ci].comm, &n);
        for (int k = 0; k < NUM_OPTYPES; ++k) {
            for (int f = 0; f < NUM_FAMILIES; ++f) {
                int roots[3] = {0, n / 2, n - 1};
                int nroots = REDUCE == f ? 3 : 1;

                for (int ri = 0; ri < nroots; ++ri) {
                    for (size_t ni = 0; ni < sizeof(counts) / sizeof(counts[0]); ++ni) {
                        if (counts[ni] > max_count) {
                            continue;
                        }
                        for (int ip = 0; ip < 2; ++ip) {
                            for (int m = 0; m < NUM_FORMS; ++m) {
                                if (!form_enabled[m]) {
                                    continue;
                                }
                                struct call c = {
                                    .family = (enum family) f,
                                    .form = (enum form) m,
                                    .t = &optypes[k],
                                    .comm = comms[ci].comm,
                                    .comm_name = comms[ci].name,
                                    .count = counts[ni],
                                    .root = roots[ri],
                                    .in_place = ip,
                                };

                                run_case(&c);
                            }
                        }
                    }
                }
            }
        }
    }

    if (use_counters) {
        pvar_families_close(&counters);
    }
    MPI_Comm_free(&reversed);
    free_optypes();

    return coll_program_finish(PROGRAM, checks, failures,
                               break_reference ? "; COLL_USER_OP_BREAK=1 corrupted a reference"
                                               : "");
}
