/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: which RDMA ports the verbs transport uses.
 *
 * Discovery (coll_async_verbs_discover, declared in coll_async_verbs.h) lists
 * the active ports of every device libibverbs knows, with what sysfs says about
 * each: the device's NUMA node and, for RoCE, the Ethernet device under the
 * port. A filter in the form of coll_async_tcp_if's keeps some: an include or an
 * exclude list (mutually exclusive) of "device" (every port) or "device:port".
 * Tests parse filters and read made-up sysfs trees through the functions below.
 *
 * Pure C with no Open MPI dependency.
 */

#ifndef MCA_COLL_ASYNC_VERBS_PORT_H
#define MCA_COLL_ASYNC_VERBS_PORT_H

#include <stdbool.h>
#include <stddef.h>

#include "coll_async_verbs.h"

#define COLL_ASYNC_VERBS_FILTER_MAX 16

struct coll_async_verbs_filter {
    bool include; /* keep what the rules match; else drop it */
    int count;    /* 0 with include false: no list given */
    struct {
        char device[64];
        int port; /* 0: every port of the device */
    } rules[COLL_ASYNC_VERBS_FILTER_MAX];
};

/* Parses the two lists (NULL or "" when not given). 0, or -EINVAL with a
 * one-line reason in why. */
int coll_async_verbs_filter_parse(const char *include, const char *exclude,
                                  struct coll_async_verbs_filter *filter, char *why,
                                  size_t why_len);

bool coll_async_verbs_filter_keeps(const struct coll_async_verbs_filter *filter,
                                   const char *device, int port);

/* Fills port->numa and port->netdev from the sysfs tree at root ("/sys" on a
 * live system) for port->device and port->port: -1 and "" when sysfs says nothing. */
void coll_async_verbs_port_sysfs(const char *root, struct coll_async_verbs_port_info *port);

#endif /* MCA_COLL_ASYNC_VERBS_PORT_H */
