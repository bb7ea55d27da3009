/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * See pvar_counter.h.
 */

#include <stdio.h>
#include <stdlib.h>

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

void pvar_families_name(const struct pvar_families *set, int family, int form, int path,
                        char *out, size_t len)
{
    static const char *const paths[PVAR_PATHS] = {"native", "delegated"};

    snprintf(out, len, "coll_async_%s%s%s_%s", PVAR_FORM_NONBLOCKING == form ? "i" : "",
             set->names[family], PVAR_FORM_PERSISTENT == form ? "_init" : "", paths[path]);
}

void pvar_families_open(struct pvar_families *set, const char *const *names, int count,
                        const char *program)
{
    int ignored;

    set->names = names;
    set->count = count;
    set->handles = calloc((size_t) count, sizeof(*set->handles));
    if (NULL == set->handles) {
        fprintf(stderr, "%s: out of memory\n", program);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_T_init_thread(MPI_THREAD_SINGLE, &ignored);
    MPI_T_pvar_session_create(&set->session);
    for (int f = 0; f < count; ++f) {
        for (int m = 0; m < PVAR_FORMS; ++m) {
            for (int p = 0; p < PVAR_PATHS; ++p) {
                char name[96];

                pvar_families_name(set, f, m, p, name, sizeof(name));
                set->handles[f][m][p] = pvar_counter(set->session, name, program);
            }
        }
    }
}

void pvar_families_close(struct pvar_families *set)
{
    for (int f = 0; f < set->count; ++f) {
        for (int m = 0; m < PVAR_FORMS; ++m) {
            for (int p = 0; p < PVAR_PATHS; ++p) {
                MPI_T_pvar_handle_free(set->session, &set->handles[f][m][p]);
            }
        }
    }
    free(set->handles);
    MPI_T_pvar_session_free(&set->session);
    MPI_T_finalize();
}

void pvar_families_read(const struct pvar_families *set, int family, int form,
                        unsigned long long out[PVAR_PATHS])
{
    for (int p = 0; p < PVAR_PATHS; ++p) {
        out[p] = pvar_counter_read(set->session, set->handles[family][form][p]);
    }
}

int pvar_families_check(const struct pvar_families *set, int family, int form,
                        const unsigned long long before[PVAR_PATHS],
                        unsigned long long want_native, char why[PVAR_PATHS][PVAR_WHY_MAX])
{
    unsigned long long now[PVAR_PATHS];
    int wrong = 0;

    pvar_families_read(set, family, form, now);
    for (int p = 0; p < PVAR_PATHS; ++p) {
        unsigned long long want = PVAR_PATH_NATIVE == p ? want_native : 0;
        char name[96];

        why[p][0] = '\0';
        if (now[p] - before[p] != want) {
            pvar_families_name(set, family, form, p, name, sizeof(name));
            snprintf(why[p], PVAR_WHY_MAX, "counter %s moved by %llu, expected %llu", name,
                     now[p] - before[p], want);
            ++wrong;
        }
    }
    return wrong;
}
