/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * bench_common - what coll_latency and overlap share: the collectives they
 * time (blocking, non-blocking and persistent forms), option parsing (-C, -m,
 * -T, -i, -x, -h), buffers with validation data, the per-size loop and
 * cross-rank averaging.  Output follows the OSU micro-benchmarks so scripts
 * written for OSU can parse it.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <mpi.h>

#include <stddef.h>
#include <stdint.h>

/* Column widths of OSU's output. */
#define OSU_SIZE_WIDTH 10
#define FIELD_WIDTH 18
#define ITERS_WIDTH 12

/* Rooted collectives (bcast, reduce, gather, scatter) use root 0, as OSU does. */
#define BENCH_ROOT 0

enum elem_kind { KIND_CHAR, KIND_INT, KIND_FLOAT };

/* Which ranks hold the collective's result, i.e. what -c can check; RESULT_NONE:
 * a collective that moves no data (barrier), timed once at size 0 whatever -m says. */
enum result_at { RESULT_ALL, RESULT_ROOT, RESULT_NON_ROOTS, RESULT_NONE };

struct bench;

/*
 * One collective.  `count` is the elements of one block: the whole message
 * for allreduce, bcast and reduce; what each rank sends to or receives from
 * each other rank for allgather, alltoall, gather and scatter (OSU's size).
 */
struct bench_coll {
    const char *name;   /* -C value of coll_latency; overlap takes "i" + name */
    const char *mpi_name;                /* "Allreduce", as in MPI_Allreduce */
    int reduces;        /* uses MPI_SUM: result is the sum over ranks */
    int rooted;         /* has a root (BENCH_ROOT) */
    int send_blocks;    /* sbuf holds one block per rank (alltoall, scatter) */
    int recv_blocks;    /* rbuf holds one block per rank (allgather, alltoall, gather) */
    enum result_at result_at;
    void (*blocking)(struct bench *b, int count);
    void (*start)(struct bench *b, int count, MPI_Request *req);  /* MPI_I<coll> */
    void (*init)(struct bench *b, int count, MPI_Request *req);   /* MPI_<Coll>_init */
};

struct bench {
    /* Options. */
    size_t min_bytes, max_bytes;
    size_t size_factor;         /* -m's third field: each size is the last times this */
    size_t iter_bytes;          /* -B: at most this many bytes timed per size; 0: no cap */
    long iters, warmup;         /* -1: use the size-dependent default */
    enum elem_kind kind;
    const struct bench_coll *coll;
    /* Derived state. */
    MPI_Datatype type;
    size_t elem_size;
    void *sbuf, *rbuf;
    int rank, nprocs;
};

/*
 * A program's own options, parsed next to the common ones: `optstring` holds
 * their getopt letters, `synopsis` and `usage` their help text, and `handle`
 * returns 0 for a letter it does not know.
 */
struct bench_extra {
    const char *optstring;
    const char *synopsis;
    const char *usage;
    int (*handle)(int opt, const char *arg, void *ctx);
    void *ctx;
};

/* Program name used in messages; set by bench_init. */
extern const char *bench_prog;

/* MPI_Init, option parsing and buffer setup.  `nonblocking` selects the
 * MPI_I<coll> names for -C.  Exits (all ranks alike) on bad options. */
void bench_init(struct bench *b, int *argc, char ***argv, int nonblocking,
                const struct bench_extra *extra);
void bench_finalize(struct bench *b);

/* Stops every rank: each parses the same argv, so all of them get here. */
void bench_die(const char *msg, const char *arg);
long bench_parse_long(const char *s, long min, const char *what);

/* Rank 0 prints "# <title>" and the datatype/op/ranks line. */
void bench_print_preamble(const struct bench *b, const char *title, const char *extra);

/*
 * Calls `one` for each size from MIN to MAX (doubling) that holds at least
 * one element, with OSU's iteration defaults, between barriers so one size's
 * stragglers do not skew the next.
 */
typedef void (*bench_size_fn)(struct bench *b, size_t size, int count,
                              long iters, long warmup, void *ctx);
void bench_for_each_size(struct bench *b, bench_size_fn one, void *ctx);

/* The average of `n` per-rank values, on every rank. */
void bench_average(const double *local, double *avg, int n);

/*
 * One collective of `count` elements a block: a blocking call, or with
 * `persistent` not NULL, MPI_Start and MPI_Wait on that request (made by
 * b->coll->init with the same count).
 */
void bench_call(struct bench *b, int count, MPI_Request *persistent);

/* Runs one fresh bench_call and returns the mismatches, on all ranks. */
long bench_check(struct bench *b, int count, MPI_Request *persistent);

#endif
