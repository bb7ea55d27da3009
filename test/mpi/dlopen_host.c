/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * A host that loads MPI as a plugin, as Python, Julia and R do: it is not linked
 * with libmpi but opens it with dlopen(RTLD_LOCAL), so nothing of libmpi is global
 * and every component Open MPI loads must find its symbols through its own links.
 * It runs allreduce, bcast and barrier on MPI_COMM_WORLD, checks the results, and
 * checks with the MPI_T counter coll_async_allreduce_native that coll/async ran
 * the allreduce.
 *
 *   dlopen_host LIBMPI        (LIBMPI: the path of libmpi.so)
 * Exit status 0 when every check passed.
 */

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

/* The functions and predefined objects this host takes from libmpi. */
struct mpi {
    int (*init)(int *, char ***);
    int (*finalize)(void);
    int (*comm_rank)(MPI_Comm, int *);
    int (*comm_size)(MPI_Comm, int *);
    int (*allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
    int (*bcast)(void *, int, MPI_Datatype, int, MPI_Comm);
    int (*barrier)(MPI_Comm);
    int (*t_init)(int, int *);
    int (*t_pvar_get_index)(const char *, int, int *);
    int (*t_session_create)(MPI_T_pvar_session *);
    int (*t_handle_alloc)(MPI_T_pvar_session, int, void *, MPI_T_pvar_handle *, int *);
    int (*t_start)(MPI_T_pvar_session, MPI_T_pvar_handle);
    int (*t_read)(MPI_T_pvar_session, MPI_T_pvar_handle, void *);
    MPI_Comm world;
    MPI_Datatype type_int;
    MPI_Op op_sum;
};

static void *symbol(void *lib, const char *name)
{
    void *address = dlsym(lib, name);

    if (NULL == address) {
        fprintf(stderr, "dlopen_host: %s not found: %s\n", name, dlerror());
        exit(2);
    }
    return address;
}

static void resolve(void *lib, struct mpi *mpi)
{
    *(void **) &mpi->init = symbol(lib, "MPI_Init");
    *(void **) &mpi->finalize = symbol(lib, "MPI_Finalize");
    *(void **) &mpi->comm_rank = symbol(lib, "MPI_Comm_rank");
    *(void **) &mpi->comm_size = symbol(lib, "MPI_Comm_size");
    *(void **) &mpi->allreduce = symbol(lib, "MPI_Allreduce");
    *(void **) &mpi->bcast = symbol(lib, "MPI_Bcast");
    *(void **) &mpi->barrier = symbol(lib, "MPI_Barrier");
    *(void **) &mpi->t_init = symbol(lib, "MPI_T_init_thread");
    *(void **) &mpi->t_pvar_get_index = symbol(lib, "MPI_T_pvar_get_index");
    *(void **) &mpi->t_session_create = symbol(lib, "MPI_T_pvar_session_create");
    *(void **) &mpi->t_handle_alloc = symbol(lib, "MPI_T_pvar_handle_alloc");
    *(void **) &mpi->t_start = symbol(lib, "MPI_T_pvar_start");
    *(void **) &mpi->t_read = symbol(lib, "MPI_T_pvar_read");
    /* Open MPI's handles are the addresses of its predefined objects. */
    mpi->world = (MPI_Comm) symbol(lib, "ompi_mpi_comm_world");
    mpi->type_int = (MPI_Datatype) symbol(lib, "ompi_mpi_int");
    mpi->op_sum = (MPI_Op) symbol(lib, "ompi_mpi_op_sum");
}

/* The calls on coll/async's native allreduce path since the handle was started. */
static int open_counter(const struct mpi *mpi, MPI_T_pvar_session *session,
                        MPI_T_pvar_handle *handle)
{
    int provided, index, count;

    if (MPI_SUCCESS != mpi->t_init(MPI_THREAD_SINGLE, &provided)
        || MPI_SUCCESS
               != mpi->t_pvar_get_index("coll_async_allreduce_native", MPI_T_PVAR_CLASS_COUNTER,
                                        &index)
        || MPI_SUCCESS != mpi->t_session_create(session)
        || MPI_SUCCESS != mpi->t_handle_alloc(*session, index, NULL, handle, &count)) {
        return -1;
    }
    (void) mpi->t_start(*session, *handle); /* continuous counters refuse; fine */
    return 0;
}

int main(int argc, char **argv)
{
    struct mpi mpi;
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    unsigned long long native = 0;
    int rank, size, sum, token, failures = 0;
    void *lib;

    if (argc != 2) {
        fprintf(stderr, "usage: dlopen_host LIBMPI\n");
        return 2;
    }
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (NULL == lib) {
        fprintf(stderr, "dlopen_host: %s\n", dlerror());
        return 2;
    }
    resolve(lib, &mpi);
    if (MPI_SUCCESS != mpi.init(&argc, &argv)) {
        fprintf(stderr, "dlopen_host: MPI_Init failed\n");
        return 1;
    }
    mpi.comm_rank(mpi.world, &rank);
    mpi.comm_size(mpi.world, &size);
    if (0 != open_counter(&mpi, &session, &handle)) {
        fprintf(stderr, "dlopen_host: rank %d: no counter coll_async_allreduce_native\n", rank);
        return 1;
    }
    mpi.allreduce(&rank, &sum, 1, mpi.type_int, mpi.op_sum, mpi.world);
    if (sum != size * (size - 1) / 2) {
        fprintf(stderr, "dlopen_host: rank %d: allreduce gave %d, expected %d\n", rank, sum,
                size * (size - 1) / 2);
        failures++;
    }
    token = 0 == rank ? 4242 : -1;
    mpi.bcast(&token, 1, mpi.type_int, 0, mpi.world);
    if (4242 != token) {
        fprintf(stderr, "dlopen_host: rank %d: bcast gave %d\n", rank, token);
        failures++;
    }
    mpi.t_read(session, handle, &native);
    if (1 != native) {
        fprintf(stderr, "dlopen_host: rank %d: coll_async_allreduce_native moved by %llu, not 1\n",
                rank, native);
        failures++;
    }
    mpi.barrier(mpi.world);
    if (0 == rank && 0 == failures) {
        printf("dlopen_host: %d ranks, libmpi opened RTLD_LOCAL, allreduce native: ok\n", size);
    }
    mpi.finalize();
    return 0 == failures ? 0 : 1;
}
