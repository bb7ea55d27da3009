/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_suite: reading coll/async's MPI_T counters.
 *
 * The component exports, per collective, coll_async_<name>_native and
 * coll_async_<name>_delegated: counters (MPI_T_PVAR_CLASS_COUNTER) of type
 * MPI_UNSIGNED_LONG_LONG, bound to no object, continuous and read-only, summed over
 * all communicators of the process. The suite looks each one up by name, checks
 * those properties once, and keeps one handle per counter in one session.
 *
 * With --expect-component=yes every counter must exist. With no, they may be
 * absent (the component is not loaded); when present they must never move, which
 * the checks verify around each call and counters_finish() over the whole run.
 */

#include <stdio.h>
#include <string.h>

#include "coll_suite.h"

static int available;
static MPI_T_pvar_session session;
static MPI_T_pvar_handle handles[NUM_COLLS][NUM_PATHS];
static unsigned long long at_start[NUM_COLLS][NUM_PATHS];

int counters_available(void) { return available; }

/* Looks up one counter and checks its properties; returns 1 when usable. */
static int find_counter(const char *name, int *index, int expect_component)
{
    char found_name[128], desc[512];
    int name_len = sizeof(found_name), desc_len = sizeof(desc);
    int verbosity, var_class, bind, readonly, continuous, atomic;
    MPI_Datatype datatype;
    MPI_T_enum enumtype;
    int rc;

    rc = MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, index);
    if (MPI_SUCCESS != rc) {
        if (expect_component) {
            report_plain_failure("MPI_T performance variable %s not found (MPI_T_pvar_get_index "
                                 "returned %d); is coll/async loaded?", name, rc);
        }
        return 0;
    }
    rc = MPI_T_pvar_get_info(*index, found_name, &name_len, &verbosity, &var_class, &datatype,
                             &enumtype, desc, &desc_len, &bind, &readonly, &continuous,
                             &atomic);
    record_check(MPI_SUCCESS == rc);
    if (MPI_SUCCESS != rc) {
        report_plain_failure("MPI_T_pvar_get_info(%s) returned %d", name, rc);
        return 0;
    }
    if (0 != strcmp(found_name, name) || MPI_T_PVAR_CLASS_COUNTER != var_class ||
        MPI_UNSIGNED_LONG_LONG != datatype || MPI_T_BIND_NO_OBJECT != bind || !readonly ||
        !continuous) {
        report_plain_failure("MPI_T performance variable %s: name %s, class %d (counter %d), "
                             "datatype %s, bind %d (none %d), readonly %d, continuous %d; "
                             "expected a read-only continuous unsigned long long counter "
                             "bound to no object",
                             name, found_name, var_class, MPI_T_PVAR_CLASS_COUNTER,
                             MPI_UNSIGNED_LONG_LONG == datatype ? "MPI_UNSIGNED_LONG_LONG"
                                                                : "another",
                             bind, MPI_T_BIND_NO_OBJECT, readonly, continuous);
        record_check(0);
        return 0;
    }
    record_check(1);
    return 1;
}

int counters_init(int expect_component)
{
    int provided, rc, found = 0, missing = 0;

    rc = MPI_T_init_thread(opt.thread_multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                           &provided);
    if (MPI_SUCCESS != rc) {
        report_plain_failure("MPI_T_init_thread returned %d", rc);
        return -1;
    }
    rc = MPI_T_pvar_session_create(&session);
    if (MPI_SUCCESS != rc) {
        report_plain_failure("MPI_T_pvar_session_create returned %d", rc);
        return -1;
    }
    for (int c = 0; c < NUM_COLLS; ++c) {
        for (int p = 0; p < NUM_PATHS; ++p) {
            char name[96];
            int index, count;

            snprintf(name, sizeof(name), "coll_async_%s_%s", coll_names[c], path_names[p]);
            if (!find_counter(name, &index, expect_component)) {
                ++missing;
                continue;
            }
            /* No object: the handle is allocated with a NULL object handle. */
            rc = MPI_T_pvar_handle_alloc(session, index, NULL, &handles[c][p], &count);
            record_check(MPI_SUCCESS == rc && 1 == count);
            if (MPI_SUCCESS != rc || 1 != count) {
                report_plain_failure("MPI_T_pvar_handle_alloc(%s) returned %d, count %d "
                                     "(expected 1)", name, rc, count);
                ++missing;
                continue;
            }
            ++found;
        }
    }
    if (expect_component) {
        record_check(0 == missing);
        if (missing) {
            report_plain_failure("%d of the %d coll_async counters are missing or unusable",
                                 missing, NUM_COLLS * NUM_PATHS);
            return -1;
        }
    } else if (found > 0 && missing > 0) {
        record_check(0);
        report_plain_failure("only %d of the %d coll_async counters exist", found,
                             NUM_COLLS * NUM_PATHS);
        return -1;
    }
    available = found > 0;
    if (available) {
        for (int c = 0; c < NUM_COLLS; ++c) {
            counters_read((enum coll_id) c, at_start[c]);
        }
    }
    return 0;
}

void counters_read(enum coll_id coll, unsigned long long out[NUM_PATHS])
{
    for (int p = 0; p < NUM_PATHS; ++p) {
        out[p] = 0;
        if (available) {
            int rc = MPI_T_pvar_read(session, handles[coll][p], &out[p]);
            if (MPI_SUCCESS != rc) {
                record_check(0);
                report_plain_failure("MPI_T_pvar_read(coll_async_%s_%s) returned %d",
                                     coll_names[coll], path_names[p], rc);
            }
        }
    }
}

void counters_moved(unsigned long long moved[NUM_PATHS])
{
    for (int p = 0; p < NUM_PATHS; ++p) {
        moved[p] = 0;
    }
    for (int c = 0; available && c < NUM_COLLS; ++c) {
        unsigned long long now[NUM_PATHS];
        counters_read((enum coll_id) c, now);
        for (int p = 0; p < NUM_PATHS; ++p) {
            moved[p] += now[p] - at_start[c][p];
        }
    }
}

void counters_finish(void)
{
    if (!available) {
        return;
    }
    if (!opt.expect_component) {
        /* The component stepped aside: none of its counters moved during the run,
         * including around the MPI calls the checks do not watch. */
        for (int c = 0; c < NUM_COLLS; ++c) {
            unsigned long long now[NUM_PATHS];
            counters_read((enum coll_id) c, now);
            for (int p = 0; p < NUM_PATHS; ++p) {
                record_check(now[p] == at_start[c][p]);
                if (now[p] != at_start[c][p]) {
                    report_plain_failure("--expect-component=no but coll_async_%s_%s moved "
                                         "from %llu to %llu during the run",
                                         coll_names[c], path_names[p], at_start[c][p], now[p]);
                }
            }
        }
    }
    for (int c = 0; c < NUM_COLLS; ++c) {
        for (int p = 0; p < NUM_PATHS; ++p) {
            MPI_T_pvar_handle_free(session, &handles[c][p]);
        }
    }
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
    available = 0;
}
