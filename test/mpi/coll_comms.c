/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Every communicator constructor Open MPI has, each new communicator's
 * collectives run and checked: MPI_Comm_dup, _idup, _dup_with_info,
 * _create, _create_group, _split, every MPI_Comm_split_type type (on the world
 * and on an intercommunicator, where Open MPI 5 runs an allreduce in place
 * itself), MPI_Intercomm_create, _merge, MPI_Cart_create, MPI_Graph_create and,
 * on MPI 4, MPI_Intercomm_create_from_groups and the hardware-guided split types.
 * On each: allreduce (also in place), bcast, allgather, alltoall and barrier,
 * checked against references and against coll/async's MPI_T counters; where
 * Open MPI has ULFM (5.0), MPIX_Comm_agree and MPIX_Comm_iagree, which nothing
 * but coll/async provides when it is the only coll component.
 *
 *   coll_comms [common options] [--inter-in-place]
 * --inter-in-place: also MPI_IN_PLACE on the intercommunicators, which Open MPI's
 * argument checks refuse before the component sees it, so run with
 * --mca mpi_param_check 0: allreduce takes the input from the receive buffer (as
 * Open MPI itself passes it, coll_async_intercomm.c), alltoall is MPI_ERR_ARG.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#if OMPI_MAJOR_VERSION >= 5
#    include <mpi-ext.h>
#endif

#include "coll_program.h"
#include "pvar_counter.h"

enum { COUNT = 4 };

static long checks, failures;
static int use_counters = 1;
static int inter_in_place = 0;
static MPI_T_pvar_session session;
static MPI_T_pvar_handle allreduce_native, bcast_native, allgather_native, alltoall_native;
static MPI_T_pvar_handle agree_native;

static void expect(int ok, const char *label, const char *what)
{
    int rank;

    checks++;
    if (!ok) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        fprintf(stderr, "coll_comms: rank %d: %s: %s\n", rank, label, what);
        failures++;
    }
}

struct counts {
    unsigned long long allreduce, bcast, allgather, alltoall;
};

static void read_counts(struct counts *c)
{
    if (!use_counters) {
        return;
    }
    c->allreduce = pvar_counter_read(session, allreduce_native);
    c->bcast = pvar_counter_read(session, bcast_native);
    c->allgather = pvar_counter_read(session, allgather_native);
    c->alltoall = pvar_counter_read(session, alltoall_native);
}

/* That coll/async ran the calls natively: allreduces, bcasts, ... since before
 * (bcasts -1: not checked). */
static void expect_native(const struct counts *before, const char *label, int allreduces,
                          int bcasts, int allgathers, int alltoalls)
{
    struct counts after;

    if (!use_counters) {
        return;
    }
    read_counts(&after);
    expect(after.allreduce - before->allreduce == (unsigned long long) allreduces, label,
           "coll_async_allreduce_native did not move by the allreduces made");
    expect(bcasts < 0 || after.bcast - before->bcast == (unsigned long long) bcasts, label,
           "coll_async_bcast_native did not move by the bcasts made");
    expect(after.allgather - before->allgather == (unsigned long long) allgathers, label,
           "coll_async_allgather_native did not move by the allgathers made");
    expect(after.alltoall - before->alltoall == (unsigned long long) alltoalls, label,
           "coll_async_alltoall_native did not move by the alltoalls made");
}

static int value(int side, int rank, int i)
{
    return 1000 * side + 10 * rank + i;
}

/* MPIX_Comm_agree and _iagree: the AND of every rank's flag, each rank's with
 * its own bit clear. */
