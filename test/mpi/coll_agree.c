/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_agree: MPIX_Comm_agree and MPIX_Comm_iagree (ULFM, Open MPI 5 and later)
 * in the interleavings Open MPI's own components accept, where an agreement is
 * not one of the communicator's collectives:
 *   - "before": even ranks start an iagree before a barrier (and an allreduce)
 *     that odd ranks call before their own iagree; a rank's MPI_Test must not
 *     complete the agreement while another rank has not joined it;
 *   - "several": three iagrees outstanding at once, between collectives that
 *     the ranks call in different places relative to them;
 *   - "blocking": MPIX_Comm_agree back to back with collectives.
 * Each result is checked against the AND of every rank's flag; on Open MPI 5
 * with coll/async the counter coll_async_agree_native must have moved by the
 * agreements made (-n: it need not, for Open MPI's own components or coll/ftagree).
 * On an Open MPI without ULFM's extension it says so and passes.
 *
 *   coll_agree [-r rounds] [-n]
 */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(OPEN_MPI) && OPEN_MPI
#    include <mpi-ext.h>
#endif

#include "pvar_counter.h"

static int me, size, failures;

#if defined(OMPI_HAVE_MPI_EXT_FTMPI) && OMPI_HAVE_MPI_EXT_FTMPI
static void expect(int ok, const char *what, int round, int got, int want)
{
    if (!ok && failures++ < 10) {
        fprintf(stderr, "coll_agree: rank %d round %d: %s: %#x, expected %#x\n", me, round, what,
                got, want);
    }
}

/* Rank r's flag in agreement k: every bit set but one of its own, so the AND of
 * all is exact only when every rank's flag was folded in. */
static int flag_of(int r, int k)
{
    return ~(1 << ((r + 3 * k) % 31));
}

static int want_of(int k)
{
    int want = ~0;

    for (int r = 0; r < size; ++r) {
        want &= flag_of(r, k);
    }
    return want;
}

/* Even ranks start it before a barrier and an allreduce, odd ranks after. */
static int before(int round)
{
    int flag = flag_of(me, round), done = 0, sum = 0, one = 1;
    MPI_Request request;

    if (0 == me % 2) {
        MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &request);
        /* The odd ranks have not joined: they are in the barrier below. */
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        expect(!done || 1 == size, "iagree complete before the others joined", round, done, 0);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (!done) {
            MPI_Wait(&request, MPI_STATUS_IGNORE);
        }
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    expect(flag == want_of(round), "iagree started before a barrier", round, flag,
           want_of(round));
    expect(sum == size, "allreduce between", round, sum, size);
    return 1;
}

/* Three outstanding at once; collectives of the communicator among them, at
 * different places on even and odd ranks. */
static int several(int round)
{
    int flags[3], bcast = 0 == me ? round : -1;
    MPI_Request requests[3];

    for (int k = 0; k < 3; ++k) {
        flags[k] = flag_of(me, round + k);
        if (0 == me % 2 && 1 == k) {
            MPI_Bcast(&bcast, 1, MPI_INT, 0, MPI_COMM_WORLD);
        }
        MPIX_Comm_iagree(MPI_COMM_WORLD, &flags[k], &requests[k]);
    }
    if (1 == me % 2) {
        MPI_Bcast(&bcast, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    MPI_Waitall(3, requests, MPI_STATUSES_IGNORE);
    for (int k = 0; k < 3; ++k) {
        expect(flags[k] == want_of(round + k), "one of three outstanding iagrees", round,
               flags[k], want_of(round + k));
    }
    expect(bcast == round, "bcast among them", round, bcast, round);
    return 3;
}

static int blocking(int round)
{
    int flag = flag_of(me, round), sum = 0;

    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
    expect(flag == want_of(round), "MPIX_Comm_agree", round, flag, want_of(round));
    expect(sum == size * (size - 1) / 2, "allreduce before it", round, sum, size * (size - 1) / 2);
    return 1;
}
#endif

int main(int argc, char **argv)
{
    int rounds = 50, counted = 1, opt, all;

    while (-1 != (opt = getopt(argc, argv, "r:n"))) {
        if ('r' == opt) {
            rounds = atoi(optarg);
        } else if ('n' == opt) {
            counted = 0;
        } else {
            fprintf(stderr, "usage: coll_agree [-r rounds] [-n]\n");
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#if defined(OMPI_HAVE_MPI_EXT_FTMPI) && OMPI_HAVE_MPI_EXT_FTMPI
    {
        MPI_T_pvar_session session;
        MPI_T_pvar_handle handle;
        unsigned long long agreements = 0, counter;

        if (counted) {
            MPI_T_init_thread(MPI_THREAD_SINGLE, &opt);
            MPI_T_pvar_session_create(&session);
            handle = pvar_counter(session, "coll_async_agree_native", "coll_agree");
        }
        for (int round = 0; round < rounds; ++round) {
            agreements += before(round);
            agreements += several(round);
            agreements += blocking(round);
        }
        if (counted) {
            counter = pvar_counter_read(session, handle);
            expect(counter == agreements, "coll_async_agree_native", -1, (int) counter,
                   (int) agreements);
            MPI_T_pvar_handle_free(session, &handle);
            MPI_T_pvar_session_free(&session);
            MPI_T_finalize();
        }
    }
#else
    if (0 == me) {
        printf("coll_agree: this MPI has no MPIX_Comm_agree (ULFM's extension): nothing to "
               "check\n");
    }
    (void) rounds;
    (void) counted;
#endif
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == me) {
        printf("%s\n", 0 == all ? "No Errors" : "FAILED");
    }
    MPI_Finalize();
    return 0 == all ? 0 : 1;
}
