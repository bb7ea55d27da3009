/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: parsing of parameter values (CPU lists, algorithm names).
 *
 * Pure C with no Open MPI dependency, so the unit tests exercise it without MPI.
 */

#ifndef MCA_COLL_ASYNC_PARSE_H
#define MCA_COLL_ASYNC_PARSE_H

#include <stdbool.h>
#include <stddef.h>

/* Highest CPU number a list may name, plus one. */
#define COLL_ASYNC_MAX_CPUS 4096

enum coll_async_cpus_mode {
    COLL_ASYNC_CPUS_AUTO,  /* a core near the rank, not bound to it, when one exists */
    COLL_ASYNC_CPUS_NONE,  /* no pinning */
    COLL_ASYNC_CPUS_LIST   /* the CPUs named in the list */
};

struct coll_async_cpuset {
    enum coll_async_cpus_mode mode;
    unsigned long bits[COLL_ASYNC_MAX_CPUS / (8 * sizeof(unsigned long))];
};

/*
 * Parses "auto", "none" or a list such as "0,2,4-7". On success returns 0 and
 * fills *set; on error returns -1 and writes a one-line reason into why.
 */
int coll_async_parse_cpus(const char *text, struct coll_async_cpuset *set,
                          char *why, size_t why_len);

bool coll_async_cpuset_has(const struct coll_async_cpuset *set, int cpu);

/*
 * Index of text in names[0..count-1], compared case-insensitively, or -1.
 */
int coll_async_parse_name(const char *text, const char *const *names, int count);

/*
 * Writes names[0..count-1] as "a, b, c" into out (for help messages).
 */
void coll_async_join_names(const char *const *names, int count, char *out, size_t out_len);

#endif /* MCA_COLL_ASYNC_PARSE_H */