static void agree(MPI_Comm comm, const char *label)
{
#if defined(OMPI_HAVE_MPI_EXT_FTMPI) && OMPI_HAVE_MPI_EXT_FTMPI
    int n, me, flag, want;
    MPI_Request request;

    unsigned long long before = use_counters ? pvar_counter_read(session, agree_native) : 0;

    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    want = n < 31 ? ~((1 << n) - 1) : 0;
    flag = ~(1 << (me % 31));
    expect(MPI_SUCCESS == MPIX_Comm_agree(comm, &flag) && flag == want, label,
           "MPIX_Comm_agree");
    flag = ~(1 << (me % 31));
    expect(MPI_SUCCESS == MPIX_Comm_iagree(comm, &flag, &request)
               && MPI_SUCCESS == MPI_Wait(&request, MPI_STATUS_IGNORE) && flag == want,
           label, "MPIX_Comm_iagree");
    /* coll/async's own agreements, apart from its allreduces. */
    expect(!use_counters || pvar_counter_read(session, agree_native) - before == 2, label,
           "coll_async_agree_native did not move by the agreements made");
#else
    (void) comm;
    (void) label;
#endif
}

/* Whether out is the sum of value(side, r, i) over ranks r < n of side. */
static int is_sum(const int *out, int side, int n)
{
    int ok = 1;

    for (int i = 0; i < COUNT; ++i) {
        ok &= out[i] == 1000 * side * n + 10 * n * (n - 1) / 2 + n * i;
    }
    return ok;
}

/* The collectives on an intracommunicator. */
static void exercise_intra(MPI_Comm comm, const char *label)
{
    int n, me, in[COUNT], out[COUNT], all[COUNT * 64], table[COUNT * 64], ok;
    struct counts before;

    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    if (n > 64) {
        return;
    }
    read_counts(&before);
    for (int i = 0; i < COUNT; ++i) {
        in[i] = value(0, me, i);
    }
    MPI_Allreduce(in, out, COUNT, MPI_INT, MPI_SUM, comm);
    expect(is_sum(out, 0, n), label, "allreduce");
    memcpy(out, in, sizeof(in));
    MPI_Allreduce(MPI_IN_PLACE, out, COUNT, MPI_INT, MPI_SUM, comm);
    expect(is_sum(out, 0, n), label, "allreduce in place");
    memcpy(out, me == n - 1 ? in : (int[COUNT]){0}, sizeof(in));
    MPI_Bcast(out, COUNT, MPI_INT, n - 1, comm);
    ok = 1;
    for (int i = 0; i < COUNT; ++i) {
        ok &= out[i] == value(0, n - 1, i);
    }
    expect(ok, label, "bcast");
    MPI_Allgather(in, COUNT, MPI_INT, all, COUNT, MPI_INT, comm);
    ok = 1;
    for (int r = 0; r < n; ++r) {
        for (int i = 0; i < COUNT; ++i) {
            ok &= all[r * COUNT + i] == value(0, r, i);
        }
    }
    expect(ok, label, "allgather");
    for (int r = 0; r < n; ++r) {
        for (int i = 0; i < COUNT; ++i) {
            table[r * COUNT + i] = 100 * me + 10 * r + i;
        }
    }
    MPI_Alltoall(table, COUNT, MPI_INT, all, COUNT, MPI_INT, comm);
    ok = 1;
    for (int r = 0; r < n; ++r) {
        for (int i = 0; i < COUNT; ++i) {
            ok &= all[r * COUNT + i] == 100 * r + 10 * me + i;
        }
    }
    expect(ok, label, "alltoall");
    MPI_Barrier(comm);
    agree(comm, label);
    /* Open MPI's MPI layer answers a bcast on one rank itself. */
    expect_native(&before, label, 2, n > 1, 1, 1);
}

