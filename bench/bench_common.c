/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * bench_common - shared parts of coll_latency and overlap; see bench_common.h.
 */
#define _POSIX_C_SOURCE 200809L /* getopt, posix_memalign, sysconf under -std=c99 */

#include "bench_common.h"

#include "../test/mpi/mpi4_persistent.h" /* MPI_<Coll>_init, on Open MPI 4.1 too */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* OSU defaults: fewer iterations once messages get large. */
#define LARGE_MSG_BYTES 8192
#define ITERS_SMALL 10000
#define WARMUP_SMALL 1000
#define ITERS_LARGE 1000
#define WARMUP_LARGE 100

const char *bench_prog = "bench";

/* Copies of struct bench's, for helpers that are not handed one. */
static int my_rank, my_nprocs;

/* ---- the collectives ---------------------------------------------------- */

/* The root sends its validation data from sbuf, the others receive into rbuf,
 * so -c can check rbuf against the root's data. */
static void *bcast_buf(struct bench *b)
{
    return b->rank == BENCH_ROOT ? b->sbuf : b->rbuf;
}

/*
 * The three forms of one collective from one argument list (the arguments
 * before the communicator; they may use `b` and the block count `n`):
 * <lower>_blocking calls MPI_<Upper>, <lower>_start MPI_I<lower> and
 * <lower>_init MPI_<Upper>_init.
 */
#define COLL_FORMS(lower, Upper, ...)                                           \
    static void lower##_blocking(struct bench *b, int n)                        \
    {                                                                           \
        MPI_##Upper(__VA_ARGS__, MPI_COMM_WORLD);                               \
    }                                                                           \
    static void lower##_start(struct bench *b, int n, MPI_Request *req)         \
    {                                                                           \
        MPI_I##lower(__VA_ARGS__, MPI_COMM_WORLD, req);                         \
    }                                                                           \
    static void lower##_init(struct bench *b, int n, MPI_Request *req)          \
    {                                                                           \
        MPI_##Upper##_init(__VA_ARGS__, MPI_COMM_WORLD, MPI_INFO_NULL, req);   \
    }

/* allgatherv with allgather's layout: n elements from each rank, in rank order. */
static int *v_counts, *v_displs;
static void set_v(struct bench *b, int n)
{
    if (!v_counts) {
        v_counts = malloc(sizeof(int) * (size_t)b->nprocs);
        v_displs = malloc(sizeof(int) * (size_t)b->nprocs);
        if (!v_counts || !v_displs)
            bench_die("out of memory", NULL);
    }
    for (int r = 0; r < b->nprocs; r++) {
        v_counts[r] = n;
        v_displs[r] = r * n;
    }
}
static const int *counts_of(struct bench *b, int n)
{
    set_v(b, n);
    return v_counts;
}
static const int *displs_of(struct bench *b, int n)
{
    set_v(b, n);
    return v_displs;
}

COLL_FORMS(allreduce, Allreduce, b->sbuf, b->rbuf, n, b->type, MPI_SUM)
COLL_FORMS(bcast, Bcast, bcast_buf(b), n, b->type, BENCH_ROOT)
COLL_FORMS(reduce, Reduce, b->sbuf, b->rbuf, n, b->type, MPI_SUM, BENCH_ROOT)
COLL_FORMS(allgather, Allgather, b->sbuf, n, b->type, b->rbuf, n, b->type)
COLL_FORMS(alltoall, Alltoall, b->sbuf, n, b->type, b->rbuf, n, b->type)
COLL_FORMS(gather, Gather, b->sbuf, n, b->type, b->rbuf, n, b->type, BENCH_ROOT)
COLL_FORMS(scatter, Scatter, b->sbuf, n, b->type, b->rbuf, n, b->type, BENCH_ROOT)
COLL_FORMS(allgatherv, Allgatherv, b->sbuf, n, b->type, b->rbuf, counts_of(b, n), displs_of(b, n),
           b->type)
COLL_FORMS(reduce_scatter_block, Reduce_scatter_block, b->sbuf, b->rbuf, n, b->type, MPI_SUM)

