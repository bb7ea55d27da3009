/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async's MPI_T counters for Python tests (mpi4py has no MPI_T): a shared
 * library, loaded with ctypes after MPI_Init, that reads a counter by name.
 *   pvar_open(name)  a handle number, -1 when the counter does not exist
 *   pvar_read(h)     the calls counted since pvar_open
 */

#include <mpi.h>

enum { MAX_HANDLES = 512 };

static MPI_T_pvar_session session;
static MPI_T_pvar_handle handles[MAX_HANDLES];
static int opened = -1; /* -1: MPI_T not initialized yet */

int pvar_open(const char *name)
{
    int index, count, provided;

    if (opened < 0) {
        if (MPI_SUCCESS != MPI_T_init_thread(MPI_THREAD_SINGLE, &provided)
            || MPI_SUCCESS != MPI_T_pvar_session_create(&session)) {
            return -1;
        }
        opened = 0;
    }
    if (opened == MAX_HANDLES
        || MPI_SUCCESS != MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &index)
        || MPI_SUCCESS
               != MPI_T_pvar_handle_alloc(session, index, NULL, &handles[opened], &count)) {
        return -1;
    }
    return opened++;
}

unsigned long long pvar_read(int handle)
{
    unsigned long long value = 0;

    if (handle >= 0 && handle < opened) {
        MPI_T_pvar_read(session, handles[handle], &value);
    }
    return value;
}
