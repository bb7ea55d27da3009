/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_latency - collective latency benchmark for coll/async (-C allreduce|
 * bcast|reduce|allgather|alltoall|gather|scatter|allgatherv|reduce_scatter_block), blocking or, with -P,
 * persistent (MPI_<Coll>_init once per size, then MPI_Start + MPI_Wait).
 *
 * The output uses the column layout of osu_allreduce / osu_bcast /
 * osu_alltoall ... -f (plus the -c validation column) so scripts written for
 * OSU can parse it.  Timing also follows OSU: each call is timed on its own
 * with a barrier after it, each rank averages its calls, and rank 0 prints
 * the avg/min/max of those per-rank averages.
 *
 * Build: mpicc -O2 -Wall -Wextra -o coll_latency coll_latency.c bench_common.c
 */
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>

struct run_state {
    int validate;   /* -c */
    int persistent; /* -P */
    int failed;     /* some size failed validation */
};

static int handle_option(int opt, const char *arg, void *ctx)
{
    struct run_state *st = ctx;

    (void)arg;
    switch (opt) {
    case 'c': st->validate = 1; return 1;
    case 'P': st->persistent = 1; return 1;
    default: return 0;
    }
}

static void print_header(const struct bench *b, const struct run_state *st)
{
    const char *name = b->coll->mpi_name;
    char title[128];

    if (b->rank != 0)
        return;
    if (st->persistent)
        snprintf(title, sizeof(title), "coll/async persistent MPI_%s latency"
                 " (MPI_%s_init, then MPI_Start + MPI_Wait)", name, name);
    else
        snprintf(title, sizeof(title), "coll/async MPI_%s latency", name);
    bench_print_preamble(b, title, NULL);
    printf("%-*s%*s%*s%*s%*s", OSU_SIZE_WIDTH, "# Size", FIELD_WIDTH, "Avg Latency(us)",
           FIELD_WIDTH, "Min Latency(us)", FIELD_WIDTH, "Max Latency(us)",
           ITERS_WIDTH, "Iterations");
    if (st->validate)
        printf("%*s", FIELD_WIDTH, "Validation");
    printf("\n");
    fflush(stdout);
}

/* Mean seconds per call on this rank (see bench_call for `persistent`). */
static double time_calls(struct bench *b, int count, long iters, long warmup,
                         MPI_Request *persistent)
{
    double busy = 0.0;

    for (long it = 0; it < warmup + iters; it++) {
        double t0 = MPI_Wtime();
        bench_call(b, count, persistent);
        double t1 = MPI_Wtime();
        if (it >= warmup)
            busy += t1 - t0;
        /* Start every call together, as OSU does, so skew isn't timed. */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return busy / (double)iters;
}

/* Times one size (and validates it under -c) and prints its row. */
static void run_size(struct bench *b, size_t size, int count, long iters, long warmup,
                     void *ctx)
{
    struct run_state *st = ctx;
    MPI_Request req, *persistent = NULL;

    /* Under -P the request is made once per size, outside the timing, and
     * serves the timed calls and the validation alike. */
    if (st->persistent) {
        b->coll->init(b, count, &req);
        persistent = &req;
    }
    double mean_us = time_calls(b, count, iters, warmup, persistent) * 1e6;
    double avg_us, min_us, max_us;

    bench_average(&mean_us, &avg_us, 1);
    MPI_Reduce(&mean_us, &min_us, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mean_us, &max_us, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    long errors = st->validate ? bench_check(b, count, persistent) : 0;
    st->failed |= errors != 0;
    if (persistent)
        MPI_Request_free(persistent);

    if (b->rank == 0) {
        printf("%-*zu%*.2f%*.2f%*.2f%*ld", OSU_SIZE_WIDTH, size, FIELD_WIDTH, avg_us,
               FIELD_WIDTH, min_us, FIELD_WIDTH, max_us, ITERS_WIDTH, iters);
        if (st->validate)
            printf("%*s", FIELD_WIDTH, b->coll->result_at == RESULT_NONE ? "n/a"
                                       : errors ? "Fail" : "Pass");
        printf("\n");
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    struct run_state st = { 0, 0, 0 };
    const struct bench_extra extra = {
        "cP", "[-c] [-P]",
        "  -c            validate the result of every size; exit non-zero on failure\n"
        "  -P            persistent: MPI_<Coll>_init once per size, then time\n"
        "                MPI_Start + MPI_Wait\n",
        handle_option, &st
    };
    struct bench b;

    bench_init(&b, &argc, &argv, 0, &extra);
    if (st.validate && b.kind == KIND_CHAR && b.coll->reduces && b.nprocs > 127)
        bench_die("-c with char needs at most 127 ranks (sums would overflow)", NULL);

    print_header(&b, &st);
    bench_for_each_size(&b, run_size, &st);

    bench_finalize(&b);
    return st.failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
