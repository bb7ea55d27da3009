/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * A reader of coll/async's MPI_T counters (coll_async_<collective>_<path>) for the
 * small MPI tests. Counter reads give the calls since the handle was allocated.
 */

#ifndef PVAR_COUNTER_H
#define PVAR_COUNTER_H

#include <stddef.h>

#include <mpi.h>

/* Allocates a handle for counter name in session and starts it; aborts the job,
 * naming the counter, when coll/async does not provide it. */
MPI_T_pvar_handle pvar_counter(MPI_T_pvar_session session, const char *name,
                               const char *program);
unsigned long long pvar_counter_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle);

/*
 * The native and delegated counters of collective families in their three forms
 * (blocking "x", nonblocking "ix", persistent "x_init"), for the tests that check
 * the path of every call. Forms and paths are indexed in the order of
 * PVAR_FORM_* and PVAR_PATH_*.
 */
enum { PVAR_FORM_BLOCKING, PVAR_FORM_NONBLOCKING, PVAR_FORM_PERSISTENT, PVAR_FORMS };
enum { PVAR_PATH_NATIVE, PVAR_PATH_DELEGATED, PVAR_PATHS };

struct pvar_families {
    MPI_T_pvar_session session;
    const char *const *names; /* the families: "allreduce", ... */
    int count;
    MPI_T_pvar_handle (*handles)[PVAR_FORMS][PVAR_PATHS];
};

/* Initializes MPI_T and allocates every counter; aborts like pvar_counter(). */
void pvar_families_open(struct pvar_families *set, const char *const *names, int count,
                        const char *program);
void pvar_families_close(struct pvar_families *set);
void pvar_families_read(const struct pvar_families *set, int family, int form,
                        unsigned long long out[PVAR_PATHS]);
#define PVAR_WHY_MAX 160

/* Compares how the counters of family in form moved since before with the
 * expected move: want_native calls on the native path, none delegated. For each
 * path that moved otherwise, why[path] says so ("counter coll_async_x_native
 * moved by 0, expected 1"); the others get "". Returns the number of such paths. */
int pvar_families_check(const struct pvar_families *set, int family, int form,
                        const unsigned long long before[PVAR_PATHS],
                        unsigned long long want_native, char why[PVAR_PATHS][PVAR_WHY_MAX]);

/* The counter's MPI_T name, e.g. coll_async_iallreduce_native. */
void pvar_families_name(const struct pvar_families *set, int family, int form, int path,
                        char *out, size_t len);

#endif
