/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * overlap - how much of a non-blocking collective (-C iallreduce|ibcast|
 * ireduce) proceeds while the caller computes, in the manner of
 * osu_iallreduce.
 *
 * For each size it measures, per rank and averaged over the ranks:
 *   pure comm  MPI_I<coll> + MPI_Wait, nothing in between;
 *   compute    a dummy compute of the pure comm time, run between the two;
 *   overall    MPI_I<coll>; compute; MPI_Wait.
 * overlap = 100 * (1 - (overall - compute) / pure comm), clamped to 0..100:
 * 100% when the collective finished entirely during the compute, 0% when it
 * only ran once MPI_Wait was called.
 *
 * The compute makes no MPI calls (no MPI_Test, unlike OSU's), so this shows
 * what progresses on its own.  -k busy spins on the clock, keeping the CPU
 * busy; -k sleep sleeps, leaving the CPU idle as when a GPU computes.
 *
 * Build: mpicc -O2 -Wall -Wextra -o overlap overlap.c bench_common.c
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, clock_nanosleep under -std=c99 */

#include "bench_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

typedef void (*compute_fn)(double seconds);

static struct timespec timespec_after(double seconds)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    long long ns = t.tv_nsec + (long long)(seconds * 1e9);
    t.tv_sec += (time_t)(ns / 1000000000);
    t.tv_nsec = (long)(ns % 1000000000);
    return t;
}

static int before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Spins on the clock itself, not MPI_Wtime, so no MPI library code runs. */
static void compute_busy(double seconds)
{
    struct timespec end = timespec_after(seconds), now;
    do
        clock_gettime(CLOCK_MONOTONIC, &now);
    while (before(&now, &end));
}

/*
 * Linux rounds sleeps up by a "timer slack" of 50 us by default, which would
 * make every compute far longer than the few-us collectives it should match;
 * 1 ns leaves only the wake-up latency.
 */
static void reduce_timer_slack(void)
{
#ifdef PR_SET_TIMERSLACK
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
}

/* An absolute deadline, so a signal-interrupted sleep resumes without drift. */
static void compute_sleep(double seconds)
{
    struct timespec end = timespec_after(seconds);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL) == EINTR)
        ;
}

struct compute_kind {
    const char *name;
    compute_fn fn;
};

static int handle_option(int opt, const char *arg, void *ctx)
{
    static const struct compute_kind kinds[] = {
        { "busy", compute_busy }, { "sleep", compute_sleep },
    };

    if (opt != 'k')
        return 0;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (!strcmp(arg, kinds[i].name)) {
            *(struct compute_kind *)ctx = kinds[i];
            return 1;
        }
    bench_die("unknown -k compute (busy, sleep): ", arg);
    return 1;
}

static void print_header(const struct bench *b, const char *compute)
{
    char title[96], extra[64];

    if (b->rank != 0)
        return;
    /* MPI_Iallreduce etc.: "MPI_I" + the lower-case blocking name. */
    snprintf(title, sizeof(title), "coll/async MPI_I%s overlap, no MPI calls during compute",
             b->coll->name);
    snprintf(extra, sizeof(extra), ", compute: %s", compute);
    bench_print_preamble(b, title, extra);
    printf("%-*s%*s%*s%*s%*s\n", OSU_SIZE_WIDTH, "# Size", FIELD_WIDTH, "Overall(us)",
           FIELD_WIDTH, "Compute(us)", FIELD_WIDTH, "Pure Comm.(us)",
           FIELD_WIDTH, "Overlap(%)");
    fflush(stdout);
}

/*
 * Mean seconds per iteration on this rank of MPI_I<coll>, `compute` (when
 * not NULL) and MPI_Wait: [0] all of it, [1] the compute alone.
 */
static void time_phase(struct bench *b, int count, long iters, long warmup,
                       compute_fn compute, double compute_s, double mean[2])
{
    double overall = 0.0, computing = 0.0;

    for (long it = 0; it < warmup + iters; it++) {
        MPI_Request req;
        double t0 = MPI_Wtime();
        b->coll->start(b, count, &req);
        double c0 = MPI_Wtime();
        if (compute)
            compute(compute_s);
        double c1 = MPI_Wtime();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        double t1 = MPI_Wtime();
        if (it >= warmup) {
            overall += t1 - t0;
            computing += c1 - c0;
        }
        /* Start every collective together, as OSU does, so skew isn't timed. */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    mean[0] = overall / (double)iters;
    mean[1] = computing / (double)iters;
}

/* Prints one row; times are per-iteration averages over the ranks, in us. */
static void print_row(size_t size, double overall, double compute, double comm)
{
    double overlap = comm > 0 ? 100.0 * (1.0 - (overall - compute) / comm) : 0.0;

    overlap = overlap < 0 ? 0 : overlap > 100 ? 100 : overlap;
    printf("%-*zu%*.2f%*.2f%*.2f%*.2f\n", OSU_SIZE_WIDTH, size, FIELD_WIDTH, overall,
           FIELD_WIDTH, compute, FIELD_WIDTH, comm, FIELD_WIDTH, overlap);
    fflush(stdout);
}

static void run_size(struct bench *b, size_t size, int count, long iters, long warmup,
                     void *ctx)
{
    const struct compute_kind *kind = ctx;
    double pure[2], pure_avg, with[2], with_avg[2];

    time_phase(b, count, iters, warmup, NULL, 0.0, pure);
    /* Every rank computes for the ranks' average pure time, so that no rank
     * (a bcast root that returns early, say) waits long on the others. */
    bench_average(&pure[0], &pure_avg, 1);
    time_phase(b, count, iters, warmup, kind->fn, pure_avg, with);
    bench_average(with, with_avg, 2);
    if (b->rank == 0)
        print_row(size, with_avg[0] * 1e6, with_avg[1] * 1e6, pure_avg * 1e6);
}

int main(int argc, char **argv)
{
    struct compute_kind kind = { "busy", compute_busy };
    const struct bench_extra extra = {
        "k:", "[-k busy|sleep]",
        "  -k COMPUTE    busy (default): spin on the clock; sleep: sleep, CPU idle\n",
        handle_option, &kind
    };
    struct bench b;

    bench_init(&b, &argc, &argv, 1, &extra);
    if (kind.fn == compute_sleep)
        reduce_timer_slack();
    print_header(&b, kind.name);
    bench_for_each_size(&b, run_size, &kind);
    bench_finalize(&b);
    return EXIT_SUCCESS;
}
