/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_churn: communicators created and freed many times, one collective on each.
 *
 *   mpirun -np N coll_churn [-n CYCLES] [--rss-bound KIB] [--no-counters]
 *
 * Each cycle dups MPI_COMM_WORLD, runs one collective on the new communicator
 * (in turn: MPI_Allreduce, MPI_Ibcast and MPI_Wait, a persistent
 * MPI_Allreduce_init started, waited for and freed, MPI_Barrier), checks its
 * result and frees the communicator. A component that keeps anything per
 * communicator (module, shared-memory segment, file descriptor, mapping) must give
 * it back at MPI_Comm_free, so after a warm-up the process must stop growing:
 *   - the resident set (/proc/self/statm) after the second half of the cycles may
 *     exceed the one after the first half by less than --rss-bound KiB (default
 *     1024; Open MPI itself grows by about 60 bytes a cycle, so long runs need
 *     more), and the virtual size by less than 128 times that (malloc reserves
 *     64 MiB at a time for a thread's arena; a shared-memory segment mapped per
 *     communicator and never unmapped is far more);
 *   - the open file descriptors (/proc/self/fd) must not be more than after the
 *     first half;
 *   - no /dev/shm/coll_async* file may be left at the end that was not there at
 *     the start (one that is there only for a moment, another job's, is not one:
 *     a file counts only when it is still there a second later).
 * Around each collective (not around the dup and free, which run collectives of
 * their own on MPI_COMM_WORLD) coll/async's counter coll_async_<name>_native must
 * move by one; --no-counters skips that, for runs without the component.
 * Rank 0 prints the sizes and ends with "coll_churn: ... N failures"; the exit
 * status is non-zero on any failure.
 */

#define _DEFAULT_SOURCE /* sleep, readdir */

#include <dirent.h>
#include <mpi.h>
#include "mpi4_persistent.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pvar_counter.h"

enum kind { ALLREDUCE, IBCAST, ALLREDUCE_INIT, BARRIER, NUM_KINDS };

static const char *const counter_names[NUM_KINDS] = {
    "coll_async_allreduce_native",
    "coll_async_ibcast_native",
    "coll_async_allreduce_init_native",
    "coll_async_barrier_native",
};

static int world_rank, world_size;
static long failures;

/* Counts a failure; prints the first ones, each in one write. */
#define FAIL(...)                                                                     \
    do {                                                                              \
        if (failures++ < 20) {                                                        \
            char line_[512];                                                          \
            snprintf(line_, sizeof(line_), __VA_ARGS__);                              \
            fprintf(stderr, "coll_churn: rank %d: FAIL %s\n", world_rank, line_);     \
        }                                                                             \
    } while (0)

struct usage {
    long rss_kib, vsize_kib, fds;
};

static struct usage measure(void)
{
    struct usage u = {-1, -1, 0};
    long pages_total, pages_resident, page_kib = sysconf(_SC_PAGESIZE) / 1024;
    FILE *f = fopen("/proc/self/statm", "r");
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;

    if (f && 2 == fscanf(f, "%ld %ld", &pages_total, &pages_resident)) {
        u.vsize_kib = pages_total * page_kib;
        u.rss_kib = pages_resident * page_kib;
    }
    if (f) {
        fclose(f);
    }
    while (d && NULL != (e = readdir(d))) {
        u.fds += '.' != e->d_name[0];
    }
    if (d) {
        closedir(d);
    }
    return u;
}

/* The names of the coll_async files in /dev/shm, one string, each name followed
 * by '/'; "" when none. */
static void shm_files(char *out, size_t len)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;

    out[0] = '\0';
    while (d && NULL != (e = readdir(d))) {
        if (0 == strncmp(e->d_name, "coll_async", 10) &&
            strlen(out) + strlen(e->d_name) + 2 < len) {
            strcat(strcat(out, e->d_name), "/");
        }
    }
    if (d) {
        closedir(d);
    }
}

/* The names in `now` that are also in `later` but not in `before`. */
static int new_and_kept(const char *before, const char *now, const char *later)
{
    int found = 0;
    char name[512];

    for (const char *p = now; *p;) {
        const char *slash = strchr(p, '/');
        size_t n = (size_t) (slash - p);

        snprintf(name, sizeof(name), "%.*s/", (int) n, p);
        if (!strstr(before, name) && strstr(later, name)) {
            fprintf(stderr, "coll_churn: left in /dev/shm: %.*s\n", (int) n, p);
            found = 1;
        }
        p = slash + 1;
    }
    return found;
}