/* The collectives on an intercommunicator; side: 0 or 1, which group this is. */
static void exercise_inter(MPI_Comm comm, int side, const char *label)
{
    int n, m, me, in[COUNT], out[COUNT], all[COUNT * 64], table[COUNT * 64], ok, rc;
    struct counts before;

    MPI_Comm_size(comm, &n);
    MPI_Comm_remote_size(comm, &m);
    MPI_Comm_rank(comm, &me);
    if (n > 64 || m > 64) {
        return;
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    read_counts(&before);
    for (int i = 0; i < COUNT; ++i) {
        in[i] = value(side, me, i);
    }
    /* Each group gets the other's sum. */
    MPI_Allreduce(in, out, COUNT, MPI_INT, MPI_SUM, comm);
    expect(is_sum(out, 1 - side, m), label, "allreduce");
    if (inter_in_place) {
        int class = MPI_SUCCESS;

        memcpy(out, in, sizeof(in));
        rc = MPI_Allreduce(MPI_IN_PLACE, out, COUNT, MPI_INT, MPI_SUM, comm);
        ok = MPI_SUCCESS == rc && is_sum(out, 1 - side, m);
        expect(ok, label, "allreduce in place (the input in the receive buffer)");
        rc = MPI_Alltoall(MPI_IN_PLACE, COUNT, MPI_INT, all, COUNT, MPI_INT, comm);
        MPI_Error_class(rc, &class);
        expect(MPI_ERR_ARG == class, label, "alltoall in place: not MPI_ERR_ARG");
    }
    /* Side 0's rank 0 broadcasts to side 1. */
    memcpy(out, in, sizeof(in));
    MPI_Bcast(out, COUNT, MPI_INT, 0 == side ? (0 == me ? MPI_ROOT : MPI_PROC_NULL) : 0, comm);
    ok = 1;
    for (int i = 0; i < COUNT && 1 == side; ++i) {
        ok &= out[i] == value(0, 0, i);
    }
    expect(ok, label, "bcast");
    MPI_Allgather(in, COUNT, MPI_INT, all, COUNT, MPI_INT, comm);
    ok = 1;
    for (int r = 0; r < m; ++r) {
        for (int i = 0; i < COUNT; ++i) {
            ok &= all[r * COUNT + i] == value(1 - side, r, i);
        }
    }
    expect(ok, label, "allgather");
    for (int r = 0; r < m; ++r) {
        for (int i = 0; i < COUNT; ++i) {
            table[r * COUNT + i] = value(side, me, 0) * 100 + 10 * r + i;
        }
    }
    MPI_Alltoall(table, COUNT, MPI_INT, all, COUNT, MPI_INT, comm);
    ok = 1;
    for (int r = 0; r < m; ++r) {
        for (int i = 0; i < COUNT; ++i) {
            ok &= all[r * COUNT + i] == value(1 - side, r, 0) * 100 + 10 * me + i;
        }
    }
    expect(ok, label, "alltoall");
    MPI_Barrier(comm);
    /* A bcast's MPI_PROC_NULL ranks are answered by Open MPI 4.1's MPI layer, by
     * the component on 5.0; the refused alltoall counts too. */
    expect_native(&before, label, 1 + inter_in_place, 0 == side && 0 != me ? -1 : 1, 1,
                  1 + inter_in_place);
}

static void free_comm(MPI_Comm *comm)
{
    if (MPI_COMM_NULL != *comm) {
        MPI_Comm_free(comm);
    }
}

struct split_type {
    int type;
    const char *name;
};

static const struct split_type split_types[] = {
    {MPI_COMM_TYPE_SHARED, "MPI_COMM_TYPE_SHARED"},
    {OMPI_COMM_TYPE_HWTHREAD, "OMPI_COMM_TYPE_HWTHREAD"},
    {OMPI_COMM_TYPE_CORE, "OMPI_COMM_TYPE_CORE"},
    {OMPI_COMM_TYPE_L1CACHE, "OMPI_COMM_TYPE_L1CACHE"},
    {OMPI_COMM_TYPE_L2CACHE, "OMPI_COMM_TYPE_L2CACHE"},
    {OMPI_COMM_TYPE_L3CACHE, "OMPI_COMM_TYPE_L3CACHE"},
    {OMPI_COMM_TYPE_SOCKET, "OMPI_COMM_TYPE_SOCKET"},
    {OMPI_COMM_TYPE_NUMA, "OMPI_COMM_TYPE_NUMA"},
    {OMPI_COMM_TYPE_BOARD, "OMPI_COMM_TYPE_BOARD"},
    {OMPI_COMM_TYPE_HOST, "OMPI_COMM_TYPE_HOST"},
    {OMPI_COMM_TYPE_CU, "OMPI_COMM_TYPE_CU"},
    {OMPI_COMM_TYPE_CLUSTER, "OMPI_COMM_TYPE_CLUSTER"},
#if MPI_VERSION >= 4 || OMPI_MAJOR_VERSION >= 5
    {MPI_COMM_TYPE_HW_UNGUIDED, "MPI_COMM_TYPE_HW_UNGUIDED"},
    {MPI_COMM_TYPE_HW_GUIDED, "MPI_COMM_TYPE_HW_GUIDED"},
#endif
};

/* Every split type on comm (an intra- or intercommunicator of side side). */
static void split_every_type(MPI_Comm comm, int side, const char *of)
{
    int me, inter;
    MPI_Info info;

    MPI_Comm_rank(comm, &me);
    MPI_Comm_test_inter(comm, &inter);
    MPI_Info_create(&info);
#if MPI_VERSION >= 4 || OMPI_MAJOR_VERSION >= 5
    MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
#endif
    for (size_t t = 0; t < sizeof(split_types) / sizeof(split_types[0]); ++t) {
        MPI_Comm part = MPI_COMM_NULL;
        char label[160];

#if MPI_VERSION >= 4 || OMPI_MAJOR_VERSION >= 5
        if (inter && MPI_COMM_TYPE_HW_UNGUIDED == split_types[t].type) {
            continue; /* hangs in Open MPI 5.0.7 with its own components alone */
        }
#endif

        snprintf(label, sizeof(label), "MPI_Comm_split_type(%s, %s)", of, split_types[t].name);
        expect(MPI_SUCCESS == MPI_Comm_split_type(comm, split_types[t].type, me, info, &part),
               label, "failed");
        if (MPI_COMM_NULL == part) {
            continue; /* HW_UNGUIDED on the smallest resource, for one */
        }
        MPI_Comm_test_inter(part, &inter);
        if (inter) {
            exercise_inter(part, side, label);
        } else {
            exercise_intra(part, label);
        }
        free_comm(&part);
    }
    MPI_Info_free(&info);
}

static void intracommunicators(void)
{
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Group world_group, evens, odds;
    MPI_Request request;
    MPI_Info info;
    int n, me, ranks[128], half = 0;

    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    exercise_intra(comm, "MPI_Comm_dup");
    free_comm(&comm);
    MPI_Comm_idup(MPI_COMM_WORLD, &comm, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    exercise_intra(comm, "MPI_Comm_idup");
    free_comm(&comm);
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm);
    MPI_Info_free(&info);
    exercise_intra(comm, "MPI_Comm_dup_with_info");
    free_comm(&comm);
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, n - me, &comm);
    exercise_intra(comm, "MPI_Comm_split (parity, reversed keys)");
    free_comm(&comm);

    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    for (int r = 0; r < n && r < 256; r += 2) {
        ranks[half++] = r;
    }
    MPI_Group_incl(world_group, half, ranks, &evens);
    MPI_Group_excl(world_group, half, ranks, &odds);
    if (0 == me % 2) {
        MPI_Comm_create_group(MPI_COMM_WORLD, evens, 7, &comm);
        exercise_intra(comm, "MPI_Comm_create_group (even ranks)");
        free_comm(&comm);
    }
    MPI_Comm_create(MPI_COMM_WORLD, odds, &comm);
    if (MPI_COMM_NULL != comm) {
        exercise_intra(comm, "MPI_Comm_create (odd ranks)");
        free_comm(&comm);
    }
    MPI_Group_free(&evens);
    MPI_Group_free(&odds);
    MPI_Group_free(&world_group);

    {
        int dims[2] = {0, 0}, periods[2] = {1, 0};
        int *index = malloc(sizeof(int) * (size_t) n), *edges = malloc(sizeof(int) * (size_t) n);

        MPI_Dims_create(n, 2, dims);
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &comm);
        exercise_intra(comm, "MPI_Cart_create");
        free_comm(&comm);
        for (int r = 0; r < n; ++r) { /* a ring */
            index[r] = r + 1;
            edges[r] = (r + 1) % n;
        }
        MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &comm);
        exercise_intra(comm, "MPI_Graph_create");
        free_comm(&comm);
        free(index);
        free(edges);
    }
    split_every_type(MPI_COMM_WORLD, 0, "MPI_COMM_WORLD");
}

