/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the device:port filter every RDMA transport applies, written
 * once (the verbs RC transport's discovery, the UD multicast transport's
 * choice of port).
 *
 * In the form of coll_async_tcp_if's filters: an include or an exclude list
 * (mutually exclusive), comma-separated, of "device" (every port of it) or
 * "device:port".
 *
 * Pure C with no Open MPI or rdma-core dependency.
 */

#ifndef MCA_COLL_ASYNC_PORT_FILTER_H
#define MCA_COLL_ASYNC_PORT_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#define COLL_ASYNC_PORT_FILTER_MAX 16

struct coll_async_port_filter {
    bool include; /* keep what the rules match; else drop it */
    int count;    /* 0 with include false: no list given */
    struct {
        char device[64];
        int port; /* 0: every port of the device */
    } rules[COLL_ASYNC_PORT_FILTER_MAX];
};

/* Parses the two lists (NULL or "" when not given). 0, or -EINVAL with a
 * one-line reason in why. */
int coll_async_port_filter_parse(const char *include, const char *exclude,
                                 struct coll_async_port_filter *filter, char *why,
                                 size_t why_len);

/* Whether the filter keeps port of device. */
bool coll_async_port_filter_keeps(const struct coll_async_port_filter *filter,
                                  const char *device, int port);

#endif /* MCA_COLL_ASYNC_PORT_FILTER_H */
