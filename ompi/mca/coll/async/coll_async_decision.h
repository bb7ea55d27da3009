/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the decision layer, the one place that chooses how a collective runs.
 *
 * Per family one row of a table (coll_async_decision.c) owns: whether the family
 * runs natively on a communicator or is delegated to the module below, whether it
 * runs hierarchically across nodes, the algorithms its parameter
 * coll_async_<family>_algorithm accepts (the MCA enum is generated from the row),
 * which shared-memory schedule runs inside a node for a size, which leaders'
 * algorithm runs between nodes for a size and a number of nodes, and every
 * threshold those choices use. The glue, the families' begin functions, the
 * hierarchical runs and the leaders' algorithms ask it instead of deciding.
 *
 * Pure C, no Open MPI header: the unit tests pin its answers (test_decision.c).
 */

#ifndef MCA_COLL_ASYNC_DECISION_H
#define MCA_COLL_ASYNC_DECISION_H

#include <stdbool.h>
#include <stddef.h>

#include "coll_async_collectives.h"

/* What coll_async_<family>_algorithm may name: the two choices every family has,
 * the leaders' algorithms between nodes, then the shared-memory schedules inside
 * a node. The values are the MCA enum's. */
enum coll_async_alg {
    COLL_ASYNC_ALG_AUTO,               /* the table chooses per call */
    COLL_ASYNC_ALG_DELEGATE,           /* always the coll module selected below this one */
    COLL_ASYNC_ALG_RING,               /* allreduce: reduce-scatter + allgather; allgather */
    COLL_ASYNC_ALG_RECURSIVE_DOUBLING, /* allreduce, allgather */
    COLL_ASYNC_ALG_RABENSEIFNER,       /* allreduce: halving reduce-scatter + doubling allgather */
    COLL_ASYNC_ALG_BINOMIAL,           /* bcast, reduce */
    COLL_ASYNC_ALG_SCATTER_ALLGATHER,  /* bcast: binomial scatter + ring allgather */
    COLL_ASYNC_ALG_DISSEMINATION,      /* barrier */
    COLL_ASYNC_ALG_MULTICAST,          /* bcast: a UD multicast group (coll_async_multicast.h) */
    COLL_ASYNC_ALG_PAIRWISE,           /* alltoall: node aggregates, one peer per round */
    COLL_ASYNC_ALG_SINGLE_COPY,        /* in a node: from the peers' own buffers (CMA) */
    COLL_ASYNC_ALG_STAGED,             /* in a node: slot-sized chunks through the slots */
    COLL_ASYNC_ALG_ROOTED_CHUNKS,      /* in a node, reduce: the others hand chunks to the root */
    COLL_ASYNC_ALG_NUMA,               /* in a node: rank -> NUMA leader -> node and back */
    COLL_ASYNC_ALG_FLAT,               /* in a node: every rank on the node's one channel */
    COLL_ASYNC_NUM_ALGS
};

extern const char *const coll_async_alg_names[COLL_ASYNC_NUM_ALGS];

/* Whether coll_async_<family>_algorithm accepts alg. */
bool coll_async_decision_accepts(enum coll_async_family family, enum coll_async_alg alg);

/* The algorithm text names for family, as its parameter reads it (a name in any
 * case, or the number ompi_info shows beside it), or -1 where the parameter
 * would refuse it. */
int coll_async_decision_parse(enum coll_async_family family, const char *text);

/* "auto, delegate, ring, ...": the values family's parameter accepts. */
void coll_async_decision_values(enum coll_async_family family, char *buf, size_t len);

/* Whether alg names an algorithm between nodes (not auto, not delegate). */
static inline bool coll_async_decision_between_nodes(enum coll_async_alg alg)
{
    return alg > COLL_ASYNC_ALG_DELEGATE && alg < COLL_ASYNC_ALG_SINGLE_COPY;
}

/* Whether alg names a shared-memory schedule inside a node (or, numa and flat,
 * whether a node's ranks go through their NUMA domains' leaders). */
static inline bool coll_async_decision_in_node(enum coll_async_alg alg)
{
    return alg >= COLL_ASYNC_ALG_SINGLE_COPY && alg < COLL_ASYNC_NUM_ALGS;
}

