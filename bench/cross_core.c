/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * cross_core - what moving data between two cores costs on this machine, with no
 * MPI: the floor under a 2-rank shared-memory collective. Two threads, pinned to
 * CPUs 0 and 1 (or -a A -b B), take turns through cache-line flags, as the ranks do
 * through a segment's slots, and each pattern is timed per round, median of 5 runs:
 *
 *   memcpy     one thread copies N bytes between two of its own buffers (no
 *              other core involved): what a copy costs here.
 *   bcast      A copies N bytes of its input into a shared buffer and flags; B
 *              copies them out to its own: a bcast through one slot, unpipelined
 *              (pipelined, it approaches the larger of the two copies).
 *   allreduce  the staged allreduce of 2 ranks: each copies the half of its input
 *              the other reduces into its shared buffer and flags; each reduces its
 *              own half (float sum: its input + the other's shared copy) into its
 *              output and copies that result into its shared buffer, flags; each
 *              copies the other's result half out.
 *   touched    the same allreduce, but the inputs were only touched (one store
 *              per cache line) instead of copied in: what is left when the
 *              copy-in is free (single-copy, XPMEM-like access to the other's input).
 *
 *   cross_core [-m [MIN:]MAX] [-i ITER] [-a CPU] [-b CPU]
 */

#define _GNU_SOURCE

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum pattern { MEMCPY, BCAST, ALLREDUCE, TOUCHED, NUM_PATTERNS };
static const char *const names[NUM_PATTERNS] = {"memcpy", "bcast", "allreduce", "touched"};

/* One flag per thread and phase, each on its own cache line. */
struct flag {
    _Atomic long value;
    char pad[64 - sizeof(long)];
};

static struct {
    enum pattern pattern;
    size_t bytes;
    int iterations, cpu[2];
    char *shared[2], *input[2], *output[2];
    struct flag flags[2][3]; /* per thread: two phases, the barrier */
    double seconds;
} run;

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

static void post(int me, int phase, long round)
{
    atomic_store_explicit(&run.flags[me][phase].value, round, memory_order_release);
}

static void await(int other, int phase, long round)
{
    while (atomic_load_explicit(&run.flags[other][phase].value, memory_order_acquire) < round) {
    }
}

/* out = a + b, over count floats. */
static void sum(void *out, const void *a, const void *b, size_t count)
{
    float *o = out;
    const float *x = a, *y = b;

    for (size_t i = 0; i < count; ++i) {
        o[i] = x[i] + y[i];
    }
}

/* One round of the pattern from thread me's side. */
static void round_of(int me, long round)
{
    int other = 1 - me;
    size_t total = run.bytes / sizeof(float) * sizeof(float);
    size_t start[2] = {0, total / 2 / sizeof(float) * sizeof(float)};
    size_t length[2] = {start[1], total - start[1]};

    switch (run.pattern) {
    case MEMCPY:
        if (0 == me) {
            memcpy(run.output[0], run.input[0], run.bytes);
        }
        return;
    case BCAST:
        if (0 == me) {
            memcpy(run.shared[0], run.input[0], run.bytes);
            post(0, 0, round);
        } else {
            await(0, 0, round);
            memcpy(run.output[1], run.shared[0], run.bytes);
        }
        return;
    case ALLREDUCE:
    case TOUCHED:
        /* The part the other reduces, into this thread's shared buffer. */
        if (ALLREDUCE == run.pattern) {
            memcpy(run.shared[me] + start[other], run.input[me] + start[other], length[other]);
        } else {
            for (size_t i = 0; i < length[other]; i += 64) {
                run.shared[me][start[other] + i] = (char) round;
            }
        }
        post(me, 0, round);
        await(other, 0, round);
        sum(run.output[me] + start[me], run.input[me] + start[me], run.shared[other] + start[me],
            length[me] / sizeof(float));
        memcpy(run.shared[me] + start[me], run.output[me] + start[me], length[me]);
        post(me, 1, round);
        await(other, 1, round);
        memcpy(run.output[me] + start[other], run.shared[other] + start[other], length[other]);
        return;
    default:
        return;
    }
}

static void *thread_main(void *arg)
{
    int me = (int) (long) arg;
    cpu_set_t set;
    double start = 0;

    CPU_ZERO(&set);
    CPU_SET(run.cpu[me], &set);
    (void) pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    for (long round = 1; round <= run.iterations + 10; ++round) {
        if (11 == round) {
            start = now();
        }
        round_of(me, round);
        /* A barrier between rounds, as between a benchmark's calls. */
        post(me, 2, round);
        await(1 - me, 2, round);
    }
    if (0 == me) {
        run.seconds = (now() - start) / run.iterations;
    }
    return NULL;
}

static double time_pattern(enum pattern pattern, size_t bytes)
{
    pthread_t threads[2];

    run.pattern = pattern;
    run.bytes = bytes;
    memset(run.flags, 0, sizeof(run.flags));
    for (long t = 0; t < 2; ++t) {
        if (0 != pthread_create(&threads[t], NULL, thread_main, (void *) t)) {
            perror("cross_core: pthread_create");
            exit(1);
        }
    }
    for (int t = 0; t < 2; ++t) {
        pthread_join(threads[t], NULL);
    }
    return run.seconds * 1e6;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;

    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    size_t min = 8, max = 4 << 20;
    int opt;

    run.cpu[0] = 0;
    run.cpu[1] = 1;
    run.iterations = 0;
    while (-1 != (opt = getopt(argc, argv, "m:i:a:b:h"))) {
        char *colon;

        switch (opt) {
        case 'm':
            colon = strchr(optarg, ':');
            max = strtoul(NULL != colon ? colon + 1 : optarg, NULL, 0);
            min = NULL != colon ? strtoul(optarg, NULL, 0) : min;
            break;
        case 'i': run.iterations = atoi(optarg); break;
        case 'a': run.cpu[0] = atoi(optarg); break;
        case 'b': run.cpu[1] = atoi(optarg); break;
        default:
            fprintf(stderr, "Usage: cross_core [-m [MIN:]MAX] [-i ITER] [-a CPU] [-b CPU]\n");
            return 'h' == opt ? 0 : 2;
        }
    }
    if (min < 8 || max < min) {
        fprintf(stderr, "cross_core: -m needs 8 <= MIN <= MAX\n");
        return 2;
    }
    for (int t = 0; t < 2; ++t) {
        float *values;

        run.shared[t] = aligned_alloc(4096, (max + 4095) / 4096 * 4096);
        run.input[t] = aligned_alloc(4096, (max + 4095) / 4096 * 4096);
        run.output[t] = aligned_alloc(4096, (max + 4095) / 4096 * 4096);
        if (NULL == run.shared[t] || NULL == run.input[t] || NULL == run.output[t]) {
            fprintf(stderr, "cross_core: out of memory\n");
            return 1;
        }
        memset(run.shared[t], 0, max);
        memset(run.output[t], 0, max);
        values = (void *) run.input[t];
        for (size_t i = 0; i < max / sizeof(float); ++i) {
            values[i] = (float) (i % 1000);
        }
    }
    printf("# two threads on CPUs %d and %d, us per round, median of 5 runs\n", run.cpu[0],
           run.cpu[1]);
    printf("# %-10s", "Size");
    for (int p = 0; p < NUM_PATTERNS; ++p) {
        printf(" %12s", names[p]);
    }
    printf("\n");
    for (size_t bytes = min; bytes <= max; bytes *= 2) {
        int iterations = run.iterations;

        run.iterations = 0 != iterations ? iterations : bytes <= 65536 ? 2000 : 200;
        printf("%-12zu", bytes);
        for (int p = 0; p < NUM_PATTERNS; ++p) {
            double samples[5];

            for (int s = 0; s < 5; ++s) {
                samples[s] = time_pattern((enum pattern) p, bytes);
            }
            qsort(samples, 5, sizeof(samples[0]), by_value);
            printf(" %12.2f", samples[2]);
        }
        printf("\n");
        fflush(stdout);
        run.iterations = iterations;
    }
    return 0;
}
