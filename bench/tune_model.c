/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * bench/simulate's parameters measured through coll/async. See tune_model.h.
 */

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "simulate_params.h"
#include "tune_model.h"

#define MAX_SIZES 16
#define MAX_REPS 15
#define MAX_CALLS_PER_RUN 1000
#define SMALL_BYTES 8
#define WHY_MAX 200
#define CONTROL_TAG 4711

/* How much to measure. */
struct plan {
    size_t sizes[MAX_SIZES]; /* the sweep, bytes */
    int nsizes;
    size_t bursts[MAX_SIZES]; /* the back-to-back counts */
    int nbursts;
    int reps;                /* runs per point; the median counts */
    double budget;           /* seconds one run aims at */
    bool quick;
};

static void plan_for(int quick, struct plan *plan)
{
    /* Quick: few sizes, but as many runs per point as the full fit, each shorter:
     * on a shared machine the median of 15 short runs spread over the whole
     * measurement holds better than 3 longer ones (3 runs of 5 ms put the later
     * round anywhere from 0 to 35 us on the development VM; 9 of 8 ms between 14
     * and 19 us, against 19 us for the full fit). */
    static const size_t quick_sizes[] = {8, 512, 8192, 131072, 1 << 20, 4 << 20};
    static const size_t quick_bursts[] = {1, 4, 16, 64};

    *plan = (struct plan){.reps = MAX_REPS, .budget = quick ? 0.006 : 0.03, .quick = quick};
    if (quick) {
        memcpy(plan->sizes, quick_sizes, sizeof(quick_sizes));
        plan->nsizes = (int) (sizeof(quick_sizes) / sizeof(quick_sizes[0]));
        memcpy(plan->bursts, quick_bursts, sizeof(quick_bursts));
        plan->nbursts = (int) (sizeof(quick_bursts) / sizeof(quick_bursts[0]));
        return;
    }
    /* 8 B .. 2 MiB by 4, and 4 MiB: the grid bench/model-check checks. */
    for (size_t n = 8; n <= (2 << 20); n *= 4) {
        plan->sizes[plan->nsizes++] = n;
    }
    plan->sizes[plan->nsizes++] = 4 << 20;
    for (size_t m = 1; m <= 64; m *= 2) {
        plan->bursts[plan->nbursts++] = m;
    }
}

/* The two leaders that measure. */
struct pair {
    MPI_Comm plain;  /* control messages and barriers */
    MPI_Comm forced; /* the timed calls, the algorithms forced by hints */
    MPI_Comm ring;   /* allreduce forced to ring: at 2 leaders 2 rounds, against 1 */
    int rank;
    long bcasts, allreduces, allgathers; /* calls made on forced and ring */
    long rings;                          /* of those, on ring */
    char *buf, *gathered; /* gathered: room for two blocks */
};

/* Rank 0's count, on both. Point-to-point: no collective counter moves. */
static int agree(const struct pair *p, int value)
{
    if (0 == p->rank) {
        MPI_Send(&value, 1, MPI_INT, 1, CONTROL_TAG, p->plain);
    } else {
        MPI_Recv(&value, 1, MPI_INT, 0, CONTROL_TAG, p->plain, MPI_STATUS_IGNORE);
    }
    return value;
}

/* A run: k times something; this rank's seconds per time (measure() takes the
 * slower rank's). */
typedef double (*run_fn)(struct pair *p, size_t n, int k);

/* The i-th of a run's collectives of n bytes. */
typedef void (*call_fn)(struct pair *p, size_t n, int i);

/* k calls, each started together after a barrier and timed alone, as
 * bench/coll_latency times them: the simulator prices one collective whose
 * ranks start at once. Back to back a call's first round overlaps its peer's
 * last one, and a later round costs as much as the first (16.5 against 19.5 us
 * here), where alone it costs half (8-10 against 18.5 us). */
static double alone(struct pair *p, call_fn call, size_t n, int k)
{
    double busy = 0.0;

    for (int i = 0; i < k; ++i) {
        double start;

        MPI_Barrier(p->plain);
        start = MPI_Wtime();
        call(p, n, i);
        busy += MPI_Wtime() - start;
    }
    return busy / k;
}

