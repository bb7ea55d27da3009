/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The leaders' tests' blocks of differing sizes (test_internode.c runs them,
 * test_internode_plans.c pairs their plans): one of them empty when there are
 * several.
 */

#ifndef TEST_INTERNODE_BLOCKS_H
#define TEST_INTERNODE_BLOCKS_H

#include <stddef.h>

static inline size_t block_size(int index, size_t base)
{
    return 1 == index ? 0 : base + (size_t) index * 37;
}

#endif
