/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_suite: the MPI correctness suite of coll/async.
 *
 * Every rank builds its inputs from (rank, index, type, op) alone, computes the
 * result every collective must produce by itself, and compares. Around every
 * call it reads the component's MPI_T counters and checks which path the call
 * took (native or delegated, see expected_path()).
 *
 * Files:
 *   coll_suite.c           options, communicators, the plan of checks, the summary
 *   coll_suite_expected.c  expected_path(): the path coll/async should take, and
 *                          ompi_calls_coll(): the calls Open MPI never hands to coll
 *   coll_suite_types.c     the datatype and operation tables, inputs and references
 *   coll_suite_pvars.c     MPI_T reader of the coll_async_<name>_<path> counters
 *   coll_suite_check.c     running one call or a batch: counters, completion, compare
 *   coll_suite_reduce.c    the reductions (allreduce, reduce, reduce_scatter*, scan, exscan)
 *   coll_suite_move.c      the data-movement collectives and barrier
 */

#ifndef COLL_SUITE_H
#define COLL_SUITE_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>
#include "mpi4_persistent.h" /* MPI_<Name>_init, on Open MPI 4.1 too */

/* ---- collectives: the 51 the component intercepts ------------------------- */

/* X(name): one entry per family in the coll framework's order; each family has a
 * blocking form, a nonblocking one ("i" name) and a persistent one ("_init" name:
 * MPI_<Name>_init, then MPI_Start or MPI_Startall). */
#define SUITE_FAMILIES(X)                                                       \
    X(allgather) X(allgatherv) X(allreduce) X(alltoall) X(alltoallv)            \
    X(alltoallw) X(barrier) X(bcast) X(exscan) X(gather) X(gatherv) X(reduce)   \
    X(reduce_scatter_block) X(reduce_scatter) X(scan) X(scatter) X(scatterv)

enum form { FORM_BLOCKING, FORM_NONBLOCKING, FORM_PERSISTENT, NUM_FORMS };

/* Collective id = NUM_FORMS * family + form. */
enum coll_id {
#define SUITE_COLL_ENUM(l) COLL_##l, COLL_i##l, COLL_##l##_init,
    SUITE_FAMILIES(SUITE_COLL_ENUM)
#undef SUITE_COLL_ENUM
    NUM_COLLS
};

enum path { PATH_NATIVE, PATH_DELEGATED, NUM_PATHS };

extern const char *const coll_names[NUM_COLLS]; /* "allreduce", "iallreduce", "allreduce_init" */
extern const char *const path_names[NUM_PATHS]; /* "native", "delegated" */

static inline enum form coll_form(enum coll_id c) { return (enum form) ((int) c % NUM_FORMS); }
static inline enum coll_id coll_blocking_form(enum coll_id c)
{
    return (enum coll_id) ((int) c - (int) c % NUM_FORMS);
}
/* Whether the call hands back a request (nonblocking and persistent forms). */
static inline int coll_has_request(enum coll_id c) { return FORM_BLOCKING != coll_form(c); }

/*
 * FORMS(c, Name, name, args...): the call of check c's form with these arguments:
 * MPI_<Name>(args), MPI_I<name>(args, &c->req) or MPI_<Name>_init(args,
 * MPI_INFO_NULL, &c->req). The persistent form only creates the request; the
 * runner starts it.
 */
#define FORMS(c, Name, name, ...)                                                       \
    (FORM_NONBLOCKING == coll_form((c)->coll)  ? MPI_I##name(__VA_ARGS__, &(c)->req)    \
     : FORM_PERSISTENT == coll_form((c)->coll) ? MPI_##Name##_init(__VA_ARGS__,         \
                                                                   MPI_INFO_NULL,       \
                                                                   &(c)->req)           \
                                               : MPI_##Name(__VA_ARGS__))

/* coll_suite_expected.c */
struct check;
enum path expected_path(const struct check *c);
/* Whether Open MPI hands this call to coll at all (it skips some zero counts and
 * single-process barriers and broadcasts). */
int ompi_calls_coll(const struct check *c);
/* expected_path() unless --delegate forced this collective's family to delegate. */
enum path path_for(const struct check *c);

