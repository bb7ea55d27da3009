/*
 * allreduce_latency - MPI_Allreduce latency benchmark for coll/async.
 *
 * The output uses the column layout of osu_allreduce -f (plus the -c
 * validation column) so scripts written for OSU can parse it.  Timing also
 * follows OSU: each call is timed on its own with a barrier after it, each
 * rank averages its calls, and rank 0 prints the avg/min/max of those
 * per-rank averages.
 *
 * Build: mpicc -O2 -Wall -Wextra -o allreduce_latency allreduce_latency.c
 */
#define _POSIX_C_SOURCE 200809L /* getopt, posix_memalign, sysconf under -std=c99 */

#include <mpi.h>

#include <errno.h>
#include <stdint.h>
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

/* Column widths of OSU's output. */
#define SIZE_WIDTH 10
#define FIELD_WIDTH 18
#define ITERS_WIDTH 12

enum elem_kind { KIND_CHAR, KIND_INT, KIND_FLOAT };

struct options {
    size_t min_bytes, max_bytes;
    long iters, warmup;         /* -1: use the size-dependent default */
    enum elem_kind kind;
    int validate;
};

static int my_rank, nprocs;

static void usage(const char *prog)
{
    if (my_rank != 0)
        return;
    printf("Usage: %s [-m [MIN:]MAX] [-i ITER] [-x WARMUP] [-T char|int|float] [-c] [-h]\n"
           "  -m [MIN:]MAX  message sizes in bytes, doubling from MIN to MAX"
           " (default 1:1048576)\n"
           "  -i ITER       timed iterations per size (default %d, %d above %d bytes)\n"
           "  -x WARMUP     untimed warm-up iterations per size (default %d, %d above %d bytes)\n"
           "  -T TYPE       element type: char (MPI_CHAR), int (MPI_INT), float (MPI_FLOAT);"
           " op is MPI_SUM\n"
           "  -c            validate the result of every size; exit non-zero on failure\n"
           "  -h            print this help\n",
           prog, ITERS_SMALL, ITERS_LARGE, LARGE_MSG_BYTES,
           WARMUP_SMALL, WARMUP_LARGE, LARGE_MSG_BYTES);
}

/* Every rank parses the same argv, so all of them stop together on error. */
static void die(const char *msg, const char *arg)
{
    if (my_rank == 0)
        fprintf(stderr, "allreduce_latency: %s%s\n", msg, arg ? arg : "");
    MPI_Finalize();
    exit(EXIT_FAILURE);
}

static long parse_long(const char *s, long min, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < min)
        die(what, s);
    return v;
}

static void parse_range(const char *arg, struct options *o)
{
    const char *max_str = arg, *colon = strchr(arg, ':');
    char *end;

    errno = 0;
    if (colon) {
        o->min_bytes = strtoull(arg, &end, 10);
        if (end != colon)
            die("bad -m range: ", arg);
        max_str = colon + 1;
    }
    o->max_bytes = strtoull(max_str, &end, 10);
    /* strtoull accepts a sign, so reject '-' explicitly. */
    if (errno || end == max_str || *end != '\0' || strchr(arg, '-') ||
        o->min_bytes == 0 || o->min_bytes > o->max_bytes)
        die("bad -m range (want [MIN:]MAX with 1 <= MIN <= MAX): ", arg);
}

static void parse_options(int argc, char **argv, struct options *o)
{
    int c;

    *o = (struct options){ .min_bytes = 1, .max_bytes = 1 << 20,
                           .iters = -1, .warmup = -1, .kind = KIND_CHAR };
    opterr = 0; /* report errors once, from rank 0, not from every rank */
    while ((c = getopt(argc, argv, "m:i:x:T:ch")) != -1) {
        switch (c) {
        case 'm': parse_range(optarg, o); break;
        case 'i': o->iters = parse_long(optarg, 1, "bad -i value: "); break;
        case 'x': o->warmup = parse_long(optarg, 0, "bad -x value: "); break;
        case 'T':
            if (!strcmp(optarg, "char"))       o->kind = KIND_CHAR;
            else if (!strcmp(optarg, "int"))   o->kind = KIND_INT;
            else if (!strcmp(optarg, "float")) o->kind = KIND_FLOAT;
            else die("unknown -T type (char, int, float): ", optarg);
            break;
        case 'c': o->validate = 1; break;
        case 'h':
            usage(argv[0]);
            MPI_Finalize();
            exit(EXIT_SUCCESS);
        default:
            die("invalid option or missing argument (see -h): -",
                (char[]){ (char)optopt, '\0' });
        }
    }
    if (optind < argc)
        die("unexpected argument: ", argv[optind]);
}

