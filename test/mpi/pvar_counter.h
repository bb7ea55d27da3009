/*
 * A reader of coll/async's MPI_T counters (coll_async_<collective>_<path>) for the
 * small MPI tests. Counter reads give the calls since the handle was allocated.
 */

#ifndef PVAR_COUNTER_H
#define PVAR_COUNTER_H

#include <mpi.h>

/* Allocates a handle for counter name in session and starts it; aborts the job,
 * naming the counter, when coll/async does not provide it. */
MPI_T_pvar_handle pvar_counter(MPI_T_pvar_session session, const char *name,
                               const char *program);
unsigned long long pvar_counter_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle);

#endif