/* A bcast of n bytes from 0 to 1 and the next back: the slower end's time is
 * the receiver's, a lone message. */
static void bcast_call(struct pair *p, size_t n, int i)
{
    MPI_Bcast(p->buf, (int) n, MPI_BYTE, i % 2, p->forced);
    p->bcasts += 1;
}

static double bounce(struct pair *p, size_t n, int k)
{
    return alone(p, bcast_call, n, k);
}

/* m small bcasts from 0 back to back, then one from 1: the calls' throughput,
 * not one call's latency. */
static double burst(struct pair *p, size_t m, int k)
{
    double start;

    MPI_Barrier(p->plain);
    start = MPI_Wtime();
    for (int i = 0; i < k; ++i) {
        for (size_t j = 0; j < m; ++j) {
            MPI_Bcast(p->buf, SMALL_BYTES, MPI_BYTE, 0, p->forced);
        }
        MPI_Bcast(p->buf, SMALL_BYTES, MPI_BYTE, 1, p->forced);
    }
    p->bcasts += (long) (m + 1) * k;
    return (MPI_Wtime() - start) / k;
}

/* An allreduce of n bytes of floats (zeros: sums that stay normal numbers). */
static void allreduce_call(struct pair *p, size_t n, int i)
{
    (void) i;
    MPI_Allreduce(MPI_IN_PLACE, p->buf, (int) (n / sizeof(float)), MPI_FLOAT, MPI_SUM,
                  p->forced);
    p->allreduces += 1;
}

static double exchange(struct pair *p, size_t n, int k)
{
    return alone(p, allreduce_call, n, k);
}

/* The same allreduce by ring: at two leaders two exchanges of n / 2 bytes (the
 * first reduced), where recursive doubling makes one of n: the difference of
 * the two at small n is what a round after the first costs. */
static void ring_call(struct pair *p, size_t n, int i)
{
    (void) i;
    MPI_Allreduce(MPI_IN_PLACE, p->buf, (int) (n / sizeof(float)), MPI_FLOAT, MPI_SUM, p->ring);
    p->allreduces += 1;
    p->rings += 1;
}

static double two_rounds(struct pair *p, size_t n, int k)
{
    return alone(p, ring_call, n, k);
}

/* An allgather of n bytes per rank: one exchange, both ends at once, as every
 * round of ring, recursive doubling, Rabenseifner and allgather is. */
static void allgather_call(struct pair *p, size_t n, int i)
{
    (void) i;
    MPI_Allgather(p->buf, (int) n, MPI_BYTE, p->gathered, (int) n, MPI_BYTE, p->forced);
    p->allgathers += 1;
}

static double swap(struct pair *p, size_t n, int k)
{
    return alone(p, allgather_call, n, k);
}

/* The slower of the two ranks' times. Point-to-point: no collective counter moves. */
static double slower(const struct pair *p, double mine)
{
    double theirs;

    MPI_Sendrecv(&mine, 1, MPI_DOUBLE, 1 - p->rank, CONTROL_TAG, &theirs, 1, MPI_DOUBLE,
                 1 - p->rank, CONTROL_TAG, p->plain, MPI_STATUS_IGNORE);
    return mine > theirs ? mine : theirs;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;

    return x < y ? -1 : x > y;
}

#define MAX_RUNS 4

/* Per run and value of the sweep, the median of the plan's runs, each long
 * enough for the clock, of the slower rank's time (as coll_latency's Max). The
 * runs go round the sweep and the kinds of run rep by rep, so that a burst of
 * load on a shared machine spreads over the sizes and over the measurements
 * whose differences the fit takes, rather than bending one of them. */
