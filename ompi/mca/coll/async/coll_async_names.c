/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the names of the collectives and of their paths, as parameters,
 * counters and messages spell them.
 */

#include "ompi_config.h"

#include "coll_async.h"

const char *const mca_coll_async_coll_names[COLL_ASYNC_NUM_COLLS] = {
#define COLL_NAME(U, l) [COLL_ASYNC_##U] = #l, [COLL_ASYNC_I##U] = "i" #l, \
                        [COLL_ASYNC_##U##_INIT] = #l "_init",
    COLL_ASYNC_FAMILIES(COLL_NAME)
#undef COLL_NAME
};

const char *const mca_coll_async_path_names[COLL_ASYNC_NUM_PATHS] = {
    [COLL_ASYNC_PATH_DELEGATED] = "delegated",
    [COLL_ASYNC_PATH_NATIVE] = "native",
};
