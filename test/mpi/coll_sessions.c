/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * A program of MPI-4 Sessions, which never calls MPI_Init and so has no
 * MPI_COMM_WORLD: two sessions at once, each a communicator from the group of
 * the pset mpi://WORLD (MPI_Comm_create_from_group), collectives on both checked
 * against references and against coll/async's MPI_T counter of the native
 * allreduce; then both sessions finalized and the whole done again, as a library
 * that opens and closes MPI would.
 *
 *   coll_sessions [ROUNDS]     (default 2)
 * Exit status 0 when every check passed; 77 where MPI has no sessions (Open MPI 4).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#if MPI_VERSION >= 4 || OMPI_MAJOR_VERSION >= 5

enum { COUNT = 3, MAX_RANKS = 64 };

static long checks, failures;

static void expect(int ok, int rank, const char *label, const char *what)
{
    checks++;
    if (!ok) {
        fprintf(stderr, "coll_sessions: rank %d: %s: %s\n", rank, label, what);
        failures++;
    }
}

/* The native allreduce counter, read through a pvar session of its own. */
struct counter {
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
};

static int counter_open(struct counter *c)
{
    int index, count;

    return MPI_SUCCESS == MPI_T_pvar_get_index("coll_async_allreduce_native",
                                               MPI_T_PVAR_CLASS_COUNTER, &index)
                   && MPI_SUCCESS == MPI_T_pvar_session_create(&c->session)
                   && MPI_SUCCESS
                          == MPI_T_pvar_handle_alloc(c->session, index, NULL, &c->handle, &count)
               ? 0
               : -1;
}

static unsigned long long counter_read(struct counter *c)
{
    unsigned long long value = 0;

    MPI_T_pvar_read(c->session, c->handle, &value);
    return value;
}

static void counter_close(struct counter *c)
{
    MPI_T_pvar_handle_free(c->session, &c->handle);
    MPI_T_pvar_session_free(&c->session);
}

/* Whether out is the sum over n ranks of each rank's input (10 * rank + i). */
static int is_sum(const int *out, int n)
{
    int ok = 1;

    for (int i = 0; i < COUNT; ++i) {
        ok &= out[i] == 10 * n * (n - 1) / 2 + n * i;
    }
    return ok;
}

static void exercise(MPI_Comm comm, const char *label, struct counter *counter)
{
    int n, me, in[COUNT], out[COUNT], all[COUNT * MAX_RANKS], table[COUNT * MAX_RANKS], ok;
    unsigned long long before = counter_read(counter);

    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    if (n > MAX_RANKS) {
        return;
    }
    for (int i = 0; i < COUNT; ++i) {
        in[i] = 10 * me + i;
    }
    MPI_Allreduce(in, out, COUNT, MPI_INT, MPI_SUM, comm);
    expect(is_sum(out, n), me, label, "allreduce");
    memcpy(out, in, sizeof(in));
    MPI_Allreduce(MPI_IN_PLACE, out, COUNT, MPI_INT, MPI_SUM, comm);
    expect(is_sum(out, n), me, label, "allreduce in place");
    memcpy(out, in, sizeof(in));
    MPI_Bcast(out, COUNT, MPI_INT, n - 1, comm);
    ok = 1;
    for (int i = 0; i < COUNT; ++i) {
        ok &= out[i] == 10 * (n - 1) + i;
    }
    expect(ok, me, label, "bcast");
    MPI_Allgather(in, COUNT, MPI_INT, all, COUNT, MPI_INT, comm);
    ok = 1;
    for (int j = 0; j < n * COUNT; ++j) {
        ok &= all[j] == 10 * (j / COUNT) + j % COUNT;
    }
    expect(ok, me, label, "allgather");
    for (int j = 0; j < n * COUNT; ++j) {
        table[j] = 100 * me + j;
    }
    MPI_Alltoall(table, COUNT, MPI_INT, all, COUNT, MPI_INT, comm);
    ok = 1;
    for (int j = 0; j < n * COUNT; ++j) {
        ok &= all[j] == 100 * (j / COUNT) + me * COUNT + j % COUNT;
    }
    expect(ok, me, label, "alltoall");
    MPI_Barrier(comm);
    expect(counter_read(counter) - before == 2, me, label,
           "coll_async_allreduce_native did not move by 2");
}

static MPI_Comm world_of(MPI_Session session, const char *tag)
{
    MPI_Group group;
    MPI_Comm comm = MPI_COMM_NULL;

    if (MPI_SUCCESS != MPI_Group_from_session_pset(session, "mpi://WORLD", &group)) {
        return MPI_COMM_NULL;
    }
    MPI_Comm_create_from_group(group, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
    MPI_Group_free(&group);
    return comm;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 2, provided, rank = 0, size = 0;
    long totals[2] = {0, 0};

    for (int round = 0; round < rounds; ++round) {
        MPI_Session first, second;
        MPI_Comm a, b;
        struct counter counter;
        char label[64];

        if (MPI_SUCCESS != MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &first)
            || MPI_SUCCESS != MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &second)) {
            fprintf(stderr, "coll_sessions: MPI_Session_init failed\n");
            return 1;
        }
        /* After the first session: Open MPI 5.0.7's MPI_T before any left the
         * session's transports unselected ("BTLs attempted: (null)"). */
        MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
        a = world_of(first, "coll_sessions.first");
        b = world_of(second, "coll_sessions.second");
        if (MPI_COMM_NULL == a || MPI_COMM_NULL == b || 0 != counter_open(&counter)) {
            fprintf(stderr, "coll_sessions: no communicator from mpi://WORLD, or no counter "
                            "coll_async_allreduce_native (is coll/async loaded?)\n");
            return 1;
        }
        MPI_Comm_rank(a, &rank);
        MPI_Comm_size(a, &size);
        snprintf(label, sizeof(label), "round %d, first session", round);
        exercise(a, label, &counter);
        snprintf(label, sizeof(label), "round %d, second session", round);
        exercise(b, label, &counter);
        counter_close(&counter);
        totals[0] = checks;
        totals[1] = failures;
        MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_LONG, MPI_SUM, a);
        MPI_Comm_free(&a);
        MPI_Comm_free(&b);
        MPI_T_finalize();
        MPI_Session_finalize(&second);
        MPI_Session_finalize(&first);
    }
    if (0 == rank) {
        printf("coll_sessions: %d ranks, %d rounds of 2 sessions: %ld checks, %ld failures\n",
               size, rounds, totals[0], totals[1]);
    }
    return 0 == failures && 0 == totals[1] ? 0 : 1;
}

#else

int main(void)
{
    printf("coll_sessions: MPI %d.%d has no sessions\n", MPI_VERSION, MPI_SUBVERSION);
    return 77;
}

#endif
