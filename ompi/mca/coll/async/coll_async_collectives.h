/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the list of collectives the component provides.
 *
 * Every per-collective table in the component (counters, algorithm parameters,
 * paths, the functions installed in the module) is generated from this one list,
 * so adding a collective is one line here plus its entry points.
 *
 * A "family" is a collective in its three forms, blocking, nonblocking and
 * persistent (MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init): they share an
 * algorithm parameter, but each form has its own path and counters.
 */

#ifndef MCA_COLL_ASYNC_COLLECTIVES_H
#define MCA_COLL_ASYNC_COLLECTIVES_H

/* X(UPPER, lower): one entry per family, in the coll framework's order. */
#define COLL_ASYNC_FAMILIES(X)                          \
    X(ALLGATHER, allgather)                             \
    X(ALLGATHERV, allgatherv)                           \
    X(ALLREDUCE, allreduce)                             \
    X(ALLTOALL, alltoall)                               \
    X(ALLTOALLV, alltoallv)                             \
    X(ALLTOALLW, alltoallw)                             \
    X(BARRIER, barrier)                                 \
    X(BCAST, bcast)                                     \
    X(EXSCAN, exscan)                                   \
    X(GATHER, gather)                                   \
    X(GATHERV, gatherv)                                 \
    X(REDUCE, reduce)                                   \
    X(REDUCE_SCATTER_BLOCK, reduce_scatter_block)       \
    X(REDUCE_SCATTER, reduce_scatter)                   \
    X(SCAN, scan)                                       \
    X(SCATTER, scatter)                                 \
    X(SCATTERV, scatterv)                               \
    X(NEIGHBOR_ALLGATHER, neighbor_allgather)           \
    X(NEIGHBOR_ALLGATHERV, neighbor_allgatherv)         \
    X(NEIGHBOR_ALLTOALL, neighbor_alltoall)             \
    X(NEIGHBOR_ALLTOALLV, neighbor_alltoallv)           \
    X(NEIGHBOR_ALLTOALLW, neighbor_alltoallw)

enum coll_async_family {
#define COLL_ASYNC_FAMILY_ENUM(U, l) COLL_ASYNC_FAMILY_##U,
    COLL_ASYNC_FAMILIES(COLL_ASYNC_FAMILY_ENUM)
#undef COLL_ASYNC_FAMILY_ENUM
    COLL_ASYNC_NUM_FAMILIES
};

enum coll_async_form {
    COLL_ASYNC_BLOCKING,
    COLL_ASYNC_NONBLOCKING,
    COLL_ASYNC_PERSISTENT,
    COLL_ASYNC_NUM_FORMS
};

/* Collective = 3 * family + form: COLL_ASYNC_ALLREDUCE, COLL_ASYNC_IALLREDUCE,
 * COLL_ASYNC_ALLREDUCE_INIT. */
enum coll_async_coll {
#define COLL_ASYNC_COLL_ENUM(U, l) COLL_ASYNC_##U, COLL_ASYNC_I##U, COLL_ASYNC_##U##_INIT,
    COLL_ASYNC_FAMILIES(COLL_ASYNC_COLL_ENUM)
#undef COLL_ASYNC_COLL_ENUM
    COLL_ASYNC_NUM_COLLS
};

static inline enum coll_async_family coll_async_family_of(enum coll_async_coll coll)
{
    return (enum coll_async_family) (coll / COLL_ASYNC_NUM_FORMS);
}

static inline enum coll_async_form coll_async_form_of(enum coll_async_coll coll)
{
    return (enum coll_async_form) (coll % COLL_ASYNC_NUM_FORMS);
}

/* "allreduce", "iallreduce", "allreduce_init", ...: the names used in parameters,
 * counters and output. */
extern const char *const mca_coll_async_coll_names[COLL_ASYNC_NUM_COLLS];

static inline const char *coll_async_family_name(enum coll_async_family family)
{
    return mca_coll_async_coll_names[COLL_ASYNC_NUM_FORMS * family];
}

#endif /* MCA_COLL_ASYNC_COLLECTIVES_H */
