/*
 * See pvar_counter.h.
 */

#include <stdio.h>

#include "pvar_counter.h"

MPI_T_pvar_handle pvar_counter(MPI_T_pvar_session session, const char *name,
                               const char *program)
{
    MPI_T_pvar_handle handle;
    int index, count;

    if (MPI_SUCCESS != MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &index) ||
        MPI_SUCCESS != MPI_T_pvar_handle_alloc(session, index, NULL, &handle, &count)) {
        fprintf(stderr, "%s: no MPI_T counter %s: is coll/async loaded?\n", program, name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return handle;
}

unsigned long long pvar_counter_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    unsigned long long value = 0;

    MPI_T_pvar_read(session, handle, &value);
    return value;
}