/* ---- operations and datatypes --------------------------------------------- */

enum op_id {
    OP_MAX, OP_MIN, OP_SUM, OP_PROD, OP_LAND, OP_LOR, OP_LXOR, OP_BAND, OP_BOR, OP_BXOR,
    OP_MINLOC, OP_MAXLOC,
    NUM_OPS,
    OP_NONE = NUM_OPS /* data movement: no operation */
};

#define OPBIT(op) (1u << (op))

typedef struct type_info {
    const char *name;
    MPI_Datatype dt;
    size_t extent; /* sizeof the C type (MPI extent of the predefined type) */
    unsigned ops;  /* OPBIT()s MPI-3.1 allows for this type in reductions */
    /* buf[k] = the input of `rank` at element index first + k for op (OP_NONE:
     * data-movement values). */
    void (*gen)(void *buf, size_t n, int op, int rank, int size, uint64_t first);
    /* acc[k] = acc[k] op in[k] */
    void (*combine)(int op, void *acc, const void *in, size_t n);
    /* index of the first element where a and b differ, or -1 */
    long (*first_diff)(const void *a, const void *b, size_t n);
    void (*format)(const void *element, char *out, size_t len);
    /* Integer types only (else NULL): set by probe_op_bugs() when this Open MPI
     * orders MAX/MIN with the wrong signedness; the MAX/MIN inputs then keep the
     * top bit clear, where signed and unsigned orders agree. */
    int *narrow_max_min;
} type_info;

extern const type_info suite_types[];
extern const int num_suite_types;
const type_info *type_by_name(const char *name); /* "MPI_INT"; aborts when unknown */

/* Detects Open MPI's known MAX/MIN signedness bugs with MPI_Reduce_local and
 * prints a note (rank 0) for each type affected. */
void probe_op_bugs(int print);

MPI_Op op_handle(int op);
const char *op_name(int op); /* "MPI_SUM"; "-" for OP_NONE */

/* From now on, inputs, references and sentinels are those of this round (0 until
 * called): the same positions get other values. */
void set_input_round(unsigned round);

/* Fills buf with values that no collective writes, to see untouched areas. */
void fill_sentinel(const type_info *t, void *buf, size_t n, uint64_t salt);
/* The reduction of the inputs of ranks lo..hi (inclusive) at elements first..first+n-1. */
void reference_reduce(const type_info *t, int op, void *out, size_t n, int lo, int hi, int size,
                      uint64_t first);

/* ---- communicators -------------------------------------------------------- */

typedef struct comm_ctx {
    MPI_Comm comm;
    char name[32]; /* "world", "dup", "split-even", "split-odd", "reversed" */
    int rank, size;
    int one_node; /* all its ranks share a node */
} comm_ctx;

/* ---- one collective call and what it must produce --------------------------- */

/* An area of a buffer compared, element by element, with the expected values. */
typedef struct region {
    const char *what; /* "recvbuf", "sendbuf", "gap" ... */
    const void *got;
    void *want; /* owned by the check */
    size_t n;
    const type_info *type;
    size_t elem_base; /* index of this region's first element in the reported buffer */
} region;

typedef struct check check;
struct check {
    enum coll_id coll;
    const comm_ctx *cx;
    const type_info *type; /* NULL for barrier */
    int op;                /* OP_NONE for data movement */
    size_t count;          /* the count argument (per block for the all-to-all style) */
    int root;              /* -1 when the collective has no root */
    int in_place;
    const char *variant;   /* extra words for the failure line, or NULL */
    int shift;             /* alltoallw: which datatypes the peers use */

    /* The call itself: issues the blocking call, starts the nonblocking one into
     * req, or creates the persistent request in req (which the runner starts).
     * Returns an MPI error code. */
    int (*call)(check *c);
    MPI_Request req;
    /* The same check built anew (with the current input round); the persistent
     * runner uses it for the inputs and references of each later start. */
    check *(*rebuild)(const check *c);
    int start; /* persistent: which start of the request (1, 2, ...) is checked */

    void *sbuf, *rbuf; /* MPI_IN_PLACE is passed by call(), these stay real buffers */
    void *want_s, *want_r;
    int scount, rcount; /* the single counts of the v variants */
    int *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Datatype *stypes, *rtypes;