/* Whether alg names the NUMA staging inside a node, on or off (numa, flat). */
static inline bool coll_async_decision_numa_name(enum coll_async_alg alg)
{
    return COLL_ASYNC_ALG_NUMA == alg || COLL_ASYNC_ALG_FLAT == alg;
}

/* Whether alg names one shared-memory schedule (single_copy, staged, ...). */
static inline bool coll_async_decision_schedule_name(enum coll_async_alg alg)
{
    return coll_async_decision_in_node(alg) && !coll_async_decision_numa_name(alg);
}

/* What the parameter at alg asks of the leaders between nodes: a schedule named
 * for inside the nodes leaves them to AUTO. */
static inline enum coll_async_alg coll_async_decision_leaders(enum coll_async_alg alg)
{
    return coll_async_decision_in_node(alg) ? COLL_ASYNC_ALG_AUTO : alg;
}

/* Native or delegated */

/* Whether family runs hierarchically on a communicator that spans nodes. */
bool coll_async_decision_hierarchical(enum coll_async_family family);

/* Whether a gather, scatter or alltoall (the non-v forms) of block bytes per rank among
 * ranks ranks on nodes nodes, its parameter at alg, is aggregated by node
 * (coll_async_hier.h) rather than one transfer per pair of ranks over the
 * mapper: binomial forces it at every size. Every other family is hierarchical
 * or not as coll_async_decision_hierarchical() says. */
bool coll_async_decision_aggregated(enum coll_async_family family, enum coll_async_alg alg,
                                    size_t block, int ranks, int nodes);

/* The communicator as the decision sees it. */
struct coll_async_decision_comm {
    int size;          /* ranks */
    bool has_channel;  /* all on one node, their shared memory open */
    bool spans_nodes;  /* its hierarchy is open */
    bool has_network;  /* the mapper reaches every rank of the job */
    bool intercomm;    /* an intercommunicator, the mapper reaching its remote group */
};

/* Whether MPI defines family on an intercommunicator: the others never reach
 * the component there (Open MPI's bindings refuse them). */
bool coll_async_decision_on_intercomm(enum coll_async_family family);

/* Whether family, its parameter at alg, runs natively on comm. */
bool coll_async_decision_native(enum coll_async_family family, enum coll_async_alg alg,
                                const struct coll_async_decision_comm *comm);

/* Whether a communicator has a family to run natively under algs (one per
 * family): if not, it needs no channel. Every family runs natively on one node
 * and across nodes (hierarchically, or as an exchange over the mapper). */
bool coll_async_decision_wanted(const enum coll_async_alg algs[COLL_ASYNC_NUM_FAMILIES]);

/* A forced algorithm that cannot run on a communicator of `nodes` nodes, and what
 * runs instead (AUTO: the table's choice): false when alg runs as asked. */
bool coll_async_decision_fallback(enum coll_async_family family, enum coll_async_alg alg,
                                  int nodes, enum coll_async_alg *instead);

/* Inside a node: NUMA stages */

/* Whether family, its parameter at alg, runs on a communicator of one node whose
 * ranks are in `domains` NUMA domains as stages: inside each domain, between
 * the domains' leaders, inside each domain again. auto and numa do from 2
 * domains on; flat, or a shared-memory schedule named, runs on the node's one
 * channel. */
bool coll_async_decision_numa(enum coll_async_family family, enum coll_async_alg alg,
                              int domains);

/* Whether some family would run in NUMA stages under algs (one per family). */
bool coll_async_decision_numa_wanted(const enum coll_async_alg algs[COLL_ASYNC_NUM_FAMILIES]);

/* Inside a node: the shared-memory schedules */

/* How small reductions combine the ranks' contributions (docs/architecture.md). */
enum coll_async_reduce_mode {
    COLL_ASYNC_REDUCE_AUTO,   /* chosen by size and ranks per node */
    COLL_ASYNC_REDUCE_EACH,   /* every rank reduces all slots */
    COLL_ASYNC_REDUCE_ROOT,   /* one rank polls the arrivals, reduces, publishes */
    COLL_ASYNC_REDUCE_LOCK,   /* senders reduce into a shared accumulator, locked */
    COLL_ASYNC_REDUCE_ATOMIC, /* senders reduce into it with atomics */
    COLL_ASYNC_NUM_REDUCE_MODES
};