static void intercommunicators(void)
{
    MPI_Comm local, inter, merged, copy = MPI_COMM_NULL;
    MPI_Request request;
    int n, me, side;

    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (n < 2) {
        return;
    }
    side = me >= n / 2;
    MPI_Comm_split(MPI_COMM_WORLD, side, me, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, side ? 0 : n / 2, 11, &inter);
    exercise_inter(inter, side, "MPI_Intercomm_create");
    MPI_Comm_dup(inter, &copy);
    exercise_inter(copy, side, "MPI_Comm_dup of an intercommunicator");
    free_comm(&copy);
    MPI_Comm_idup(inter, &copy, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    exercise_inter(copy, side, "MPI_Comm_idup of an intercommunicator");
    free_comm(&copy);
    split_every_type(inter, side, "an intercommunicator");
    MPI_Intercomm_merge(inter, side, &merged);
    exercise_intra(merged, "MPI_Intercomm_merge");
    free_comm(&merged);
    free_comm(&inter);
#if MPI_VERSION >= 4 || OMPI_MAJOR_VERSION >= 5
    {
        MPI_Group world_group, mine, theirs;
        int first = side ? n / 2 : 0, last = side ? n - 1 : n / 2 - 1;
        int other_first = side ? 0 : n / 2, other_last = side ? n / 2 - 1 : n - 1;
        int range[1][3] = {{first, last, 1}}, other[1][3] = {{other_first, other_last, 1}};

        MPI_Comm_group(MPI_COMM_WORLD, &world_group);
        MPI_Group_range_incl(world_group, 1, range, &mine);
        MPI_Group_range_incl(world_group, 1, other, &theirs);
        expect(MPI_SUCCESS
                   == MPI_Intercomm_create_from_groups(mine, 0, theirs, 0, "coll_comms",
                                                       MPI_INFO_NULL, MPI_ERRORS_RETURN, &inter),
               "MPI_Intercomm_create_from_groups", "failed");
        exercise_inter(inter, side, "MPI_Intercomm_create_from_groups");
        free_comm(&inter);
        MPI_Group_free(&mine);
        MPI_Group_free(&theirs);
        MPI_Group_free(&world_group);
    }
#endif
    free_comm(&local);
}

static int own_option(int argc, char **argv, int i, void *context)
{
    (void) argc;
    (void) context;
    if (0 == strcmp(argv[i], "--inter-in-place")) {
        inter_in_place = 1;
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct coll_program_options opt = {.use_counters = 1};
    int ignored;

    if (!coll_program_start("coll_comms", "[--inter-in-place]", &argc, &argv, &opt,
                            own_option, NULL)) {
        return 2;
    }
    use_counters = opt.use_counters;
    if (use_counters) {
        MPI_T_init_thread(MPI_THREAD_SINGLE, &ignored);
        MPI_T_pvar_session_create(&session);
        allreduce_native = pvar_counter(session, "coll_async_allreduce_native", "coll_comms");
        bcast_native = pvar_counter(session, "coll_async_bcast_native", "coll_comms");
        allgather_native = pvar_counter(session, "coll_async_allgather_native", "coll_comms");
        alltoall_native = pvar_counter(session, "coll_async_alltoall_native", "coll_comms");
        agree_native = pvar_counter(session, "coll_async_agree_native", "coll_comms");
    }
    intracommunicators();
    intercommunicators();
    return coll_program_finish("coll_comms", checks, failures, "");
}