/* Barrier has no arguments before the communicator, which COLL_FORMS needs. */
static void barrier_blocking(struct bench *b, int n)
{
    (void)b, (void)n;
    MPI_Barrier(MPI_COMM_WORLD);
}
static void barrier_start(struct bench *b, int n, MPI_Request *req)
{
    (void)b, (void)n;
    MPI_Ibarrier(MPI_COMM_WORLD, req);
}
static void barrier_init(struct bench *b, int n, MPI_Request *req)
{
    (void)b, (void)n;
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, req);
}

/* A table entry: names, properties, then the forms COLL_FORMS made. */
#define COLL(lower, Upper, reduces, rooted, send_blocks, recv_blocks, result_at)      \
    { #lower, #Upper, reduces, rooted, send_blocks, recv_blocks, result_at,            \
      lower##_blocking, lower##_start, lower##_init }

static const struct bench_coll collectives[] = {
    /*    name       MPI name   reduces rooted sblocks rblocks result on */
    COLL(allreduce, Allreduce, 1,      0,     0,      0,      RESULT_ALL),
    COLL(bcast,     Bcast,     0,      1,     0,      0,      RESULT_NON_ROOTS),
    COLL(reduce,    Reduce,    1,      1,     0,      0,      RESULT_ROOT),
    COLL(allgather, Allgather, 0,      0,     0,      1,      RESULT_ALL),
    COLL(alltoall,  Alltoall,  0,      0,     1,      1,      RESULT_ALL),
    COLL(gather,    Gather,    0,      1,     0,      1,      RESULT_ROOT),
    COLL(scatter,   Scatter,   0,      1,     1,      0,      RESULT_ALL),
    COLL(allgatherv, Allgatherv, 0,    0,     0,      1,      RESULT_ALL),
    COLL(reduce_scatter_block, Reduce_scatter_block, 1, 0, 1, 0, RESULT_ALL),
    COLL(barrier,   Barrier,   0,      0,     0,      0,      RESULT_NONE),
};
#define NCOLLS (sizeof(collectives) / sizeof(collectives[0]))

/* -C NAME, where nonblocking programs spell the names with a leading 'i'. */
static const struct bench_coll *find_coll(const char *name, int nonblocking)
{
    if (nonblocking && *name++ != 'i')
        return NULL;
    for (size_t i = 0; i < NCOLLS; i++)
        if (!strcmp(name, collectives[i].name))
            return &collectives[i];
    return NULL;
}

/* ---- options ------------------------------------------------------------ */

void bench_die(const char *msg, const char *arg)
{
    if (my_rank == 0)
        fprintf(stderr, "%s: %s%s\n", bench_prog, msg, arg ? arg : "");
    MPI_Finalize();
    exit(EXIT_FAILURE);
}

long bench_parse_long(const char *s, long min, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < min)
        bench_die(what, s);
    return v;
}

static void parse_range(const char *arg, struct bench *b)
{
    const char *max_str = arg, *colon = strchr(arg, ':');
    char *end;

    errno = 0;
    if (colon) {
        b->min_bytes = strtoull(arg, &end, 10);
        if (end != colon)
            bench_die("bad -m range: ", arg);
        max_str = colon + 1;
    }
    b->max_bytes = strtoull(max_str, &end, 10);
    /* A third field steps by a larger factor, so that a quick run covers the same
     * span in fewer sizes (bench/report --quick: 8 B to 16 MiB in 8 sizes). */
    if (colon && *end == ':') {
        const char *factor_str = end + 1;
        b->size_factor = strtoull(factor_str, &end, 10);
        if (end == factor_str || b->size_factor < 2)
            bench_die("bad -m factor (want MIN:MAX:FACTOR with FACTOR >= 2): ", arg);
    }
    /* strtoull accepts a sign, so reject '-' explicitly. */
    if (errno || end == max_str || *end != '\0' || strchr(arg, '-') ||
        b->min_bytes == 0 || b->min_bytes > b->max_bytes)
        bench_die("bad -m range (want [MIN:]MAX[:FACTOR] with 1 <= MIN <= MAX): ", arg);
}