    region *regions;
    int nregions, cap_regions;
    void **allocs; /* check_alloc()'s memory */
    size_t *alloc_sizes;
    int nallocs, cap_allocs;
};

/* coll_suite_check.c */
check *check_new(enum coll_id coll, const comm_ctx *cx, const type_info *type, int op,
                 size_t count, int root, int in_place);
void *check_alloc(check *c, size_t bytes); /* zeroed memory freed with the check */
void check_region(check *c, const char *what, const void *got, void *want, size_t n,
                  const type_info *type, size_t elem_base);
void check_free(check *c);
/* Runs one check: counters before, the call (and its completion), counters after,
 * then compares. A persistent check creates its request (no counter may move),
 * starts it PERSISTENT_STARTS times, each time on new inputs, checking counters
 * and results after each, then frees it. */
void run_check(check *c);
/* Runs several nonblocking checks at once: all started, one MPI_Waitall; or
 * several persistent ones: all created, then PERSISTENT_STARTS times MPI_Startall
 * and one MPI_Waitall, then freed; then the first one's request is created again
 * and freed without a start (no counter may move). */
void run_batch(check **cs, int n);
#define PERSISTENT_STARTS 2
/* The variant words of a batch's checks. */
#define BATCH_VARIANT(coll)                                                            \
    (FORM_PERSISTENT == coll_form(coll) ? "in a Startall batch of 3" : "in a Waitall batch of 3")

/* Failure reporting and tallies: record_check() counts a check (and a failure when
 * !ok); the report functions only print the line that says why. */
void record_check(int ok);
void report_failure(const check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void report_plain_failure(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern long suite_checks, suite_failures;

/* coll_suite_pvars.c */
int counters_init(int expect_component); /* 0 on success; records its own checks */
int counters_available(void);
void counters_read(enum coll_id coll, unsigned long long out[NUM_PATHS]);
/* How far each path's counters moved since counters_init, all collectives together. */
void counters_moved(unsigned long long moved[NUM_PATHS]);
void counters_finish(void); /* with --expect-component=no: nothing moved in the run */

/* coll_suite_reduce.c and coll_suite_move.c: the checks of one collective. */
void plan_reduction(enum coll_id coll, const comm_ctx *cx);
void plan_movement(enum coll_id coll, const comm_ctx *cx);
void plan_barrier(enum coll_id coll, const comm_ctx *cx);

/* ---- options (coll_suite.c) ----------------------------------------------- */

typedef struct suite_options {
    int expect_component;    /* --expect-component=yes|no */
    size_t max_count;        /* --max-count, --quick */
    int only[NUM_COLLS];     /* --only: 1 for the collectives to run */
    int delegate[NUM_COLLS]; /* --delegate: forced to the delegated path */
    int comm_world_only;     /* --comm-world-only */
    int interleaved;         /* --interleaved */
    int virtual_nodes;       /* --virtual-nodes: as coll_async_virtual_nodes */
    int thread_multiple;     /* --thread-multiple */
    int fresh_comms;         /* --fresh-comms */
    int break_reference;     /* COLL_SUITE_BREAK_REFERENCE=1 */
    int verbose;             /* --verbose */
} suite_options;

extern suite_options opt;

/* The counts every collective is checked with (those up to opt.max_count). */
extern const size_t suite_counts[];
extern const int num_suite_counts;
#define COUNT_SMALL_MAX 7      /* full type x op matrix up to here */
#define COUNT_LARGE_MIN 65536  /* representative subsets from here */

/* The per-rank count of the collectives whose buffers grow with the communicator
 * (all-to-all style, reduce_scatter*): count up to COUNT_LARGE_MIN, beyond that
 * count / size (plus 3, to stay uneven) so a rank's whole buffer stays near count. */
size_t per_rank_count(size_t count, int size);
/* Roots first, middle and last without repeats; returns how many. */
int suite_roots(int size, int roots[3]);
/* Deterministic 64-bit mixing used for every input. */
uint64_t suite_hash(uint64_t a, uint64_t b, uint64_t c);

#endif /* COLL_SUITE_H */
