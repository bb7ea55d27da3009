/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * bench/tune: what it reads of the component through MPI_T: its parameters
 * (coll_async_virtual_nodes, coll_async_tuning_file, ...) as control variables,
 * and its per-collective counters, by which it checks that a hint on a
 * communicator is obeyed. MPI_T is initialized after MPI_Init (Open MPI 4.1
 * registers the component's variables there).
 */

#include <string.h>

#include "tune.h"

static bool mpit_ready;

int tune_mpit_init(void)
{
    int provided;

    if (MPI_SUCCESS != MPI_T_init_thread(MPI_THREAD_SINGLE, &provided)) {
        return -1;
    }
    mpit_ready = true;
    return 0;
}

void tune_mpit_finalize(void)
{
    if (mpit_ready) {
        MPI_T_finalize();
        mpit_ready = false;
    }
}

/* Reads the control variable `name` into buf (len bytes); -1 where it is not there. */
static int read_cvar(const char *name, void *buf, int len, MPI_Datatype expected)
{
    MPI_T_cvar_handle handle;
    MPI_Datatype type;
    int index, count, rc;

    if (MPI_SUCCESS != MPI_T_cvar_get_index(name, &index)) {
        return -1;
    }
    rc = MPI_T_cvar_get_info(index, NULL, NULL, NULL, &type, NULL, NULL, NULL, NULL, NULL);
    if (MPI_SUCCESS != rc || type != expected) {
        return -1;
    }
    if (MPI_SUCCESS != MPI_T_cvar_handle_alloc(index, NULL, &handle, &count)) {
        return -1;
    }
    if (MPI_CHAR == type && count > len) {
        MPI_T_cvar_handle_free(&handle);
        return -1;
    }
    rc = MPI_T_cvar_read(handle, buf);
    MPI_T_cvar_handle_free(&handle);
    return MPI_SUCCESS == rc ? 0 : -1;
}

int tune_cvar_int(const char *name, int *value)
{
    return read_cvar(name, value, (int) sizeof(*value), MPI_INT);
}

int tune_cvar_string(const char *name, char *buf, int len)
{
    memset(buf, 0, (size_t) len);
    return read_cvar(name, buf, len, MPI_CHAR);
}

/* A counter is read through a handle of its own session, started (a counter not
 * marked continuous counts only while its handle is started). */
int tune_counter_open(const char *name, struct tune_counter *c)
{
    int index, count;

    if (MPI_SUCCESS != MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &index)
        || MPI_SUCCESS != MPI_T_pvar_session_create(&c->session)) {
        return -1;
    }
    if (MPI_SUCCESS != MPI_T_pvar_handle_alloc(c->session, index, NULL, &c->handle, &count)
        || 1 != count) {
        MPI_T_pvar_session_free(&c->session);
        return -1;
    }
    (void) MPI_T_pvar_start(c->session, c->handle); /* refused where continuous: fine */
    return 0;
}

int tune_counter_read(struct tune_counter *c, unsigned long long *value)
{
    return MPI_SUCCESS == MPI_T_pvar_read(c->session, c->handle, value) ? 0 : -1;
}

void tune_counter_close(struct tune_counter *c)
{
    MPI_T_pvar_handle_free(c->session, &c->handle);
    MPI_T_pvar_session_free(&c->session);
}
