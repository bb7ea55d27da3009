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
 * port. The filter of coll_async_port_filter.h keeps some. Tests read made-up
 * sysfs trees through the function below.
 *
 * Pure C with no Open MPI dependency.
 */

#ifndef MCA_COLL_ASYNC_VERBS_PORT_H
#define MCA_COLL_ASYNC_VERBS_PORT_H

#include <stdbool.h>
#include <stddef.h>

#include "coll_async_port_filter.h"
#include "coll_async_verbs.h"

/* Fills port->numa and port->netdev from the sysfs tree at root ("/sys" on a
 * live system) for port->device and port->port: -1 and "" when sysfs says nothing. */
void coll_async_verbs_port_sysfs(const char *root, struct coll_async_verbs_port_info *port);

#endif /* MCA_COLL_ASYNC_VERBS_PORT_H */