static void measure(struct pair *p, const run_fn *runs, int nruns, const size_t *values,
                    int count, const struct plan *plan, double *const *medians)
{
    double times[MAX_RUNS][MAX_SIZES][MAX_REPS];
    int calls[MAX_RUNS][MAX_SIZES];

    for (int f = 0; f < nruns; ++f) {
        for (int i = 0; i < count; ++i) {
            double estimate;

            runs[f](p, values[i], 1); /* the first: connections, registrations */
            estimate = runs[f](p, values[i], 1);
            calls[f][i] = estimate > 0 ? (int) fmin(MAX_CALLS_PER_RUN,
                                                    fmax(1.0, plan->budget / estimate))
                                       : 1;
            calls[f][i] = agree(p, calls[f][i]);
        }
    }
    for (int r = 0; r < plan->reps; ++r) {
        for (int i = 0; i < count; ++i) {
            for (int f = 0; f < nruns; ++f) {
                times[f][i][r] = slower(p, runs[f](p, values[i], calls[f][i]));
            }
        }
    }
    for (int f = 0; f < nruns; ++f) {
        for (int i = 0; i < count; ++i) {
            qsort(times[f][i], (size_t) plan->reps, sizeof(times[f][i][0]), by_value);
            medians[f][i] = times[f][i][plan->reps / 2];
        }
    }
}

/* One kind of run over a sweep. */
static void measure_one(struct pair *p, run_fn run, const size_t *values, int count,
                        const struct plan *plan, double *medians)
{
    measure(p, &run, 1, values, count, plan, &medians);
}

/* y = a + b x by least squares; relative: each point weighted 1 / y^2, so that
 * small sizes count as much as large ones. Residuals are relative. */
struct line {
    double a, b;
    double rms, worst; /* relative residuals */
};

static struct line fit_line(const double *x, const double *y, int n, bool relative)
{
    double s = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, squares = 0;
    struct line fit = {0};

    for (int i = 0; i < n; ++i) {
        double w = relative ? 1.0 / (y[i] * y[i]) : 1.0;

        s += w;
        sx += w * x[i];
        sy += w * y[i];
        sxx += w * x[i] * x[i];
        sxy += w * x[i] * y[i];
    }
    fit.b = (s * sxy - sx * sy) / (s * sxx - sx * sx);
    fit.a = (sy - fit.b * sx) / s;
    for (int i = 0; i < n; ++i) {
        double residual = (fit.a + fit.b * x[i] - y[i]) / y[i];

        squares += residual * residual;
        fit.worst = fmax(fit.worst, fabs(residual));
    }
    fit.rms = sqrt(squares / n);
    return fit;
}

/* Open MPI's own MPI_Send/MPI_Recv (its BTLs): half a round trip of n bytes. */
static double pingpong(struct pair *p, size_t n, int k)
{
    double start;

    MPI_Barrier(p->plain);
    start = MPI_Wtime();
    for (int i = 0; i < k; ++i) {
        if (0 == p->rank) {
            MPI_Send(p->buf, (int) n, MPI_BYTE, 1, CONTROL_TAG, p->plain);
            MPI_Recv(p->buf, (int) n, MPI_BYTE, 1, CONTROL_TAG, p->plain, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(p->buf, (int) n, MPI_BYTE, 0, CONTROL_TAG, p->plain, MPI_STATUS_IGNORE);
            MPI_Send(p->buf, (int) n, MPI_BYTE, 0, CONTROL_TAG, p->plain);
        }
    }
    return (MPI_Wtime() - start) / (2.0 * k);
}

/* coll/async's MPI_T counters of one collective: the native and delegated calls. */
struct counters {
    MPI_T_pvar_handle native, delegated;
};

static int open_counters(MPI_T_pvar_session session, const char *coll, struct counters *c,
                         char *why)
{
    MPI_T_pvar_handle *handles[2] = {&c->native, &c->delegated};
    const char *paths[2] = {"native", "delegated"};

    for (int i = 0; i < 2; ++i) {
        char name[96];
        int index, count;

        snprintf(name, sizeof(name), "coll_async_%s_%s", coll, paths[i]);
        if (MPI_SUCCESS != MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &index)
            || MPI_SUCCESS != MPI_T_pvar_handle_alloc(session, index, NULL, handles[i], &count)) {
            snprintf(why, WHY_MAX, "no MPI_T counter %s: is coll/async selected "
                     "(--mca coll async,...)?", name);
            return -1;
        }
    }
    return 0;
}

static unsigned long long read_counter(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    unsigned long long value = 0;

    MPI_T_pvar_read(session, handle, &value);
    return value;
}

