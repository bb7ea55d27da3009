/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the include/exclude lists of the transports' filters. See
 * coll_async_filter_lists.h.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "coll_async_filter_lists.h"

static int parse_list(const struct coll_async_filter_lists *lists, const char *list,
                      const char *what, void *filter, int *count, char *why, size_t why_len)
{
    const char *entry = list;

    for (;;) {
        size_t length = strcspn(entry, ",");

        if (lists->max_entries == *count) {
            snprintf(why, why_len, "%s: more than %d entries", what, lists->max_entries);
            return -EINVAL;
        }
        if (0 == length || 0 != lists->parse_entry(filter, *count, entry, length)) {
            snprintf(why, why_len, "%s: \"%.*s\" is neither %s", what, (int) length, entry,
                     lists->entry_is);
            return -EINVAL;
        }
        ++*count;
        if ('\0' == entry[length]) {
            return 0;
        }
        entry += length + 1;
    }
}

int coll_async_filter_lists_parse(const struct coll_async_filter_lists *lists,
                                  const char *include, const char *exclude, void *filter,
                                  bool *is_include, int *count, char *why, size_t why_len)
{
    bool has_include = NULL != include && '\0' != include[0];
    bool has_exclude = NULL != exclude && '\0' != exclude[0];

    *is_include = false;
    *count = 0;
    if (has_include && has_exclude) {
        snprintf(why, why_len, "an include list and an exclude list are mutually exclusive");
        return -EINVAL;
    }
    if (has_include) {
        *is_include = true;
        return parse_list(lists, include, "include list", filter, count, why, why_len);
    }
    if (has_exclude) {
        return parse_list(lists, exclude, "exclude list", filter, count, why, why_len);
    }
    return 0;
}
