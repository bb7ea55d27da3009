/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * A rank killed (SIGKILL) in a loop of blocking and nonblocking collectives, under
 * ULFM (Open MPI 5, mpirun --with-ft ulfm). Every survivor's call that was pending
 * or comes next must return MPIX_ERR_PROC_FAILED or MPIX_ERR_REVOKED within
 * --bound seconds of the kill (measured from the end of the survivor's last
 * round that succeeded: the victim dies as it starts the next); after
 * MPIX_Comm_revoke and MPIX_Comm_shrink the survivors' collectives must be exact
 * and, with --expect-component=yes, run by coll/async (the shrink needs a
 * fault-tolerant agreement: run with coll/ftagree).
 * Each survivor prints how long after the kill its error came.
 *
 *   coll_ulfm [--victim R] [--after N] [--bound S] [--expect-component=yes|no]
 * Exit status 0 on every survivor when every check passed; 77 without ULFM.
 */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>
#if OMPI_MAJOR_VERSION >= 5
#    include <mpi-ext.h>
#endif

#if defined(OMPI_HAVE_MPI_EXT_FTMPI) && OMPI_HAVE_MPI_EXT_FTMPI

#    include "pvar_counter.h"

enum { COUNT = 1024 };

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_REALTIME, &t);
    return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

static int failed_class(int rc)
{
    int class = MPI_SUCCESS;

    MPI_Error_class(rc, &class);
    return MPIX_ERR_PROC_FAILED == class || MPIX_ERR_PROC_FAILED_PENDING == class
           || MPIX_ERR_REVOKED == class;
}

static const char *class_name(int rc)
{
    int class = MPI_SUCCESS;

    MPI_Error_class(rc, &class);
    return MPIX_ERR_PROC_FAILED == class           ? "MPIX_ERR_PROC_FAILED"
           : MPIX_ERR_PROC_FAILED_PENDING == class ? "MPIX_ERR_PROC_FAILED_PENDING"
           : MPIX_ERR_REVOKED == class             ? "MPIX_ERR_REVOKED"
           : MPI_SUCCESS == class                  ? "MPI_SUCCESS"
                                                   : "another error";
}

/* One round: a blocking allreduce, then an iallreduce and an ibcast completed
 * together. The first error's code, or MPI_SUCCESS. */
static int round_of(MPI_Comm comm, int *in, int *out, int *bcast)
{
    MPI_Request requests[2];
    int rc = MPI_Allreduce(in, out, COUNT, MPI_INT, MPI_SUM, comm);

    if (MPI_SUCCESS != rc) {
        return rc;
    }
    rc = MPI_Iallreduce(in, out, COUNT, MPI_INT, MPI_SUM, comm, &requests[0]);
    if (MPI_SUCCESS != rc) {
        return rc;
    }
    rc = MPI_Ibcast(bcast, COUNT, MPI_INT, 0, comm, &requests[1]);
    if (MPI_SUCCESS != rc) {
        MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
        return rc;
    }
    return MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv)
{
    int victim = 1, after = 20, use_counters = 1, rank, size, rc = MPI_SUCCESS, next, ok = 1;
    double bound = 30.0, started, erred, killed = 0.0; /* killed: the last good round's end */
    int in[COUNT], out[COUNT], bcast[COUNT];
    MPI_Comm comm, shrunk;
    MPI_T_pvar_session session;
    MPI_T_pvar_handle native;
    unsigned long long before;

    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "--victim") && i + 1 < argc) {
            victim = atoi(argv[++i]);
        } else if (0 == strcmp(argv[i], "--after") && i + 1 < argc) {
            after = atoi(argv[++i]);
        } else if (0 == strcmp(argv[i], "--bound") && i + 1 < argc) {
            bound = atof(argv[++i]);
        } else if (0 == strcmp(argv[i], "--expect-component=no")) {
            use_counters = 0;
        } else if (0 != strcmp(argv[i], "--expect-component=yes")) {
            fprintf(stderr, "usage: coll_ulfm [--victim R] [--after N] [--bound S] "
                            "[--expect-component=yes|no]\n");
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int i = 0; i < COUNT; ++i) {
        in[i] = rank + i;
        bcast[i] = 0 == rank ? i : -1;
    }
    started = now();
    for (int round = 0; MPI_SUCCESS == rc; ++round) {
        if (rank == victim && round == after) {
            raise(SIGKILL);
        }
        rc = round_of(comm, in, out, bcast);
        if (MPI_SUCCESS == rc) {
            killed = now();
        }
        if (MPI_SUCCESS == rc && round < after && out[7] != size * (size - 1) / 2 + 7 * size) {
            fprintf(stderr, "coll_ulfm: rank %d: round %d: wrong sum %d\n", rank, round, out[7]);
            ok = 0;
        }
        if (now() - started > bound + 60.0) {
            fprintf(stderr, "coll_ulfm: rank %d: no error in %.0f s\n", rank, now() - started);
            return 1;
        }
    }
    erred = now();
    ok &= failed_class(rc);
    next = MPI_Barrier(comm);
    ok &= failed_class(next);
    ok &= killed > 0.0 && erred - killed < bound;
    printf("coll_ulfm: rank %d: pending call %s %.3f s after the kill; next call %s\n", rank,
           class_name(rc), erred - killed, class_name(next));
    MPIX_Comm_revoke(comm);
    rc = MPIX_Comm_shrink(comm, &shrunk);
    if (MPI_SUCCESS != rc) {
        fprintf(stderr, "coll_ulfm: rank %d: MPIX_Comm_shrink: %s\n", rank, class_name(rc));
        return 1;
    }
    if (use_counters) {
        int ignored;

        MPI_T_init_thread(MPI_THREAD_SINGLE, &ignored);
        MPI_T_pvar_session_create(&session);
        native = pvar_counter(session, "coll_async_allreduce_native", "coll_ulfm");
        before = pvar_counter_read(session, native);
    }
    {
        int n, me;

        MPI_Comm_size(shrunk, &n);
        MPI_Comm_rank(shrunk, &me);
        for (int i = 0; i < COUNT; ++i) {
            in[i] = me + i;
        }
        rc = MPI_Allreduce(in, out, COUNT, MPI_INT, MPI_SUM, shrunk);
        if (MPI_SUCCESS != rc || n != size - 1 || out[7] != n * (n - 1) / 2 + 7 * n) {
            fprintf(stderr, "coll_ulfm: rank %d: shrunk to %d ranks: allreduce %s, [7] = %d\n",
                    rank, n, class_name(rc), out[7]);
            ok = 0;
        }
        if (use_counters && 1 != pvar_counter_read(session, native) - before) {
            fprintf(stderr, "coll_ulfm: rank %d: coll_async_allreduce_native moved by %llu\n",
                    rank, pvar_counter_read(session, native) - before);
            ok = 0;
        }
        printf("coll_ulfm: rank %d: shrunk to %d ranks, allreduce %s\n", rank, n,
               ok ? "exact and native" : "FAILED");
        fflush(stdout); /* said before MPI_Finalize, which may hang (test/run) */
    }
    MPI_Comm_free(&shrunk);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return ok ? 0 : 1;
}

#else

int main(void)
{
    printf("coll_ulfm: this MPI has no ULFM (MPIX_Comm_agree and friends)\n");
    return 77;
}

#endif
