/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * MPI_Allreduce in a loop, for a while, with every result checked: the job the
 * attack check (test/tcp_attack.c) attacks. Between virtual nodes the vectors
 * cross coll/async's TCP transport. Rank 0 says how many calls were right and
 * the most open files and memory any rank had; any wrong value aborts.
 *
 *   net_loop SECONDS [COUNT]   (COUNT doubles per call, default 65536)
 */

#include <mpi.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long open_files(void)
{
    DIR *dir = opendir("/proc/self/fd");
    long count = -1; /* the DIR's own */

    if (NULL == dir) {
        return 0;
    }
    while (NULL != readdir(dir)) {
        ++count;
    }
    closedir(dir);
    return count - 2; /* . and .. */
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[128];
    long kib = 0;

    while (NULL != f && NULL != fgets(line, sizeof(line), f)) {
        if (0 == strncmp(line, "VmRSS:", 6)) {
            kib = atol(line + 6);
        }
    }
    if (NULL != f) {
        fclose(f);
    }
    return kib;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 5, start;
    int count = argc > 2 ? atoi(argv[2]) : 65536, rank, size, stop = 0;
    long calls = 0, files[2], rss[2], first[2] = {-1, 0}, most[2] = {0, 0};
    double *in, *out;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    in = malloc(sizeof(double) * (size_t) count);
    out = malloc(sizeof(double) * (size_t) count);
    start = MPI_Wtime();
    while (!stop) {
        for (int i = 0; i < count; ++i) {
            in[i] = rank + 1 + (double) ((i + calls) % 1000);
        }
        MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < count; ++i) {
            double expected = size * (size + 1) / 2.0 + (double) size * (double) ((i + calls) % 1000);

            if (out[i] != expected) {
                fprintf(stderr, "net_loop: rank %d, call %ld: element %d is %g, not %g\n", rank,
                        calls, i, out[i], expected);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        ++calls;
        files[0] = open_files();
        files[1] = rss_kib();
        if (first[0] < 0) {
            first[0] = files[0];
            first[1] = files[1];
        }
        most[0] = files[0] > most[0] ? files[0] : most[0];
        most[1] = files[1] > most[1] ? files[1] : most[1];
        stop = MPI_Wtime() - start >= seconds;
        MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    /* The largest growth of any rank. */
    files[0] = most[0] - first[0];
    rss[0] = most[1] - first[1];
    MPI_Reduce(files, files + 1, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(rss, rss + 1, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("net_loop: %ld allreduces of %d doubles right on %d ranks; open files grew by at "
               "most %ld, resident memory by at most %ld KiB\n",
               calls, count, size, files[1], rss[1]);
    }
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