extern const char *const coll_async_reduce_mode_names[COLL_ASYNC_NUM_REDUCE_MODES];

enum coll_async_shm_schedule {
    COLL_ASYNC_SHM_SMALL_EACH,    /* small reductions, by reduce mode */
    COLL_ASYNC_SHM_SMALL_ROOT,
    COLL_ASYNC_SHM_SMALL_LOCK,
    COLL_ASYNC_SHM_SMALL_ATOMIC,
    COLL_ASYNC_SHM_SINGLE_COPY,   /* from the peers' own buffers (CMA) */
    COLL_ASYNC_SHM_STAGED,        /* slot-sized chunks through the slots */
    COLL_ASYNC_SHM_ROOTED_CHUNKS, /* reduce: the others hand their chunks to the root */
    COLL_ASYNC_SHM_FLAGS,         /* barrier: the control lines alone */
    COLL_ASYNC_NUM_SHM_SCHEDULES
};

extern const char *const coll_async_shm_schedule_names[COLL_ASYNC_NUM_SHM_SCHEDULES];

/* What a node's channel and the parameters offer a schedule. */
struct coll_async_decision_shm {
    int nranks;                /* on the channel */
    size_t slot_size;
    bool single_copy;          /* the channel reads the peers' buffers (CMA) */
    enum coll_async_reduce_mode reduce_mode;
    size_t small_reduce_bytes; /* reductions up to this size use the small modes */
    bool has_atomic;           /* the reduction has an atomic kernel */
    enum coll_async_alg forced; /* the family's parameter (AUTO: the table chooses) */
};

/* The schedule forced by family's parameter at alg that runs on a channel that
 * does (single_copy) or does not read the peers' buffers: alg, or AUTO where alg
 * names none (auto, delegate, between nodes) or one that cannot run there. */
enum coll_async_alg coll_async_decision_shm_forced(enum coll_async_family family,
                                                   enum coll_async_alg alg, bool single_copy);

/* Whether alg forces a schedule inside a node that cannot run on such a channel
 * (single_copy without CMA): the table chooses instead. */
bool coll_async_decision_shm_fallback(enum coll_async_family family, enum coll_async_alg alg,
                                      bool single_copy);

/* The schedule of family (allreduce, reduce, bcast, allgather, barrier) for bytes
 * (allgather: one rank's block); root < 0 for the families without one. A schedule
 * forced (shm->forced) runs at every size where it can run at all: each moves any
 * number of bytes, the small reductions' slot-sized one included. */
enum coll_async_shm_schedule coll_async_decision_shm(enum coll_async_family family, size_t bytes,
                                                     int root,
                                                     const struct coll_async_decision_shm *shm);

/* Whether a reduce of bytes streams its inputs into the slots past the cache
 * (from stream_bytes on, 0: never). */
bool coll_async_decision_reduce_streams(size_t bytes, size_t stream_bytes);

/* Between nodes: the leaders' algorithms */

/* The algorithm of family among n leaders (nodes) for bytes, count elements
 * (reductions; else count is ignored), its parameter at forced: AUTO's choice,
 * or forced where the group can run it. */
enum coll_async_alg coll_async_decision_between(enum coll_async_family family,
                                                enum coll_async_alg forced, size_t bytes,
                                                size_t count, int n);

/* What coll_async_decision_between() chooses for n leaders, in words (snprintf's
 * contract): "recursive_doubling up to 16384 B, then ring". */
int coll_async_decision_describe(enum coll_async_family family, enum coll_async_alg forced, int n,
                                 char *buf, size_t len);

/* allreduce: how many leaders per node split bytes (from multi_leader_bytes on, all
 * slots of them). */
int coll_async_decision_leader_parts(size_t bytes, size_t multi_leader_bytes, int slots);

/* bcast: the smallest size sent over the leaders' multicast group (SIZE_MAX: none),
 * from the parameter's alg, the node count, auto's thresholds (its node band,
 * max_nodes 0 for none, and its smallest size), and whether every leader has
 * verbs. */
size_t coll_async_decision_multicast_from(enum coll_async_alg alg, int nodes, int min_nodes,
                                          int max_nodes, size_t min_bytes,
                                          bool leaders_have_verbs);

#endif /* MCA_COLL_ASYNC_DECISION_H */
