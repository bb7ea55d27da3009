/*
 * coll_latency - MPI_Allreduce / MPI_Bcast / MPI_Reduce latency benchmark for
 * coll/async (-C allreduce|bcast|reduce).
 *
 * The output uses the column layout of osu_allreduce / osu_bcast /
 * osu_reduce -f (plus the -c validation column) so scripts written for OSU
 * can parse it.  Timing also follows OSU: each call is timed on its own with
 * a barrier after it, each rank averages its calls, and rank 0 prints the
 * avg/min/max of those per-rank averages.
 *
 * Build: mpicc -O2 -Wall -Wextra -o coll_latency coll_latency.c bench_common.c
 */
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>

struct run_state {
    int validate; /* -c */
    int failed;   /* some size failed validation */
};

static int handle_option(int opt, const char *arg, void *ctx)
{
    (void)arg;
    if (opt != 'c')
        return 0;
    ((struct run_state *)ctx)->validate = 1;
    return 1;
}

static void print_header(const struct bench *b, int validate)
{
    char title[64];

    if (b->rank != 0)
        return;
    snprintf(title, sizeof(title), "coll/async MPI_%s latency", b->coll->mpi_name);
    bench_print_preamble(b, title, NULL);
    printf("%-*s%*s%*s%*s%*s", SIZE_WIDTH, "# Size", FIELD_WIDTH, "Avg Latency(us)",
           FIELD_WIDTH, "Min Latency(us)", FIELD_WIDTH, "Max Latency(us)",
           ITERS_WIDTH, "Iterations");
    if (validate)
        printf("%*s", FIELD_WIDTH, "Validation");
    printf("\n");
    fflush(stdout);
}

/* Mean seconds per call on this rank. */
static double time_calls(struct bench *b, int count, long iters, long warmup)
{
    double busy = 0.0;

    for (long it = 0; it < warmup + iters; it++) {
        double t0 = MPI_Wtime();
        b->coll->blocking(b, count);
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
    double mean_us = time_calls(b, count, iters, warmup) * 1e6, avg_us, min_us, max_us;

    bench_average(&mean_us, &avg_us, 1);
    MPI_Reduce(&mean_us, &min_us, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mean_us, &max_us, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    long errors = st->validate ? bench_check(b, count) : 0;
    st->failed |= errors != 0;

    if (b->rank == 0) {
        printf("%-*zu%*.2f%*.2f%*.2f%*ld", SIZE_WIDTH, size, FIELD_WIDTH, avg_us,
               FIELD_WIDTH, min_us, FIELD_WIDTH, max_us, ITERS_WIDTH, iters);
        if (st->validate)
            printf("%*s", FIELD_WIDTH, errors ? "Fail" : "Pass");
        printf("\n");
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    struct run_state st = { 0, 0 };
    const struct bench_extra extra = {
        "c", "[-c]",
        "  -c            validate the result of every size; exit non-zero on failure\n",
        handle_option, &st
    };
    struct bench b;

    bench_init(&b, &argc, &argv, 0, &extra);
    if (st.validate && b.kind == KIND_CHAR && b.coll->reduces && b.nprocs > 127)
        bench_die("-c with char needs at most 127 ranks (sums would overflow)", NULL);

    print_header(&b, st.validate);
    bench_for_each_size(&b, run_size, &st);

    bench_finalize(&b);
    return st.failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