static void parse_type(const char *arg, struct bench *b)
{
    if (!strcmp(arg, "char"))       b->kind = KIND_CHAR;
    else if (!strcmp(arg, "int"))   b->kind = KIND_INT;
    else if (!strcmp(arg, "float")) b->kind = KIND_FLOAT;
    else bench_die("unknown -T type (char, int, float): ", arg);
}

static void usage(int nonblocking, const struct bench_extra *extra)
{
    const char *i = nonblocking ? "i" : "";

    if (my_rank != 0)
        return;
    printf("Usage: %s [-C COLL] [-m [MIN:]MAX[:FACTOR]] [-i ITER] [-x WARMUP] [-B BYTES]"
           " [-T char|int|float]"
           " %s [-h]\n", bench_prog, extra->synopsis);
    printf("  -C COLL       collective, one of (the first is the default):\n"
           "               ");
    for (size_t c = 0; c < NCOLLS; c++)
        printf(" %s%s", i, collectives[c].name);
    printf("\n                rooted ones use root %d, reductions MPI_SUM; sizes are"
           " per rank\n                for allgather(v), alltoall, gather, scatter\n"
           "                and reduce_scatter_block; barrier moves no data: one row,\n"
           "                size 0, whatever -m says\n",
           BENCH_ROOT);
    printf("  -m [MIN:]MAX[:FACTOR]  message sizes in bytes from MIN to MAX, each FACTOR\n"
           "                (default 2) times the last (default 1:1048576)\n"
           "  -i ITER       timed iterations per size (default %d, %d above %d bytes)\n"
           "  -x WARMUP     untimed warm-up iterations per size (default %d, %d above %d bytes)\n"
           "  -B BYTES      at most BYTES / size timed iterations per size (at least 2),\n"
           "                warm-ups at most a fifth of those (at least 1)\n"
           "  -T TYPE       element type: char (MPI_CHAR), int (MPI_INT), float (MPI_FLOAT)\n"
           "%s"
           "  -h            print this help\n",
           ITERS_SMALL, ITERS_LARGE, LARGE_MSG_BYTES,
           WARMUP_SMALL, WARMUP_LARGE, LARGE_MSG_BYTES, extra->usage);
}

/* Handles one common option; returns 0 for letters that are not common. */
static int common_option(int c, const char *arg, struct bench *b, int nonblocking)
{
    switch (c) {
    case 'C':
        if (!(b->coll = find_coll(arg, nonblocking)))
            bench_die("unknown -C collective (see -h): ", arg);
        return 1;
    case 'm': parse_range(arg, b); return 1;
    case 'i': b->iters = bench_parse_long(arg, 1, "bad -i value: "); return 1;
    case 'x': b->warmup = bench_parse_long(arg, 0, "bad -x value: "); return 1;
    case 'B': b->iter_bytes = (size_t)bench_parse_long(arg, 1, "bad -B value: "); return 1;
    case 'T': parse_type(arg, b); return 1;
    default: return 0;
    }
}

static void parse_options(struct bench *b, int argc, char **argv, int nonblocking,
                          const struct bench_extra *extra)
{
    char optstring[64];
    int c;

    snprintf(optstring, sizeof(optstring), "C:m:i:x:B:T:h%s", extra->optstring);
    opterr = 0; /* report errors once, from rank 0, not from every rank */
    while ((c = getopt(argc, argv, optstring)) != -1) {
        if (common_option(c, optarg, b, nonblocking) || extra->handle(c, optarg, extra->ctx))
            continue;
        if (c == 'h') {
            usage(nonblocking, extra);
            MPI_Finalize();
            exit(EXIT_SUCCESS);
        }
        bench_die("invalid option or missing argument (see -h): -",
                  (char[]){ (char)optopt, '\0' });
    }
    if (optind < argc)
        bench_die("unexpected argument: ", argv[optind]);
}

/* ---- buffers and validation data ---------------------------------------- */

/*
 * Validation data: each element is 0 or 1, so a sum over ranks is at most
 * nprocs and exact in every type (signed char included, up to 127 ranks).
 * Bit (rank % 32) of a hash of the element index makes the data vary with
 * both index and rank, so misplaced blocks or dropped ranks show up.
 */