/* Whether the calls since before (native, delegated) were want native calls and
 * no delegated one; why says otherwise. */
static int check_counters(MPI_T_pvar_session session, const struct counters *c,
                          const unsigned long long before[2], long want, const char *coll,
                          char *why)
{
    unsigned long long native = read_counter(session, c->native) - before[0];
    unsigned long long delegated = read_counter(session, c->delegated) - before[1];

    if (native == (unsigned long long) want && 0 == delegated) {
        return 0;
    }
    snprintf(why, WHY_MAX, "of %ld timed MPI_%s calls coll/async ran %llu and handed %llu "
             "below: not all went through the component", want, coll, native, delegated);
    return -1;
}

/* Whether the stages between nodes that ran ring since before were the ring
 * allreduces made: the hint took, and no other call ran ring. */
static int check_ring(MPI_T_pvar_session session, MPI_T_pvar_handle ring,
                      unsigned long long before, long want, char *why)
{
    unsigned long long ran = read_counter(session, ring) - before;

    if (ran == (unsigned long long) want) {
        return 0;
    }
    snprintf(why, WHY_MAX, "of %ld allreduces forced to ring, %llu ran ring between the "
             "nodes: the hint coll_async_allreduce_algorithm did not take", want, ran);
    return -1;
}

/* A string MPI_T control variable, or "" where there is none. */
static void read_cvar(const char *name, char *out, int size)
{
    MPI_T_cvar_handle handle;
    int index, count;

    out[0] = '\0';
    if (MPI_SUCCESS == MPI_T_cvar_get_index(name, &index)
        && MPI_SUCCESS == MPI_T_cvar_handle_alloc(index, NULL, &handle, &count)) {
        if (count < size) {
            MPI_T_cvar_read(handle, out);
        }
        MPI_T_cvar_handle_free(&handle);
    }
}

/* Whether this machine has an active RDMA port, as rdma-core would list it. */
static bool rdma_port_active(void)
{
    DIR *devices = opendir("/sys/class/infiniband");
    bool active = false;

    for (struct dirent *d; NULL != devices && !active && NULL != (d = readdir(devices));) {
        for (int port = 1; '.' != d->d_name[0] && port <= 2 && !active; ++port) {
            char path[512], state[64] = "";
            FILE *f;

            snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/state", d->d_name,
                     port);
            if (NULL != (f = fopen(path, "r"))) {
                active = NULL != fgets(state, sizeof(state), f) && NULL != strstr(state, "ACTIVE");
                fclose(f);
            }
        }
    }
    if (NULL != devices) {
        closedir(devices);
    }
    return active;
}

/* The transport the mapper picks between the two: verbs where both have an
 * active port and verbs is not excluded, else TCP. */
static bool both_have_verbs(const struct pair *p)
{
    char exclude[256];
    int mine, both;

    read_cvar("coll_async_verbs_if_exclude", exclude, sizeof(exclude));
    mine = 0 != strcmp(exclude, "all") && rdma_port_active();
    MPI_Allreduce(&mine, &both, 1, MPI_INT, MPI_MIN, p->plain);
    return both;
}

static const size_t pingpong_sizes[2] = {SMALL_BYTES, 1 << 20};

/* What was measured, for the file. */
struct results {
    const struct plan *plan;
    double hop[MAX_SIZES], swap[MAX_SIZES], allreduce[MAX_SIZES], ring[MAX_SIZES];
    double bursts[MAX_SIZES];
    double pingpong[2]; /* at pingpong_sizes */
    struct line hop_fit, swap_fit, allreduce_fit, ring_fit, burst_fit;
    double later_round;     /* L + 2o: ring less recursive doubling, small sizes */
    double first_exchange;  /* the allgather's one round, small sizes, less n G */
    double first_allreduce; /* recursive doubling's one round, less n (G + reduce) */
    struct sim_params_file file;
    bool latency_clamped, reduce_clamped, rounds_unseen;
    char peer_host[MPI_MAX_PROCESSOR_NAME];
};

