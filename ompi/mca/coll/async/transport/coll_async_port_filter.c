/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the RDMA transports' device:port filter, parsed and applied. See
 * coll_async_port_filter.h.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "coll_async_port_filter.h"

/* "device" or "device:port", entry being length bytes of a longer string. */
static int parse_entry(const char *entry, size_t length, struct coll_async_port_filter *filter)
{
    size_t name_length = length;
    const char *colon = memchr(entry, ':', length);
    long port = 0;

    if (NULL != colon) {
        char digits[8];
        size_t count = length - (size_t) (colon - entry) - 1;
        char *end;

        name_length = (size_t) (colon - entry);
        if (0 == count || count >= sizeof(digits) || !isdigit((unsigned char) colon[1])) {
            return -EINVAL;
        }
        memcpy(digits, colon + 1, count);
        digits[count] = '\0';
        port = strtol(digits, &end, 10);
        if ('\0' != *end || port < 1 || port > 255) {
            return -EINVAL;
        }
    }
    if (0 == name_length || name_length >= sizeof(filter->rules[0].device)) {
        return -EINVAL;
    }
    for (size_t i = 0; i < name_length; ++i) {
        if (!isgraph((unsigned char) entry[i])) {
            return -EINVAL;
        }
    }
    memcpy(filter->rules[filter->count].device, entry, name_length);
    filter->rules[filter->count].device[name_length] = '\0';
    filter->rules[filter->count].port = (int) port;
    return 0;
}

static int parse_list(const char *list, const char *what, struct coll_async_port_filter *filter,
                      char *why, size_t why_len)
{
    const char *entry = list;

    for (;;) {
        size_t length = strcspn(entry, ",");

        if (COLL_ASYNC_PORT_FILTER_MAX == filter->count) {
            snprintf(why, why_len, "%s: more than %d entries", what, COLL_ASYNC_PORT_FILTER_MAX);
            return -EINVAL;
        }
        if (0 != parse_entry(entry, length, filter)) {
            snprintf(why, why_len, "%s: \"%.*s\" is neither a device nor a device:port", what,
                     (int) length, entry);
            return -EINVAL;
        }
        ++filter->count;
        if ('\0' == entry[length]) {
            return 0;
        }
        entry += length + 1;
    }
}

int coll_async_port_filter_parse(const char *include, const char *exclude,
                                 struct coll_async_port_filter *filter, char *why,
                                 size_t why_len)
{
    bool has_include = NULL != include && '\0' != include[0];
    bool has_exclude = NULL != exclude && '\0' != exclude[0];

    memset(filter, 0, sizeof(*filter));
    if (has_include && has_exclude) {
        snprintf(why, why_len, "an include list and an exclude list are mutually exclusive");
        return -EINVAL;
    }
    if (has_include) {
        filter->include = true;
        return parse_list(include, "include list", filter, why, why_len);
    }
    return has_exclude ? parse_list(exclude, "exclude list", filter, why, why_len) : 0;
}

bool coll_async_port_filter_keeps(const struct coll_async_port_filter *filter,
                                  const char *device, int port)
{
    for (int i = 0; i < filter->count; ++i) {
        if (0 == strcmp(filter->rules[i].device, device)
            && (0 == filter->rules[i].port || filter->rules[i].port == port)) {
            return filter->include;
        }
    }
    return !filter->include;
}
