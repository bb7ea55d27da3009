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

#include "coll_async_filter_lists.h"
#include "coll_async_port_filter.h"

/* "device" or "device:port", entry being length bytes of a longer string. */
static int parse_entry(void *context, int index, const char *entry, size_t length)
{
    struct coll_async_port_filter *filter = context;
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
    memcpy(filter->rules[index].device, entry, name_length);
    filter->rules[index].device[name_length] = '\0';
    filter->rules[index].port = (int) port;
    return 0;
}

static const struct coll_async_filter_lists port_lists = {
    .max_entries = COLL_ASYNC_PORT_FILTER_MAX,
    .parse_entry = parse_entry,
    .entry_is = "a device nor a device:port",
};

int coll_async_port_filter_parse(const char *include, const char *exclude,
                                 struct coll_async_port_filter *filter, char *why,
                                 size_t why_len)
{
    memset(filter, 0, sizeof(*filter));
    return coll_async_filter_lists_parse(&port_lists, include, exclude, filter, &filter->include,
                                         &filter->count, why, why_len);
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