static int measure_all(struct pair *p, const struct plan *plan, struct results *out, char *why)
{
    MPI_T_pvar_session session;
    struct counters bcast, allreduce, allgather;
    unsigned long long bcast_before[2], allreduce_before[2], allgather_before[2], ring_before;
    MPI_T_pvar_handle ring;
    int rc, ignored, index, count;

    MPI_T_init_thread(MPI_THREAD_SINGLE, &ignored);
    MPI_T_pvar_session_create(&session);
    rc = open_counters(session, "bcast", &bcast, why);
    if (0 == rc) {
        rc = open_counters(session, "allreduce", &allreduce, why);
    }
    if (0 == rc) {
        rc = open_counters(session, "allgather", &allgather, why);
    }
    if (0 == rc
        && (MPI_SUCCESS != MPI_T_pvar_get_index("coll_async_between_ring",
                                                MPI_T_PVAR_CLASS_COUNTER, &index)
            || MPI_SUCCESS != MPI_T_pvar_handle_alloc(session, index, NULL, &ring, &count))) {
        snprintf(why, WHY_MAX, "no MPI_T counter coll_async_between_ring: a coll/async "
                 "older than this program?");
        rc = -1;
    }
    if (0 == rc) {
        ring_before = read_counter(session, ring);
        allgather_before[0] = read_counter(session, allgather.native);
        allgather_before[1] = read_counter(session, allgather.delegated);
        bcast_before[0] = read_counter(session, bcast.native);
        bcast_before[1] = read_counter(session, bcast.delegated);
        allreduce_before[0] = read_counter(session, allreduce.native);
        allreduce_before[1] = read_counter(session, allreduce.delegated);
        const run_fn runs[MAX_RUNS] = {swap, exchange, two_rounds, bounce};
        double *const medians[MAX_RUNS] = {out->swap, out->allreduce, out->ring, out->hop};

        measure(p, runs, MAX_RUNS, plan->sizes, plan->nsizes, plan, medians);
        measure_one(p, burst, plan->bursts, plan->nbursts, plan, out->bursts);
        rc = check_counters(session, &bcast, bcast_before, p->bcasts, "Bcast", why);
        if (0 == rc) {
            rc = check_counters(session, &allreduce, allreduce_before, p->allreduces,
                                "Allreduce", why);
        }
        if (0 == rc) {
            rc = check_counters(session, &allgather, allgather_before, p->allgathers,
                                "Allgather", why);
        }
        if (0 == rc) {
            rc = check_ring(session, ring, ring_before, p->rings, why);
        }
    }
    measure_one(p, pingpong, pingpong_sizes, 2, plan, out->pingpong);
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
    return rc;
}

/* Sizes up to this count as small: their bytes' share of a round is a few us. */
#define SMALL_LIMIT 8192

