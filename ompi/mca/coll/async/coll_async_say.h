/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: how the component speaks to the user: help messages from
 * help-coll-async.txt and the verbose output stream. It sits below everything
 * that reports, and knows nothing of the component but its verbosity.
 *
 * Help messages are printed from an application thread only (the thread that
 * opens, enables, or completes a collective), never from the progress thread:
 * what fails there is recorded in the op and reported when the request or the
 * blocking call completes (coll_async_failure.h).
 */

#ifndef MCA_COLL_ASYNC_SAY_H
#define MCA_COLL_ASYNC_SAY_H

#include <stdbool.h>

/* The verbose output stream (opal_output), at coll_async_verbose; -1 when closed. */
extern int mca_coll_async_output;

/* Makes the help text installed next to the component findable; at register. */
void mca_coll_async_say_init(void);

/* Opens the output stream at verbose; returns it. */
int mca_coll_async_say_open(int verbose);
void mca_coll_async_say_close(void);

/* A help message from help-coll-async.txt, shown when speaker (one process per
 * job or communicator) or at verbose level 1 and above. */
void mca_coll_async_show_help(bool speaker, const char *topic, ...);

/* Reports what a collective that failed recorded (coll_async_failure.h): from
 * the thread that completes the collective, never the progress thread. */
struct coll_async_failure;
void mca_coll_async_say_failure(const struct coll_async_failure *failure);

/* The MPI error code a collective that ended with status returns: MPI's own
 * codes (ULFM's, coll_async_module.c) as they are; under ULFM a failure other
 * than memory's is a peer's, MPI_ERR_PROC_FAILED, which the application can
 * recover from; elsewhere Open MPI's codes translated. */
int mca_coll_async_mpi_error(int status);

/* A verbose line from a thread that may be the progress thread (opal_output is
 * not for two threads at once unless Open MPI runs threaded): kept, and printed
 * by the next application thread that progresses (say_pending), or at close. */
void mca_coll_async_say_later(int level, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
void mca_coll_async_say_pending(void);

/* Whether this is the job's first process (the speaker for job-wide messages). */
bool mca_coll_async_first_process(void);

#endif /* MCA_COLL_ASYNC_SAY_H */
