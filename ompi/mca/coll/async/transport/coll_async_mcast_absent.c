/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the UD multicast transport where the component is built without
 * verbs (rdma-core): creation fails, saying so, and nothing else is reached.
 * Built instead of the coll_async_mcast*.c files, so that what uses the
 * transport compiles alike either way.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "coll_async_mcast.h"

int coll_async_mcast_create(struct coll_async_mcast **mcast,
                            const struct coll_async_mcast_config *config, char *why,
                            size_t why_len)
{
    (void) config;
    *mcast = NULL;
    if (NULL != why && 0 != why_len) {
        snprintf(why, why_len, "mcast: built without verbs");
    }
    return -ENOTSUP;
}

/* No member is ever created: what follows is never called. */

struct coll_async_transport *coll_async_mcast_transport(struct coll_async_mcast *mcast)
{
    (void) mcast;
    return NULL;
}

int coll_async_mcast_attached(const struct coll_async_mcast *mcast, const char **why)
{
    (void) mcast;
    if (NULL != why) {
        *why = "built without verbs";
    }
    return -ENOTSUP;
}

size_t coll_async_mcast_mtu(const struct coll_async_mcast *mcast)
{
    (void) mcast;
    return 0;
}

size_t coll_async_mcast_payload(const struct coll_async_mcast *mcast)
{
    (void) mcast;
    return 0;
}

const char *coll_async_mcast_describe(const struct coll_async_mcast *mcast)
{
    (void) mcast;
    return "mcast (built without verbs)";
}

void coll_async_mcast_stats(const struct coll_async_mcast *mcast,
                            struct coll_async_mcast_stats *stats)
{
    (void) mcast;
    memset(stats, 0, sizeof(*stats));
}

bool coll_async_mcast_built(void)
{
    return false;
}