/* The median of the values at the sweep's small sizes, each less bytes * per_byte. */
static double small_median(const struct plan *plan, const double *values, const double *minus,
                           double per_byte)
{
    double v[MAX_SIZES];
    int n = 0;

    for (int i = 0; i < plan->nsizes && plan->sizes[i] <= SMALL_LIMIT; ++i) {
        v[n++] = values[i] - (NULL != minus ? minus[i] : 0.0) - (double) plan->sizes[i] * per_byte;
    }
    if (0 == n) {
        return 0.0;
    }
    qsort(v, (size_t) n, sizeof(v[0]), by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The parameters from the measurements (rank 0's). */
static void fit_all(struct results *r, bool verbs)
{
    const struct plan *plan = r->plan;
    double sizes[MAX_SIZES], counts[MAX_SIZES];
    struct sim_params *p = &r->file.params;
    double latency;

    for (int i = 0; i < plan->nsizes; ++i) {
        sizes[i] = (double) plan->sizes[i];
    }
    for (int i = 0; i < plan->nbursts; ++i) {
        counts[i] = (double) plan->bursts[i];
    }
    r->hop_fit = fit_line(sizes, r->hop, plan->nsizes, true);
    r->swap_fit = fit_line(sizes, r->swap, plan->nsizes, true);
    r->allreduce_fit = fit_line(sizes, r->allreduce, plan->nsizes, true);
    r->ring_fit = fit_line(sizes, r->ring, plan->nsizes, true);
    r->burst_fit = fit_line(counts, r->bursts, plan->nbursts, false);

    /* A round of ring, recursive doubling, Rabenseifner or allgather is an
     * exchange, both ends sending at once: G is the allgather's slope, reduce the
     * allreduce's less G (a lone hop, the bcast's, may cost less where the ends
     * share cores, as over loopback: the file's comments show it). */
    p->gap = fmax(0.0, r->swap_fit.b);
    r->reduce_clamped = r->allreduce_fit.b < p->gap;
    p->reduce = fmax(0.0, r->allreduce_fit.b - p->gap);
    /* A call's first round costs more than its later ones (entering the call,
     * planning, the driver's first pass): at two leaders ring's allreduce is
     * recursive doubling's plus one exchange of n / 2 without its reduction, so
     * their difference at small sizes is a later round, L + 2o, and what the
     * allgather's one round costs beyond it is the fixed cost per call. Medians
     * over the small sizes, which a burst of load at one size does not move. */
    r->later_round = small_median(plan, r->ring, r->allreduce, -p->reduce / 2);
    r->first_exchange = small_median(plan, r->swap, NULL, p->gap);
    r->first_allreduce = small_median(plan, r->allreduce, NULL, p->gap + p->reduce);
    r->rounds_unseen = r->later_round <= 0 || r->later_round > r->first_exchange;
    if (r->rounds_unseen) {
        /* Noise hid the second round: the one round is all there is to go by. */
        r->later_round = r->first_exchange;
    }
    p->call = r->first_exchange - r->later_round;
    /* m bcasts back to back cost the busier end a call and one o each: that
     * splits L from o; where that leaves no o, or 2o would exceed the later
     * round, L = 0 and o is half of it (at one rank per node every round pays
     * L + 2o, so the split matters little). */
    p->overhead = r->burst_fit.b - p->call;
    latency = r->later_round - 2 * p->overhead;
    r->latency_clamped = latency < 0 || p->overhead <= 0;
    if (r->latency_clamped) {
        p->overhead = r->later_round / 2;
        latency = 0.0;
    }
    p->latency = latency;
    /* Not measured: the multicast root's cost per acknowledgement is taken as o,
     * as the -P defaults do. */
    p->ack = p->overhead;
    p->verbs = verbs;
    snprintf(r->file.transport, sizeof(r->file.transport), "%s", verbs ? "verbs" : "tcp");
}

/* The first line of Open MPI's library version. */
static void library_version(char *out, size_t size)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length;

    MPI_Get_library_version(version, &length);
    version[strcspn(version, ",\n")] = '\0';
    snprintf(out, size, "%s", version);
}

/* The CPU's model name, or "?". */
static void cpu_model(char *out, size_t size)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];

    snprintf(out, size, "?");
    while (NULL != f && NULL != fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');

        if (0 == strncmp(line, "model name", 10) && NULL != colon) {
            colon += strspn(colon + 1, " ") + 1;
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(out, size, "%s", colon);
            break;
        }
    }
    if (NULL != f) {
        fclose(f);
    }
}

static void write_sweep(FILE *f, const char *what, const struct plan *plan, const double *times,
                        const struct line *fit)
{
    fprintf(f, "# %s: bytes, measured us, fitted us, residual %%\n", what);
    for (int i = 0; i < plan->nsizes; ++i) {
        double fitted = fit->a + fit->b * (double) plan->sizes[i];

        fprintf(f, "#   %9zu %10.2f %10.2f %+6.1f\n", plan->sizes[i], times[i] * 1e6,
                fitted * 1e6, 100 * (fitted - times[i]) / times[i]);
    }
}

