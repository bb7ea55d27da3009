/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the verbs transport where the component is built without
 * rdma-core (configure found no libibverbs or librdmacm, or --without-verbs):
 * coll_async_verbs.h's functions, finding no port and opening nothing, so that
 * its callers need no #if.
 */

#include <errno.h>
#include <stdio.h>

#include "coll_async_verbs.h"

static const char built_without[] = "built without rdma-core";

int coll_async_verbs_discover(const char *include, const char *exclude,
                              struct coll_async_verbs_port_info *ports, int max, char *why,
                              size_t why_len)
{
    (void) include;
    (void) exclude;
    (void) ports;
    (void) max;
    snprintf(why, why_len, "%s", built_without);
    return -ENODEV;
}

int coll_async_verbs_create(struct coll_async_verbs **verbs,
                            const struct coll_async_verbs_config *config, char *why,
                            size_t why_len)
{
    (void) config;
    *verbs = NULL;
    snprintf(why, why_len, "%s", built_without);
    return -ENODEV;
}

int coll_async_verbs_ports(const struct coll_async_verbs *verbs,
                           struct coll_async_verbs_port_info *ports, int max)
{
    (void) verbs;
    (void) ports;
    (void) max;
    return 0;
}

int coll_async_verbs_port_bytes(const struct coll_async_verbs *verbs, uint32_t peer,
                                uint64_t *bytes, int max)
{
    (void) verbs;
    (void) peer;
    (void) bytes;
    (void) max;
    return 0;
}