/* One collective of the given kind on comm, checked. */
static void one_collective(enum kind kind, MPI_Comm comm, long cycle)
{
    long mine = (world_rank + 1) * 1000 + cycle, sum = -1, want;
    long sum_of_ranks = (long) world_size * (world_size + 1) / 2;
    MPI_Request req;

    switch (kind) {
    case ALLREDUCE:
        MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, comm);
        want = sum_of_ranks * 1000 + world_size * cycle;
        if (sum != want) {
            FAIL("cycle %ld: allreduce gave %ld, expected %ld", cycle, sum, want);
        }
        break;
    case IBCAST: {
        int root = (int) (cycle % world_size);
        long value = world_rank == root ? cycle * 7 + root : -1;
        MPI_Ibcast(&value, 1, MPI_LONG, root, comm, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (value != cycle * 7 + root) {
            FAIL("cycle %ld: ibcast gave %ld, expected %ld", cycle, value, cycle * 7 + root);
        }
        break;
    }
    case ALLREDUCE_INIT:
        MPI_Allreduce_init(&mine, &sum, 1, MPI_LONG, MPI_MAX, comm, MPI_INFO_NULL, &req);
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Request_free(&req);
        want = world_size * 1000 + cycle;
        if (sum != want) {
            FAIL("cycle %ld: persistent allreduce gave %ld, expected %ld", cycle, sum, want);
        }
        break;
    default:
        MPI_Barrier(comm);
        break;
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: mpirun -np N coll_churn [-n CYCLES (10000)] [--rss-bound KIB "
            "(1024)] [--no-counters]\n");
}

int main(int argc, char **argv)
{
    long cycles = 10000, rss_bound = 1024, total;
    int counters = 1, bad_args = 0;
    struct usage half = {-1, -1, 0}, end;
    char shm_before[4096], shm_end[4096], shm_later[4096];
    MPI_T_pvar_session session;
    MPI_T_pvar_handle native[NUM_KINDS];
    unsigned long long uncounted = 0;
    int provided;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "-n") && i + 1 < argc) {
            cycles = atol(argv[++i]);
        } else if (0 == strcmp(argv[i], "--rss-bound") && i + 1 < argc) {
            rss_bound = atol(argv[++i]);
        } else if (0 == strcmp(argv[i], "--no-counters")) {
            counters = 0;
        } else {
            bad_args = 1;
        }
    }
    if (bad_args || cycles < 2 || rss_bound <= 0) {
        if (0 == world_rank) {
            usage();
        }
        MPI_Finalize();
        return 2;
    }

    if (0 == world_rank) {
        shm_files(shm_before, sizeof(shm_before));
    }
    if (counters) {
        MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
        MPI_T_pvar_session_create(&session);
        for (int k = 0; k < NUM_KINDS; ++k) {
            native[k] = pvar_counter(session, counter_names[k], "coll_churn");
        }
    }

    for (long cycle = 0; cycle < cycles; ++cycle) {
        enum kind kind = (enum kind) (cycle % NUM_KINDS);
        unsigned long long before = 0;
        MPI_Comm comm;

        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        if (counters) {
            before = pvar_counter_read(session, native[kind]);
        }
        one_collective(kind, comm, cycle);
        if (counters && pvar_counter_read(session, native[kind]) - before != 1) {
            if (0 == uncounted++) {
                FAIL("cycle %ld: %s did not move by 1 (first of such cycles)", cycle,
                     counter_names[kind]);
            }
        }
        MPI_Comm_free(&comm);
        if (cycle + 1 == cycles / 2) {
            half = measure();
        }
    }
    end = measure();

    if (uncounted) {
        FAIL("%llu of %ld collectives not counted native", uncounted, cycles);
    }
    if (counters) {
        for (int k = 0; k < NUM_KINDS; ++k) {
            MPI_T_pvar_handle_free(session, &native[k]);
        }
        MPI_T_pvar_session_free(&session);
        MPI_T_finalize();
    }

    printf("coll_churn: rank %d: after %ld cycles: resident %ld KiB, virtual %ld KiB, %ld fds; "
           "after %ld: resident %ld KiB (%+ld), virtual %ld KiB (%+ld), %ld fds\n",
           world_rank, cycles / 2, half.rss_kib, half.vsize_kib, half.fds, cycles, end.rss_kib,
           end.rss_kib - half.rss_kib, end.vsize_kib, end.vsize_kib - half.vsize_kib, end.fds);
    fflush(stdout);
    if (half.rss_kib < 0 || end.rss_kib < 0) {
        FAIL("cannot read /proc/self/statm");
    } else if (end.rss_kib - half.rss_kib >= rss_bound) {
        FAIL("resident set grew by %ld KiB over the second half (bound %ld KiB)",
             end.rss_kib - half.rss_kib, rss_bound);
    }
    if (end.vsize_kib - half.vsize_kib >= 128 * rss_bound) {
        FAIL("virtual size grew by %ld KiB over the second half (bound %ld KiB)",
             end.vsize_kib - half.vsize_kib, 128 * rss_bound);
    }
    if (end.fds > half.fds) {
        FAIL("%ld file descriptors open after the second half, %ld after the first",
             end.fds, half.fds);
    }

    /* Every rank has freed every communicator. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == world_rank) {
        shm_files(shm_end, sizeof(shm_end));
        if (shm_end[0]) {
            sleep(1);
        }
        shm_files(shm_later, sizeof(shm_later));
        if (new_and_kept(shm_before, shm_end, shm_later)) {
            FAIL("coll_async files left in /dev/shm");
        }
    }

    MPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (0 == world_rank) {
        printf("coll_churn: %d ranks, %ld cycles (dup, collective, free), %ld failures\n",
               world_size, cycles, total);
    }
    MPI_Finalize();
    return 0 == total ? 0 : 1;
}