static int write_file(const char *path, const struct results *r, int nodes)
{
    const struct plan *plan = r->plan;
    const struct sim_params *p = &r->file.params;
    FILE *f = fopen(path, "w");
    char host[MPI_MAX_PROCESSOR_NAME], version[256], cpu[128], date[64];
    struct utsname uts;
    time_t now = time(NULL);
    int length;

    if (NULL == f) {
        return -1;
    }
    MPI_Get_processor_name(host, &length);
    library_version(version, sizeof(version));
    cpu_model(cpu, sizeof(cpu));
    uname(&uts);
    strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
    fprintf(f, "# bench/simulate's model fitted by bench/fit_model (bench/tune_model.c)\n"
               "# machine: %s and %s (%s %s %s; %s; %ld online CPUs), of %d leaders\n"
               "# date: %s\n# Open MPI: %s\n"
               "# transport between the two leaders: %s%s\n",
            host, r->peer_host, uts.sysname, uts.release, uts.machine, cpu,
            sysconf(_SC_NPROCESSORS_ONLN), nodes, date, version, r->file.transport,
            0 == strcmp(host, r->peer_host) ? " (one host: loopback, virtual nodes)" : "");
    if (0 != sim_params_write(f, &r->file)) {
        fclose(f);
        return -1;
    }
    fprintf(f, "# the fit (%s, %d runs per point, sizes up to %d B small):\n"
               "#   allgather recursive_doubling (one exchange) = call + L + 2o + n G: %.2f us "
               "+ n %.4f ns/B, relative residuals rms %.1f %%, worst %.1f %%\n"
               "#   allreduce recursive_doubling (one exchange) = call + L + 2o + n (G + "
               "reduce): %.2f us + n %.4f ns/B, relative residuals rms %.1f %%, worst %.1f %%\n"
               "#   allreduce ring (two exchanges of n / 2) = call + 2 (L + 2o) + n (G + "
               "reduce / 2): %.2f us + n %.4f ns/B, relative residuals rms %.1f %%, worst "
               "%.1f %%\n"
               "#   (not the model's) bcast hop, a lone message: %.2f us + n %.4f ns/B, "
               "relative residuals rms %.1f %%, worst %.1f %%\n"
               "#   %zu bcasts of 8 B back to back, then one back = a + m (call + o): %.2f "
               "us + m %.2f us, residuals rms %.1f %%, worst %.1f %%\n",
            plan->quick ? "quick" : "full", plan->reps, SMALL_LIMIT, r->swap_fit.a * 1e6,
            r->swap_fit.b * 1e9, 100 * r->swap_fit.rms, 100 * r->swap_fit.worst,
            r->allreduce_fit.a * 1e6, r->allreduce_fit.b * 1e9, 100 * r->allreduce_fit.rms,
            100 * r->allreduce_fit.worst, r->ring_fit.a * 1e6, r->ring_fit.b * 1e9,
            100 * r->ring_fit.rms, 100 * r->ring_fit.worst, r->hop_fit.a * 1e6,
            r->hop_fit.b * 1e9, 100 * r->hop_fit.rms, 100 * r->hop_fit.worst,
            plan->bursts[plan->nbursts - 1], r->burst_fit.a * 1e6, r->burst_fit.b * 1e6,
            100 * r->burst_fit.rms, 100 * r->burst_fit.worst);
    fprintf(f, "#   G = the allgather's slope; reduce = the allreduce's slope - G%s\n"
               "#   L + 2o (a later round) = median over the small sizes of ring - recursive "
               "doubling + n reduce / 2 = %.2f us%s\n"
               "#   first round = median over the small sizes of the allgather - n G = %.2f "
               "us; call = that - (L + 2o) = %.2f us (the allreduce's first round: %.2f us)\n"
               "#   o = the back-to-back slope - call%s; ack_us = o (not measured)\n",
            r->reduce_clamped ? " (negative: 0)" : "", r->later_round * 1e6,
            r->rounds_unseen ? " (not between 0 and the first round: noise; taken as the "
                               "first round, call = 0)" : "",
            r->first_exchange * 1e6, p->call * 1e6, r->first_allreduce * 1e6,
            r->latency_clamped ? " (not above 0, or L = L + 2o - 2o would be negative: L = 0, "
                                 "o = (L + 2o) / 2)"
                               : "");
    write_sweep(f, "allgather exchange", plan, r->swap, &r->swap_fit);
    write_sweep(f, "bcast hop", plan, r->hop, &r->hop_fit);
    write_sweep(f, "allreduce recursive_doubling", plan, r->allreduce, &r->allreduce_fit);
    write_sweep(f, "allreduce ring", plan, r->ring, &r->ring_fit);
    fprintf(f, "# back to back: count, measured us\n");
    for (int i = 0; i < plan->nbursts; ++i) {
        fprintf(f, "#   %3zu %10.2f\n", plan->bursts[i], r->bursts[i] * 1e6);
    }
    fprintf(f, "# Open MPI's own MPI_Send/MPI_Recv (its BTLs, not coll/async) half round trip: "
               "8 B %.2f us, 1 MiB %.2f us\n",
            r->pingpong[0] * 1e6, r->pingpong[1] * 1e6);
    return 0 == fclose(f) ? 0 : -1;
}