static uint32_t index_hash(size_t i)
{
    uint32_t x = (uint32_t)i * 2654435761u;
    x ^= x >> 16;
    x *= 0x45d9f3bu;
    return x ^ (x >> 16);
}

static int contribution(uint32_t hash, int rank)
{
    return (hash >> (rank % 32)) & 1;
}

static void put_elem(enum elem_kind k, void *buf, size_t i, int v)
{
    switch (k) {
    case KIND_CHAR:  ((char *)buf)[i] = (char)v;   break;
    case KIND_INT:   ((int *)buf)[i] = v;          break;
    case KIND_FLOAT: ((float *)buf)[i] = (float)v; break;
    }
}

static int elem_equals(enum elem_kind k, const void *buf, size_t i, int v)
{
    switch (k) {
    case KIND_CHAR:  return ((const char *)buf)[i] == (char)v;
    case KIND_INT:   return ((const int *)buf)[i] == v;
    case KIND_FLOAT: return ((const float *)buf)[i] == (float)v;
    }
    return 0;
}

static void set_type(struct bench *b)
{
    switch (b->kind) {
    case KIND_INT:   b->type = MPI_INT;   b->elem_size = sizeof(int);   break;
    case KIND_FLOAT: b->type = MPI_FLOAT; b->elem_size = sizeof(float); break;
    default:         b->type = MPI_CHAR;  b->elem_size = sizeof(char);  break;
    }
    /* Counts are ints; the SIZE_MAX bound also keeps size *= 2 and a buffer
     * of one block per rank from wrapping. */
    if (b->max_bytes / b->elem_size > INT32_MAX ||
        b->max_bytes > SIZE_MAX / 2 / (size_t)b->nprocs)
        bench_die("-m MAX too large", NULL);
}

/* Elements (or bytes) of a buffer holding `n` per block: one block, or one
 * per rank when `per_rank`. */
static size_t blocks_of(const struct bench *b, int per_rank, size_t n)
{
    return per_rank ? n * (size_t)b->nprocs : n;
}

static void alloc_buffers(struct bench *b)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t sbytes = blocks_of(b, b->coll->send_blocks, b->max_bytes);
    size_t rbytes = blocks_of(b, b->coll->recv_blocks, b->max_bytes);

    /* Page-aligned buffers, as OSU uses, so alignment doesn't skew results. */
    if (posix_memalign(&b->sbuf, (size_t)page, sbytes) ||
        posix_memalign(&b->rbuf, (size_t)page, rbytes)) {
        /* Other ranks may have succeeded and would wait forever: abort all. */
        fprintf(stderr, "%s: rank %d: out of memory\n", bench_prog, b->rank);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    }
    /* Filling both buffers also faults their pages in before timing.  Element
     * i of sbuf is contribution(index_hash(i), rank) whatever the block size. */
    for (size_t i = 0; i < sbytes / b->elem_size; i++)
        put_elem(b->kind, b->sbuf, i, contribution(index_hash(i), b->rank));
    memset(b->rbuf, 0, rbytes);
}

void bench_init(struct bench *b, int *argc, char ***argv, int nonblocking,
                const struct bench_extra *extra)
{
    const char *slash = strrchr((*argv)[0], '/');

    bench_prog = slash ? slash + 1 : (*argv)[0];
    MPI_Init(argc, argv);
    *b = (struct bench){ .min_bytes = 1, .max_bytes = 1 << 20, .size_factor = 2, .iters = -1,
                         .warmup = -1, .kind = KIND_CHAR, .coll = &collectives[0],
                         .sbuf = NULL, .rbuf = NULL };
    MPI_Comm_rank(MPI_COMM_WORLD, &b->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b->nprocs);
    my_rank = b->rank;
    my_nprocs = b->nprocs;
    parse_options(b, *argc, *argv, nonblocking, extra);
    set_type(b);
    alloc_buffers(b);
}

void bench_finalize(struct bench *b)
{
    free(b->sbuf);
    free(b->rbuf);
    MPI_Finalize();
}

/* ---- running and reporting ---------------------------------------------- */

