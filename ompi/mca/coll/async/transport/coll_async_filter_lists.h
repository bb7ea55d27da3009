/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the include/exclude pair of comma-separated lists that every
 * transport's filter takes (TCP's interfaces, the RDMA transports' ports),
 * split once here; what an entry means is the filter's own.
 *
 * Pure C with no Open MPI dependency.
 */

#ifndef MCA_COLL_ASYNC_FILTER_LISTS_H
#define MCA_COLL_ASYNC_FILTER_LISTS_H

#include <stdbool.h>
#include <stddef.h>

/* Parses entry (length bytes of a longer string) as rule number index of
 * filter; 0 or -EINVAL. */
typedef int (*coll_async_filter_entry_fn)(void *filter, int index, const char *entry,
                                          size_t length);

struct coll_async_filter_lists {
    int max_entries;
    coll_async_filter_entry_fn parse_entry;
    const char *entry_is; /* for messages: "a device or a device:port" */
};

/*
 * Parses include and exclude (NULL or "" when not given; at most one of them)
 * into filter through lists->parse_entry; sets *include (true: keep what the
 * entries match, false: drop it) and *count (0 with *include false: no list).
 * 0, or -EINVAL with a one-line reason in why.
 */
int coll_async_filter_lists_parse(const struct coll_async_filter_lists *lists,
                                  const char *include, const char *exclude, void *filter,
                                  bool *is_include, int *count, char *why, size_t why_len);

#endif /* MCA_COLL_ASYNC_FILTER_LISTS_H */
