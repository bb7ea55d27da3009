/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests: the keys the transports' tests give their ranks, one per id, so
 * that every forked rank knows every other's without an exchange.
 */

#ifndef COLL_ASYNC_TEST_KEYS_H
#define COLL_ASYNC_TEST_KEYS_H

#include <string.h>

#include "../../ompi/mca/coll/async/transport/coll_async_auth.h"

static inline struct coll_async_key test_key(uint32_t id)
{
    struct coll_async_key key;

    memset(key.bytes, 0x5a, sizeof(key.bytes));
    memcpy(key.bytes, &id, sizeof(id));
    return key;
}

/* A pointer to id's key that lives as long as the next call. */
static inline const struct coll_async_key *test_key_of(uint32_t id)
{
    static struct coll_async_key key;

    key = test_key(id);
    return &key;
}

#endif /* COLL_ASYNC_TEST_KEYS_H */