void bench_print_preamble(const struct bench *b, const char *title, const char *extra)
{
    static const char *const type_names[] = { "MPI_CHAR", "MPI_INT", "MPI_FLOAT" };

    if (b->rank != 0)
        return;
    printf("# %s (OSU-compatible output)\n", title);
    printf("# Datatype: %s, ", type_names[b->kind]);
    if (b->coll->reduces)
        printf("op MPI_SUM, ");
    if (b->coll->rooted)
        printf("root %d, ", BENCH_ROOT);
    printf("%d process%s%s\n", b->nprocs, b->nprocs == 1 ? "" : "es", extra ? extra : "");
}

void bench_for_each_size(struct bench *b, bench_size_fn one, void *ctx)
{
    if (b->coll->result_at == RESULT_NONE) { /* no data: one row, size 0 */
        MPI_Barrier(MPI_COMM_WORLD);
        one(b, 0, 0, b->iters >= 0 ? b->iters : ITERS_SMALL,
            b->warmup >= 0 ? b->warmup : WARMUP_SMALL, ctx);
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    for (size_t size = b->min_bytes; size <= b->max_bytes; size *= b->size_factor) {
        int count = (int)(size / b->elem_size);
        int large = size > LARGE_MSG_BYTES;
        long iters = b->iters >= 0 ? b->iters : large ? ITERS_LARGE : ITERS_SMALL;
        long warmup = b->warmup >= 0 ? b->warmup : large ? WARMUP_LARGE : WARMUP_SMALL;

        /* -B: large sizes get fewer calls, so that one run's time stays bounded. */
        if (b->iter_bytes > 0 && (size_t)iters > b->iter_bytes / size) {
            long cap = (long)(b->iter_bytes / size);
            iters = cap < 2 ? 2 : cap;
            if (warmup > iters / 5)
                warmup = iters / 5 < 1 ? 1 : iters / 5;
        }

        if (count == 0)
            continue; /* smaller than one element */
        MPI_Barrier(MPI_COMM_WORLD);
        one(b, size, count, iters, warmup, ctx);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

void bench_average(const double *local, double *avg, int n)
{
    MPI_Allreduce(local, avg, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
        avg[i] /= my_nprocs;
}

static int holds_result(const struct bench *b)
{
    switch (b->coll->result_at) {
    case RESULT_ROOT:      return b->rank == BENCH_ROOT;
    case RESULT_NON_ROOTS: return b->rank != BENCH_ROOT;
    case RESULT_NONE:      return 0;
    default:               return 1;
    }
}

/*
 * What element i of this rank's rbuf should hold: element j of block `block`
 * (`count` elements a block).  It came from element j of the sender's sbuf,
 * or of the sender's block for this rank when senders have a block per rank
 * (alltoall, scatter).  The sender is the block's rank when rbuf has a block
 * per rank (allgather, alltoall, gather), else the root (bcast, scatter);
 * reductions sum that element over every rank.
 */
static int expected_value(const struct bench *b, size_t i, size_t count)
{
    size_t block = i / count, j = i % count;
    uint32_t hash = index_hash(b->coll->send_blocks ? (size_t)b->rank * count + j : j);
    int sum = 0;

    if (!b->coll->reduces)
        return contribution(hash, b->coll->recv_blocks ? (int)block : BENCH_ROOT);
    for (int r = 0; r < b->nprocs; r++)
        sum += contribution(hash, r);
    return sum;
}

void bench_call(struct bench *b, int count, MPI_Request *persistent)
{
    if (persistent) {
        MPI_Start(persistent);
        MPI_Wait(persistent, MPI_STATUS_IGNORE);
    } else {
        b->coll->blocking(b, count);
    }
}

long bench_check(struct bench *b, int count, MPI_Request *persistent)
{
    size_t n = blocks_of(b, b->coll->recv_blocks, (size_t)count);
    long errors = 0, total;

    /* 0xff bytes are -1 or NaN, never a valid result, so a no-op is caught. */
    memset(b->rbuf, 0xff, n * b->elem_size);
    bench_call(b, count, persistent);
    for (size_t i = 0; holds_result(b) && i < n; i++)
        errors += !elem_equals(b->kind, b->rbuf, i, expected_value(b, i, (size_t)count));
    MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}