/*
 * Validation data: each element is 0 or 1, so the sum over ranks is at most
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

/* Runs one fresh allreduce and returns the number of mismatches, all ranks. */
static long check_allreduce(const void *sbuf, void *rbuf, int count,
                            MPI_Datatype type, size_t elem_size, enum elem_kind k)
{
    long errors = 0, total;

    /* 0xff bytes are -1 or NaN, never a valid sum, so a no-op is caught. */
    memset(rbuf, 0xff, (size_t)count * elem_size);
    MPI_Allreduce(sbuf, rbuf, count, type, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < count; i++) {
        uint32_t h = index_hash((size_t)i);
        int expected = 0;
        for (int r = 0; r < nprocs; r++)
            expected += contribution(h, r);
        errors += !elem_equals(k, rbuf, (size_t)i, expected);
    }
    MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

int main(int argc, char **argv)
{
    static const char *const type_names[] = { "MPI_CHAR", "MPI_INT", "MPI_FLOAT" };
    struct options opt;
    MPI_Datatype type;
    size_t elem_size;
    void *sbuf = NULL, *rbuf = NULL; /* MPI_Abort is not known to be noreturn */
    int failed = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    parse_options(argc, argv, &opt);

    switch (opt.kind) {
    case KIND_INT:   type = MPI_INT;   elem_size = sizeof(int);   break;
    case KIND_FLOAT: type = MPI_FLOAT; elem_size = sizeof(float); break;
    default:         type = MPI_CHAR;  elem_size = sizeof(char);  break;
    }
    /* Counts are ints; the SIZE_MAX bound also keeps size *= 2 from wrapping. */
    if (opt.max_bytes / elem_size > INT32_MAX || opt.max_bytes > SIZE_MAX / 2)
        die("-m MAX too large", NULL);
    if (opt.validate && opt.kind == KIND_CHAR && nprocs > 127)
        die("-c with char needs at most 127 ranks (sums would overflow)", NULL);

    /* Page-aligned buffers, as OSU uses, so alignment doesn't skew results. */
    long page = sysconf(_SC_PAGESIZE);
    if (posix_memalign(&sbuf, (size_t)page, opt.max_bytes) ||
        posix_memalign(&rbuf, (size_t)page, opt.max_bytes)) {
        /* Other ranks may have succeeded and would wait forever: abort all. */
        fprintf(stderr, "allreduce_latency: rank %d: out of memory\n", my_rank);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    }
    /* Filling both buffers also faults their pages in before timing. */
    for (size_t i = 0; i < opt.max_bytes / elem_size; i++)
        put_elem(opt.kind, sbuf, i, contribution(index_hash(i), my_rank));
    memset(rbuf, 0, opt.max_bytes);

    if (my_rank == 0) {
        printf("# coll/async allreduce latency (OSU-compatible output)\n");
        printf("# Datatype: %s, op MPI_SUM, %d process%s\n", type_names[opt.kind], nprocs,
               nprocs == 1 ? "" : "es");
        printf("%-*s%*s%*s%*s%*s", SIZE_WIDTH, "# Size", FIELD_WIDTH, "Avg Latency(us)",
               FIELD_WIDTH, "Min Latency(us)", FIELD_WIDTH, "Max Latency(us)",
               ITERS_WIDTH, "Iterations");
        if (opt.validate)
            printf("%*s", FIELD_WIDTH, "Validation");
        printf("\n");
        fflush(stdout);
    }

    for (size_t size = opt.min_bytes; size <= opt.max_bytes; size *= 2) {
        int count = (int)(size / elem_size);
        int large = size > LARGE_MSG_BYTES;
        long iters = opt.iters >= 0 ? opt.iters : large ? ITERS_LARGE : ITERS_SMALL;
        long warmup = opt.warmup >= 0 ? opt.warmup : large ? WARMUP_LARGE : WARMUP_SMALL;
        double busy = 0.0, mean_us, min_us, max_us, sum_us;

        if (count == 0)
            continue; /* smaller than one element */

        MPI_Barrier(MPI_COMM_WORLD);
        for (long it = 0; it < warmup + iters; it++) {
            double t0 = MPI_Wtime();
            MPI_Allreduce(sbuf, rbuf, count, type, MPI_SUM, MPI_COMM_WORLD);
            double t1 = MPI_Wtime();
            if (it >= warmup)
                busy += t1 - t0;
            /* Start every call together, as OSU does, so skew isn't timed. */
            MPI_Barrier(MPI_COMM_WORLD);
        }
        mean_us = busy * 1e6 / (double)iters;
        MPI_Reduce(&mean_us, &min_us, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        MPI_Reduce(&mean_us, &max_us, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&mean_us, &sum_us, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

        long errors = opt.validate ?
            check_allreduce(sbuf, rbuf, count, type, elem_size, opt.kind) : 0;
        failed |= errors != 0;

        if (my_rank == 0) {
            printf("%-*zu%*.2f%*.2f%*.2f%*ld", SIZE_WIDTH, size,
                   FIELD_WIDTH, sum_us / nprocs, FIELD_WIDTH, min_us,
                   FIELD_WIDTH, max_us, ITERS_WIDTH, iters);
            if (opt.validate)
                printf("%*s", FIELD_WIDTH, errors ? "Fail" : "Pass");
            printf("\n");
            fflush(stdout);
        }
        /* Keep the last size's stragglers out of the next size's timing. */
        MPI_Barrier(MPI_COMM_WORLD);
    }

    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
