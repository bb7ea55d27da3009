/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * bench/tune: one candidate's time at one size. A warm-up call, a short
 * calibration that sets the iterations per batch (so a batch runs about
 * plan->batch_seconds), then the batches: a barrier, the iterations, and the
 * batch's time per call taken as the slowest rank's. The median of the batches
 * is the time, their minimum and maximum the spread. Then one more call on
 * known inputs, checked against the reference on every rank.
 */

#include <stdio.h>
#include <stdlib.h>

#include "tune.h"

static int by_value(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;

    return x < y ? -1 : x > y;
}

/* The slowest rank's seconds per call for `iterations` calls. */
static double batch(enum tune_family family, const struct tune_shape *shape,
                    struct tune_buffers *b, MPI_Comm comm, int iterations)
{
    double start, mine, slowest;

    MPI_Barrier(comm);
    start = MPI_Wtime();
    for (int i = 0; i < iterations; ++i) {
        tune_call(family, shape, b, comm);
    }
    mine = (MPI_Wtime() - start) / iterations;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    return slowest;
}

/* Warm-up and calibration: the iterations per batch for about plan->batch_seconds. */
static int calibrate(enum tune_family family, const struct tune_shape *shape,
                     struct tune_buffers *b, MPI_Comm comm, const struct tune_timing_plan *plan)
{
    double once;
    int n;

    tune_fill(family, shape, b, comm);
    tune_call(family, shape, b, comm); /* connections, first-touch pages */
    once = batch(family, shape, b, comm, 2);
    n = once > 0 ? (int) (plan->batch_seconds / once) : plan->max_iterations;
    return n < 1 ? 1 : n > plan->max_iterations ? plan->max_iterations : n;
}

/* One more call on known inputs, checked on every rank: a wrong answer is a
 * failure, never a fast time. */
static bool check(enum tune_family family, const struct tune_shape *shape,
                  struct tune_buffers *b, MPI_Comm comm, const char *label)
{
    int ok, all_ok, rank;
    char why[200];

    tune_fill(family, shape, b, comm);
    tune_call(family, shape, b, comm);
    ok = tune_check(family, shape, b, comm, why, sizeof(why));
    if (!ok) {
        MPI_Comm_rank(comm, &rank);
        fprintf(stderr, "bench/tune: WRONG RESULT: %s: rank %d: %s\n", label, rank, why);
    }
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    return all_ok;
}

void tune_measure(enum tune_family family, const struct tune_shape *shape,
                  struct tune_buffers *b, const MPI_Comm *comms, int count,
                  const struct tune_timing_plan *plan, const char *const *labels,
                  struct tune_timing *out)
{
    int batches = plan->batches < TUNE_MAX_BATCHES ? plan->batches : TUNE_MAX_BATCHES;
    double times[TUNE_MAX_CANDIDATES][TUNE_MAX_BATCHES];

    for (int c = 0; c < count; ++c) {
        out[c] = (struct tune_timing){.batches = batches};
        out[c].iterations = calibrate(family, shape, b, comms[c], plan);
    }
    /* Batch by batch across the candidates, so that a slow spell of the machine
     * falls on all of them alike. */
    for (int i = 0; i < batches; ++i) {
        for (int c = 0; c < count; ++c) {
            times[c][i] = batch(family, shape, b, comms[c], out[c].iterations);
        }
    }
    for (int c = 0; c < count; ++c) {
        double *t = times[c];

        qsort(t, (size_t) batches, sizeof(t[0]), by_value);
        out[c].min = t[0];
        out[c].max = t[batches - 1];
        out[c].median = batches % 2 ? t[batches / 2] : (t[batches / 2 - 1] + t[batches / 2]) / 2;
        out[c].q1 = t[(batches - 1) / 4];
        out[c].q3 = t[batches - 1 - (batches - 1) / 4];
        out[c].wrong = !check(family, shape, b, comms[c], labels[c]);
    }
}

double tune_us(double seconds)
{
    return seconds * 1e6;
}
