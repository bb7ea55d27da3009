/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: what a transport says about the connections it refused.
 *
 * A stranger may knock without end; the log must not grow with it. Each
 * refusal is counted and said in one line, at most COLL_ASYNC_REFUSALS_PER_MINUTE
 * lines a minute; the next line said tells how many went unsaid before it.
 *
 * Pure C with no Open MPI dependency.
 */

#ifndef MCA_COLL_ASYNC_REFUSALS_H
#define MCA_COLL_ASYNC_REFUSALS_H

#include <stdint.h>

#define COLL_ASYNC_REFUSALS_PER_MINUTE 20

/* Says one line ("tcp: refused a connection on ... : why"); context is the
 * caller's. */
typedef void (*coll_async_refused_fn)(void *context, const char *line);

struct coll_async_refusals {
    coll_async_refused_fn say; /* NULL: counted only */
    void *context;
    uint64_t count;     /* every refusal so far */
    uint64_t window_ms; /* the current minute's start */
    int said;           /* lines in it */
    uint64_t unsaid;    /* refusals not said since the last line */
};

/* Counts one refusal and says it, unless this minute's lines are spent. */
void coll_async_refusals_say(struct coll_async_refusals *refusals, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* MCA_COLL_ASYNC_REFUSALS_H */
