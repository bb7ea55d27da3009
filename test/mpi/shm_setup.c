/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * shm_setup: collectives on the communicators whose shared memory test/run's
 * set-up checks attack or exercise, checked against references, with the path
 * coll/async took checked through its MPI_T counters.
 *
 *   mpirun -np N shm_setup [--expect native|delegated] [--spawn M] [--dups K]
 *
 * On MPI_COMM_WORLD and K dups of it (default 3): allreduce, a bcast from every
 * root, allgather, alltoall and barrier, each result compared with what it must
 * be, and around the allreduce coll_async_allreduce_native (or _delegated) must
 * move by one (--expect: native, the default, or delegated: a segment refused,
 * unallocatable). With --spawn M, the job then spawns M more processes of this
 * program, parents and children merge the intercommunicator (MPI_Intercomm_merge,
 * the children high), and run the same on the merged communicator and a dup of
 * it, natively: every rank of the merged communicator must name its segment
 * alike (issue 15: parents and children named it from their own jobs and hung).
 * Rank 0 prints "shm_setup: N checks, F failures"; the exit status is non-zero
 * on any failure.
 */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pvar_counter.h"

#define MAX_SIZE 64

static MPI_T_pvar_session session;
static MPI_T_pvar_handle counter[2]; /* allreduce native, delegated */
static const char *expect = "native";
static long checks, failures;
static const char *role = "parent";

#define FAIL(...)                                                                  \
    do {                                                                           \
        char line_[256];                                                           \
        snprintf(line_, sizeof(line_), __VA_ARGS__);                               \
        fprintf(stderr, "shm_setup: %s rank %d: FAIL %s\n", role, world_rank(), line_); \
        ++failures;                                                                \
    } while (0)

static int world_rank(void)
{
    int rank;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

static void check(int ok, const char *what, const char *comm_name)
{
    ++checks;
    if (!ok) {
        FAIL("%s on %s", what, comm_name);
    }
}

/* One round of collectives on comm, each checked. */
static void round_on(MPI_Comm comm, const char *name)
{
    int rank, size, all[MAX_SIZE], out[MAX_SIZE], in[MAX_SIZE], ok;
    long mine, sum, before[2], after[2];
    unsigned long long value;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (size > MAX_SIZE) {
        FAIL("%s has %d ranks, more than %d", name, size, MAX_SIZE);
        return;
    }
    for (int p = 0; p < 2; ++p) {
        value = pvar_counter_read(session, counter[p]);
        before[p] = (long) value;
    }
    mine = (rank + 1) * 1000L + 7;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, comm);
    for (int p = 0; p < 2; ++p) {
        after[p] = (long) pvar_counter_read(session, counter[p]);
    }
    check(sum == (long) size * (size + 1) / 2 * 1000 + 7L * size, "allreduce's sum", name);
    ok = 0 == strcmp(expect, "native") ? after[0] - before[0] == 1 && after[1] == before[1]
                                       : after[1] - before[1] == 1 && after[0] == before[0];
    ++checks;
    if (!ok) {
        FAIL("allreduce on %s: counters native +%ld delegated +%ld (expected %s)", name,
             after[0] - before[0], after[1] - before[1], expect);
    }
    for (int root = 0; root < size; ++root) {
        long value_at_root = rank == root ? 31L * root + 5 : -1;

        MPI_Bcast(&value_at_root, 1, MPI_LONG, root, comm);
        check(value_at_root == 31L * root + 5, "bcast's value", name);
    }
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, comm);
    for (int r = 0; r < size; ++r) {
        check(all[r] == r, "allgather's block", name);
        out[r] = rank * 100 + r;
    }
    MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, comm);
    for (int r = 0; r < size; ++r) {
        check(in[r] == r * 100 + rank, "alltoall's block", name);
    }
    MPI_Barrier(comm);
}

static void rounds_on(MPI_Comm comm, const char *name, int dups)
{
    round_on(comm, name);
    for (int i = 0; i < dups; ++i) {
        MPI_Comm dup;
        char dup_name[64];

        MPI_Comm_dup(comm, &dup);
        snprintf(dup_name, sizeof(dup_name), "dup %d of %s", i + 1, name);
        round_on(dup, dup_name);
        MPI_Comm_free(&dup);
    }
}

/* Parents and children: the merged communicator, natively. */
static void merged(MPI_Comm inter, int child, int dups)
{
    const char *saved = expect;
    MPI_Comm comm;

    MPI_Intercomm_merge(inter, child, &comm);
    expect = "native";
    rounds_on(comm, "the merged communicator", dups);
    expect = saved;
    MPI_Comm_free(&comm);
    MPI_Comm_disconnect(&inter);
}

int main(int argc, char **argv)
{
    int spawn = 0, dups = 3, child = 0, ignored;
    long totals[2], mine[2];
    MPI_Comm parent, inter;

    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "--expect") && i + 1 < argc) {
            expect = argv[++i];
        } else if (0 == strcmp(argv[i], "--spawn") && i + 1 < argc) {
            spawn = atoi(argv[++i]);
        } else if (0 == strcmp(argv[i], "--dups") && i + 1 < argc) {
            dups = atoi(argv[++i]);
        } else if (0 == strcmp(argv[i], "--child")) {
            child = 1;
            role = "child";
        }
    }
    MPI_T_init_thread(MPI_THREAD_SINGLE, &ignored);
    MPI_T_pvar_session_create(&session);
    counter[0] = pvar_counter(session, "coll_async_allreduce_native", "shm_setup");
    counter[1] = pvar_counter(session, "coll_async_allreduce_delegated", "shm_setup");

    rounds_on(MPI_COMM_WORLD, child ? "the children's MPI_COMM_WORLD" : "MPI_COMM_WORLD", dups);
    MPI_Comm_get_parent(&parent);
    if (MPI_COMM_NULL != parent) {
        merged(parent, 1, dups);
    } else if (spawn > 0) {
        char *child_argv[] = {"--child", "--expect", (char *) expect, NULL};

        MPI_Comm_spawn(argv[0], child_argv, spawn, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       MPI_ERRCODES_IGNORE);
        merged(inter, 0, dups);
    }

    mine[0] = checks;
    mine[1] = failures;
    MPI_Reduce(mine, totals, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 == world_rank()) {
        printf("shm_setup: %s%s: %ld checks, %ld failures\n", role,
               child ? "ren" : "s", totals[0], totals[1]);
    }
    MPI_T_pvar_handle_free(session, &counter[0]);
    MPI_T_pvar_handle_free(session, &counter[1]);
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
    MPI_Finalize();
    return 0 == failures ? 0 : 1;
}