/* The measuring pair's part: 0, or -1 with why. */
static int run_pair(MPI_Comm leaders, MPI_Comm plain, int quick, const char *path, char *why)
{
    struct plan plan;
    struct results results = {.plan = &plan};
    struct pair p = {.plain = plain};
    MPI_Info info;
    char host[MPI_MAX_PROCESSOR_NAME];
    int rc, length, nodes;
    bool verbs;

    plan_for(quick, &plan);
    MPI_Comm_rank(plain, &p.rank);
    MPI_Comm_size(leaders, &nodes);
    p.buf = calloc(plan.sizes[plan.nsizes - 1], 1);
    p.gathered = calloc(plan.sizes[plan.nsizes - 1], 2);
    if (NULL == p.buf || NULL == p.gathered) {
        free(p.buf);
        free(p.gathered);
        snprintf(why, WHY_MAX, "out of memory");
        return -1;
    }
    /* The hints name the leaders' algorithms; a build that does not know them
     * ignores them (then mpirun's MCA parameters must force the same). */
    MPI_Info_create(&info);
    MPI_Info_set(info, "coll_async_bcast_algorithm", "binomial");
    MPI_Info_set(info, "coll_async_allreduce_algorithm", "recursive_doubling");
    MPI_Info_set(info, "coll_async_allgather_algorithm", "recursive_doubling");
    MPI_Comm_dup_with_info(plain, info, &p.forced);
    MPI_Info_set(info, "coll_async_allreduce_algorithm", "ring");
    MPI_Comm_dup_with_info(plain, info, &p.ring);
    MPI_Info_free(&info);

    MPI_Get_processor_name(host, &length);
    MPI_Sendrecv(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1 - p.rank, CONTROL_TAG,
                 results.peer_host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1 - p.rank, CONTROL_TAG,
                 plain, MPI_STATUS_IGNORE);
    verbs = both_have_verbs(&p);
    rc = measure_all(&p, &plan, &results, why);
    MPI_Comm_free(&p.forced);
    MPI_Comm_free(&p.ring);
    free(p.buf);
    free(p.gathered);
    if (0 == rc && 0 == p.rank) {
        fit_all(&results, verbs);
        rc = write_file(path, &results, nodes);
        if (0 != rc) {
            snprintf(why, WHY_MAX, "cannot write %s", path);
        }
    }
    return rc;
}

int tune_model_run(MPI_Comm leaders, int quick, const char *params_path)
{
    char why[WHY_MAX] = "";
    MPI_Comm plain;
    int rank, size, rc = 0, first_failed, failed;

    MPI_Comm_rank(leaders, &rank);
    MPI_Comm_size(leaders, &size);
    if (size < 2) {
        if (0 == rank) {
            fprintf(stderr, "tune_model: needs 2 nodes or more, has %d\n", size);
        }
        return -1;
    }
    MPI_Comm_split(leaders, rank < 2 ? 0 : MPI_UNDEFINED, rank, &plain);
    if (MPI_COMM_NULL != plain) {
        rc = run_pair(leaders, plain, quick, params_path, why);
        MPI_Comm_free(&plain);
    }
    failed = 0 != rc ? rank : size;
    MPI_Allreduce(&failed, &first_failed, 1, MPI_INT, MPI_MIN, leaders);
    if (first_failed == rank) {
        fprintf(stderr, "tune_model: %s\n", why);
    }
    return first_failed < size ? -1 : 0;
}
