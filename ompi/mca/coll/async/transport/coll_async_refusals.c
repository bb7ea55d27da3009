/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: rate-limited lines about refused connections. See
 * coll_async_refusals.h.
 */

#include <stdarg.h>
#include <stdio.h>

#include "coll_async_clock.h"
#include "coll_async_refusals.h"

void coll_async_refusals_say(struct coll_async_refusals *refusals, const char *format, ...)
{
    uint64_t now = coll_async_now_ms();
    char line[400];
    va_list args;
    int n;

    ++refusals->count;
    if (NULL == refusals->say) {
        return;
    }
    if (now - refusals->window_ms >= 60000) {
        refusals->window_ms = now;
        refusals->said = 0;
    }
    if (refusals->said >= COLL_ASYNC_REFUSALS_PER_MINUTE) {
        ++refusals->unsaid;
        return;
    }
    ++refusals->said;
    va_start(args, format);
    n = vsnprintf(line, sizeof(line), format, args);
    va_end(args);
    if (refusals->unsaid > 0 && n > 0 && (size_t) n < sizeof(line)) {
        snprintf(line + n, sizeof(line) - (size_t) n, " (%llu more refused before, not said)",
                 (unsigned long long) refusals->unsaid);
    }
    refusals->unsaid = 0;
    refusals->say(refusals->context, line);
}
