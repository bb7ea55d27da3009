/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the decision table, one row per family. See coll_async_decision.h.
 *
 * One file with a row per family rather than a file per family (as tuned's
 * coll_tuned_decision_*.c): the families share one shape (a few algorithms, a
 * size threshold or two), the whole table fits on a screen, and the MCA enums,
 * the verbose lines and the unit test read it in one place.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "coll_async_decision.h"

const char *const coll_async_alg_names[COLL_ASYNC_NUM_ALGS] = {
    [COLL_ASYNC_ALG_AUTO] = "auto",
    [COLL_ASYNC_ALG_DELEGATE] = "delegate",
    [COLL_ASYNC_ALG_RING] = "ring",
    [COLL_ASYNC_ALG_RECURSIVE_DOUBLING] = "recursive_doubling",
    [COLL_ASYNC_ALG_RABENSEIFNER] = "rabenseifner",
    [COLL_ASYNC_ALG_BINOMIAL] = "binomial",
    [COLL_ASYNC_ALG_SCATTER_ALLGATHER] = "scatter_allgather",
    [COLL_ASYNC_ALG_DISSEMINATION] = "dissemination",
    [COLL_ASYNC_ALG_MULTICAST] = "multicast",
    [COLL_ASYNC_ALG_PAIRWISE] = "pairwise",
    [COLL_ASYNC_ALG_SINGLE_COPY] = "single_copy",
    [COLL_ASYNC_ALG_STAGED] = "staged",
    [COLL_ASYNC_ALG_ROOTED_CHUNKS] = "rooted_chunks",
    [COLL_ASYNC_ALG_NUMA] = "numa",
    [COLL_ASYNC_ALG_FLAT] = "flat",
};

const char *const coll_async_reduce_mode_names[COLL_ASYNC_NUM_REDUCE_MODES] = {
    "auto", "each", "root", "lock", "atomic"};

const char *const coll_async_shm_schedule_names[COLL_ASYNC_NUM_SHM_SCHEDULES] = {
    "small_each", "small_root", "small_lock", "small_atomic", "single_copy", "staged",
    "rooted_chunks", "flags"};

/* The thresholds. Between nodes: AUTO's choices, measured with bench/compare -V
 * over loopback (docs/performance.md). */
#define SMALL_ALLREDUCE_BYTES (16 * 1024)
#define SMALL_BCAST_BYTES (128 * 1024)
#define SMALL_ALLGATHER_BYTES (64 * 1024)
/* ... or up to this much per node: recursive doubling's log2 n latencies against
 * ring's n - 1 (bench/simulate: ring cost 3-125 times as much with blocks of 64 B
 * to 4 KiB at 64-4096 nodes); the same as the whole at the 4 nodes measured. */
#define SMALL_ALLGATHER_BLOCK (16 * 1024)
/* Between nodes at scale, from bench/simulate (docs/performance.md): about one message's
 * latency in bytes on 100 Gb/s InfiniBand (1 us at 12.5 GB/s), set a little
 * below it where the simulator's crossovers fell (the reductions and the fold
 * move more than the latencies' count says). An algorithm with
 * about n more latencies than its rival (ring's 2 (n - 1) rounds against
 * Rabenseifner's 2 log2 n and its fold; scatter-allgather's ring of n - 1 against
 * binomial's log2 n whole messages) pays for them only from a size that grows
 * with n: below it, at 100-4096 nodes, it cost 2-54 times its rival. */
#define LATENCY_BYTES (10 * 1024)
/* A gather or scatter aggregated by node (auto), from bench/simulate's LogGP
 * defaults for InfiniBand (L 0.6 us, o 0.2 us, G 0.08 ns/B; docs/performance.md): up to a few
 * times o / G per rank, where a message's overhead still counts (larger blocks
 * are bandwidth-bound, and the aggregation only adds copies), and where the
 * root's transfers with other nodes that it saves (an o each) pay for its
 * ceil(log2 nodes) latencies between nodes (L + 2o each, 5 o) and the node's
 * stage (about 5 o more). Over loopback TCP between 2 and 4 virtual nodes of 8
 * ranks (docs/performance.md) it did not pay: the flat exchange stays there. */
#define AGGREGATED_BLOCK (4 * 1024)
#define AGGREGATED_OVERHEADS_PER_LATENCY 5
/* allgatherv and reduce_scatter(_block) by node (auto), up to this many bytes per
 * rank on average: measured 1.1-7x faster than the flat exchange up to 4 KiB between
 * 2 and 4 virtual nodes of 8 ranks, as fast or up to 2x slower at 32 KiB, up to
 * 3.5x slower from 256 KiB on 4 nodes (docs/performance.md): the leaders carry every block (and
 * reduce_scatter's leaders the whole vector) where the flat exchange spreads
 * them over every rank. */
#define BY_NODE_BLOCK (4 * 1024)
/* An alltoall aggregated by node (auto), with 2 or more ranks per node: up to
 * ALLTOALL_MEASURED_BLOCK, where it measured 1.6-6x faster than the flat exchange
 * over loopback between 2 and 4 virtual nodes of 8 ranks (slower from 512 B;
 * docs/performance.md); up to ALLTOALL_AGGREGATED_BLOCK where the same model says so: per node
 * the R (n - R) transfers out that it saves (an o each) against the leaders'
 * nodes - 1 node-pair aggregates (5 o each) and the leader's four copies of R n
 * blocks (at 0.1 ns/B, o is 2000 B of copying). */
#define ALLTOALL_MEASURED_BLOCK 256
#define ALLTOALL_AGGREGATED_BLOCK 1024
#define COPY_BYTES_PER_OVERHEAD 2000
/* Inside a node: an allreduce of 2 ranks with one rank reducing and publishing
 * measured 1.2-1.4 times faster than both reducing from 512 B (alike below). */
#define TWO_RANK_ROOT_FROM 512
/* A reduce's inputs stream into the slots up to this size: above it, through the
 * caches measured faster at 2 ranks, 1.05-1.13 times from 128 to 512 KiB on 4.1.4
 * and 5.0.7 (bench/compare -C reduce with coll_async_shm_stream_bytes 0 beside),
 * 1.3-1.6 times from 1 to 4 MiB; below, alike or streaming slightly faster. */
#define REDUCE_STREAM_MAX (64 * 1024)

#define ALG(name) (1u << COLL_ASYNC_ALG_##name)
#define NONE COLL_ASYNC_ALG_AUTO

/*
 * A family's row. Between nodes, AUTO takes `small` for groups of at most
 * few_leaders, up to small_bytes or small_block per leader, or (per_element) with
 * fewer elements than leaders; `large` above, `large_uneven` on a group whose size is not a power of
 * two. An algorithm in power_of_two_only (forced or not) gives way to `uneven`
 * on such a group. Inside a node, in_node is what the parameter may force: a
 * reduce's chunks through the slots go to its root alone (rooted_chunks), as the
 * all-ranks schedule (staged) writes a result on every rank.
 */
struct row {
    bool hierarchical;
    bool over_mapper; /* always between pairs of ranks over the mapper (neighbourhoods) */
    unsigned algs;    /* between nodes, what the parameter may force */
    unsigned in_node; /* inside a node, likewise */
    bool numa;        /* runs in NUMA stages inside a node (numa and flat accepted) */
    enum coll_async_alg small, large, large_uneven, uneven;
    /* latency_bound (chosen as large or large_uneven) gives way to `rival` below
     * latency_paid_from() (NONE: never). */
    enum coll_async_alg latency_bound, rival;
    size_t small_bytes;
    size_t small_block; /* or up to this many bytes per leader (0: no such rule) */
    int few_leaders;
    bool per_element;
    size_t aggregated_up_to; /* gather, scatter, alltoall, allgatherv, reduce_scatter(_block):
                              * hierarchical up to this block (auto) */
    unsigned power_of_two_only;
};

/* The leaders' choices of allreduce, which reduce_scatter(_block) by node shares
 * (ring standing also for the leaders' ring reduce_scatter), and of allgather,
 * which allgatherv by node shares. */
#define ALLREDUCE_BETWEEN_NODES                                                          \
    .algs = ALG(RING) | ALG(RECURSIVE_DOUBLING) | ALG(RABENSEIFNER),                     \
    .small = COLL_ASYNC_ALG_RECURSIVE_DOUBLING, .large = COLL_ASYNC_ALG_RABENSEIFNER,    \
    .large_uneven = COLL_ASYNC_ALG_RING, .latency_bound = COLL_ASYNC_ALG_RING,           \
    .rival = COLL_ASYNC_ALG_RABENSEIFNER, .small_bytes = SMALL_ALLREDUCE_BYTES,          \
    .per_element = true
#define ALLGATHER_BETWEEN_NODES                                                          \
    .algs = ALG(RING) | ALG(RECURSIVE_DOUBLING), .small = COLL_ASYNC_ALG_RECURSIVE_DOUBLING, \
    .large = COLL_ASYNC_ALG_RING, .large_uneven = COLL_ASYNC_ALG_RING,                   \
    .uneven = COLL_ASYNC_ALG_RING, .small_bytes = SMALL_ALLGATHER_BYTES,                 \
    .small_block = SMALL_ALLGATHER_BLOCK, .power_of_two_only = ALG(RECURSIVE_DOUBLING)

static const struct row table[COLL_ASYNC_NUM_FAMILIES] = {
    [COLL_ASYNC_FAMILY_ALLREDUCE] = {.hierarchical = true,
                                     .numa = true,
                                     .in_node = ALG(SINGLE_COPY) | ALG(STAGED),
                                     ALLREDUCE_BETWEEN_NODES},
    [COLL_ASYNC_FAMILY_BCAST] = {.hierarchical = true,
                                 .numa = true,
                                 .algs = ALG(BINOMIAL) | ALG(SCATTER_ALLGATHER) | ALG(MULTICAST),
                                 .in_node = ALG(SINGLE_COPY) | ALG(STAGED),
                                 .small = COLL_ASYNC_ALG_BINOMIAL,
                                 .large = COLL_ASYNC_ALG_SCATTER_ALLGATHER,
                                 .large_uneven = COLL_ASYNC_ALG_SCATTER_ALLGATHER,
                                 .latency_bound = COLL_ASYNC_ALG_SCATTER_ALLGATHER,
                                 .rival = COLL_ASYNC_ALG_BINOMIAL,
                                 .small_bytes = SMALL_BCAST_BYTES,
                                 .few_leaders = 2},
    [COLL_ASYNC_FAMILY_ALLGATHER] = {.hierarchical = true,
                                     .numa = true,
                                     .in_node = ALG(SINGLE_COPY) | ALG(STAGED),
                                     ALLGATHER_BETWEEN_NODES},
    [COLL_ASYNC_FAMILY_REDUCE] = {.hierarchical = true,
                                  .numa = true,
                                  .algs = ALG(BINOMIAL),
                                  .in_node = ALG(SINGLE_COPY) | ALG(ROOTED_CHUNKS),
                                  .small = COLL_ASYNC_ALG_BINOMIAL,
                                  .large = COLL_ASYNC_ALG_BINOMIAL,
                                  .large_uneven = COLL_ASYNC_ALG_BINOMIAL},
    [COLL_ASYNC_FAMILY_BARRIER] = {.hierarchical = true,
                                   .numa = true,
                                   .algs = ALG(DISSEMINATION),
                                   .small = COLL_ASYNC_ALG_DISSEMINATION,
                                   .large = COLL_ASYNC_ALG_DISSEMINATION,
                                   .large_uneven = COLL_ASYNC_ALG_DISSEMINATION},
    /* Aggregated by node for small blocks (coll_async_decision_aggregated()),
     * else the exchange over the mapper. */
    [COLL_ASYNC_FAMILY_GATHER] = {.hierarchical = true,
                                  .algs = ALG(BINOMIAL),
                                  .small = COLL_ASYNC_ALG_BINOMIAL,
                                  .large = COLL_ASYNC_ALG_BINOMIAL,
                                  .large_uneven = COLL_ASYNC_ALG_BINOMIAL,
                                  .aggregated_up_to = AGGREGATED_BLOCK},
    [COLL_ASYNC_FAMILY_SCATTER] = {.hierarchical = true,
                                   .algs = ALG(BINOMIAL),
                                   .small = COLL_ASYNC_ALG_BINOMIAL,
                                   .large = COLL_ASYNC_ALG_BINOMIAL,
                                   .large_uneven = COLL_ASYNC_ALG_BINOMIAL,
                                   .aggregated_up_to = AGGREGATED_BLOCK},
    [COLL_ASYNC_FAMILY_ALLTOALL] = {.hierarchical = true,
                                    .algs = ALG(PAIRWISE),
                                    .small = COLL_ASYNC_ALG_PAIRWISE,
                                    .large = COLL_ASYNC_ALG_PAIRWISE,
                                    .large_uneven = COLL_ASYNC_ALG_PAIRWISE,
                                    .aggregated_up_to = ALLTOALL_AGGREGATED_BLOCK},
    /* By node (coll_async_hier_v.c): allgatherv through the leaders' allgather of
     * node-sized blocks, reduce_scatter through the leaders' ring reduce_scatter
     * (where each node's ranks are consecutive) or allreduce; their names force it
     * and pick the leaders' algorithm. */
    [COLL_ASYNC_FAMILY_ALLGATHERV] = {.hierarchical = true,
                                      ALLGATHER_BETWEEN_NODES,
                                      .aggregated_up_to = BY_NODE_BLOCK},
    [COLL_ASYNC_FAMILY_REDUCE_SCATTER] = {.hierarchical = true,
                                          ALLREDUCE_BETWEEN_NODES,
                                          .aggregated_up_to = BY_NODE_BLOCK},
    [COLL_ASYNC_FAMILY_REDUCE_SCATTER_BLOCK] = {.hierarchical = true,
                                                ALLREDUCE_BETWEEN_NODES,
                                                .aggregated_up_to = BY_NODE_BLOCK},
    /* In node order where each node's ranks are consecutive and a kernel folds
     * (coll_async_hier_scan.c): always, against the flat exchange's n (n - 1) / 2
     * transfers. */
    [COLL_ASYNC_FAMILY_SCAN] = {.hierarchical = true},
    [COLL_ASYNC_FAMILY_EXSCAN] = {.hierarchical = true},
    [COLL_ASYNC_FAMILY_NEIGHBOR_ALLGATHER] = {.over_mapper = true},
    [COLL_ASYNC_FAMILY_NEIGHBOR_ALLGATHERV] = {.over_mapper = true},
    [COLL_ASYNC_FAMILY_NEIGHBOR_ALLTOALL] = {.over_mapper = true},
    [COLL_ASYNC_FAMILY_NEIGHBOR_ALLTOALLV] = {.over_mapper = true},
    [COLL_ASYNC_FAMILY_NEIGHBOR_ALLTOALLW] = {.over_mapper = true},
    /* Every other family: an exchange across nodes, auto or delegate. */
};

bool coll_async_decision_accepts(enum coll_async_family family, enum coll_async_alg alg)
{
    return COLL_ASYNC_ALG_AUTO == alg || COLL_ASYNC_ALG_DELEGATE == alg
           || (alg < COLL_ASYNC_NUM_ALGS
               && ((table[family].algs | table[family].in_node) & (1u << alg)))
           || (table[family].numa && coll_async_decision_numa_name(alg));
}

int coll_async_decision_parse(enum coll_async_family family, const char *text)
{
    int alg = -1;
    char *end;
    long number;

    if (NULL == text) {
        return -1;
    }
    for (int i = 0; i < COLL_ASYNC_NUM_ALGS && alg < 0; ++i) {
        alg = 0 == strcasecmp(text, coll_async_alg_names[i]) ? i : -1;
    }
    number = strtol(text, &end, 10);
    if (alg < 0 && end != text && '\0' == *end && number >= 0 && number < COLL_ASYNC_NUM_ALGS) {
        alg = (int) number;
    }
    return alg >= 0 && coll_async_decision_accepts(family, alg) ? alg : -1;
}

void coll_async_decision_values(enum coll_async_family family, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int alg = 0; alg < COLL_ASYNC_NUM_ALGS && used < len; ++alg) {
        if (coll_async_decision_accepts(family, alg)) {
            used += (size_t) snprintf(buf + used, len - used, "%s%s", 0 == used ? "" : ", ",
                                      coll_async_alg_names[alg]);
        }
    }
}

/* Native or delegated */

bool coll_async_decision_hierarchical(enum coll_async_family family)
{
    return table[family].hierarchical;
}

static int floor_log2(int n)
{
    int k = 0;

    while ((2 << k) <= n) {
        ++k;
    }
    return k;
}

static int ceil_log2(int n)
{
    int k = floor_log2(n);

    return k + (n > (1 << k));
}

bool coll_async_decision_aggregated(enum coll_async_family family, enum coll_async_alg alg,
                                    size_t block, int ranks, int nodes)
{
    const struct row *row = &table[family];
    int elsewhere = nodes > 0 ? ranks - ranks / nodes : 0; /* about, off the root's node */

    if (0 == row->aggregated_up_to) {
        return row->hierarchical;
    }
    if (0 == block || nodes < 2) {
        return false;
    }
    if (row->algs & (1u << alg)) {
        return true;
    }
    if (COLL_ASYNC_FAMILY_ALLTOALL == family) {
        long long r = ranks / nodes, saved = r * (ranks - r) - 5LL * (nodes - 1);

        return r >= 2
               && (block <= ALLTOALL_MEASURED_BLOCK
                   || (block <= row->aggregated_up_to && saved > 0
                       && (unsigned long long) saved * COPY_BYTES_PER_OVERHEAD
                              > 4ULL * (unsigned long long) (r * ranks) * block));
    }
    if (COLL_ASYNC_FAMILY_ALLGATHERV == family || COLL_ASYNC_FAMILY_REDUCE_SCATTER == family
        || COLL_ASYNC_FAMILY_REDUCE_SCATTER_BLOCK == family) {
        return block <= row->aggregated_up_to;
    }
    return block <= row->aggregated_up_to
           && elsewhere > AGGREGATED_OVERHEADS_PER_LATENCY * (ceil_log2(nodes) + 1);
}

/* Single process: every collective is a local copy. Several on one node: every
 * collective, once the channel is open. Across nodes: the hierarchical ones. */
bool coll_async_decision_native(enum coll_async_family family, enum coll_async_alg alg,
                                const struct coll_async_decision_comm *comm)
{
    if (COLL_ASYNC_ALG_DELEGATE == alg) {
        return false;
    }
    if (comm->intercomm) {
        return coll_async_decision_on_intercomm(family) && comm->has_network;
    }
    if (table[family].over_mapper) {
        return 1 == comm->size || comm->spans_nodes || comm->has_network;
    }
    return 1 == comm->size || comm->has_channel || comm->spans_nodes;
}

bool coll_async_decision_on_intercomm(enum coll_async_family family)
{
    switch (family) {
    case COLL_ASYNC_FAMILY_SCAN:
    case COLL_ASYNC_FAMILY_EXSCAN:
        return false;
    default:
        return !table[family].over_mapper; /* no neighbourhoods either */
    }
}

bool coll_async_decision_wanted(const enum coll_async_alg algs[COLL_ASYNC_NUM_FAMILIES])
{
    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES; ++family) {
        if (COLL_ASYNC_ALG_DELEGATE != algs[family]) {
            return true;
        }
    }
    return false;
}

static bool power_of_two(int n)
{
    return 0 == (n & (n - 1));
}

bool coll_async_decision_fallback(enum coll_async_family family, enum coll_async_alg alg,
                                  int nodes, enum coll_async_alg *instead)
{
    if (!coll_async_decision_between_nodes(alg)) {
        return false;
    }
    if (nodes < 2) {
        *instead = COLL_ASYNC_ALG_AUTO;
        return true;
    }
    if (!power_of_two(nodes) && (table[family].power_of_two_only & (1u << alg))) {
        *instead = table[family].uneven;
        return true;
    }
    return false;
}

/* Inside a node: NUMA stages */

bool coll_async_decision_numa(enum coll_async_family family, enum coll_async_alg alg,
                              int domains)
{
    return table[family].numa && domains >= 2
           && (COLL_ASYNC_ALG_AUTO == alg || COLL_ASYNC_ALG_NUMA == alg);
}

bool coll_async_decision_numa_wanted(const enum coll_async_alg algs[COLL_ASYNC_NUM_FAMILIES])
{
    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES; ++family) {
        if (coll_async_decision_numa(family, algs[family], 2)) {
            return true;
        }
    }
    return false;
}

/* Inside a node */

enum coll_async_alg coll_async_decision_shm_forced(enum coll_async_family family,
                                                   enum coll_async_alg alg, bool single_copy)
{
    if (!coll_async_decision_in_node(alg) || !(table[family].in_node & (1u << alg))
        || (COLL_ASYNC_ALG_SINGLE_COPY == alg && !single_copy)) {
        return COLL_ASYNC_ALG_AUTO;
    }
    return alg;
}

bool coll_async_decision_shm_fallback(enum coll_async_family family, enum coll_async_alg alg,
                                      bool single_copy)
{
    return coll_async_decision_in_node(alg) && (table[family].in_node & (1u << alg))
           && COLL_ASYNC_ALG_AUTO == coll_async_decision_shm_forced(family, alg, single_copy);
}

static enum coll_async_shm_schedule small_mode(size_t bytes, int root,
                                               const struct coll_async_decision_shm *shm)
{
    enum coll_async_reduce_mode mode = shm->reduce_mode;

    if (COLL_ASYNC_REDUCE_AUTO == mode) {
        mode = root >= 0 || (2 == shm->nranks && bytes >= TWO_RANK_ROOT_FROM)
                   ? COLL_ASYNC_REDUCE_ROOT
                   : COLL_ASYNC_REDUCE_EACH;
    }
    if (COLL_ASYNC_REDUCE_ATOMIC == mode && !shm->has_atomic) {
        mode = COLL_ASYNC_REDUCE_LOCK; /* no atomic form for this type and op */
    }
    switch (mode) {
    case COLL_ASYNC_REDUCE_ROOT: return COLL_ASYNC_SHM_SMALL_ROOT;
    case COLL_ASYNC_REDUCE_LOCK: return COLL_ASYNC_SHM_SMALL_LOCK;
    case COLL_ASYNC_REDUCE_ATOMIC: return COLL_ASYNC_SHM_SMALL_ATOMIC;
    default: return COLL_ASYNC_SHM_SMALL_EACH;
    }
}

enum coll_async_shm_schedule coll_async_decision_shm(enum coll_async_family family, size_t bytes,
                                                     int root,
                                                     const struct coll_async_decision_shm *shm)
{
    bool reduces = COLL_ASYNC_FAMILY_ALLREDUCE == family || COLL_ASYNC_FAMILY_REDUCE == family;

    if (COLL_ASYNC_FAMILY_BARRIER == family) {
        return COLL_ASYNC_SHM_FLAGS;
    }
    switch (coll_async_decision_shm_forced(family, shm->forced, shm->single_copy)) {
    case COLL_ASYNC_ALG_SINGLE_COPY: return COLL_ASYNC_SHM_SINGLE_COPY;
    case COLL_ASYNC_ALG_STAGED: return COLL_ASYNC_SHM_STAGED;
    case COLL_ASYNC_ALG_ROOTED_CHUNKS: return COLL_ASYNC_SHM_ROOTED_CHUNKS;
    default: break; /* the table chooses */
    }
    if (reduces && bytes <= shm->small_reduce_bytes && bytes <= shm->slot_size) {
        return small_mode(bytes, root, shm);
    }
    if (bytes > shm->slot_size && shm->single_copy) {
        return COLL_ASYNC_SHM_SINGLE_COPY;
    }
    /* A reduce's root alone needs the result: the others hand in their data and go. */
    return reduces && root >= 0 ? COLL_ASYNC_SHM_ROOTED_CHUNKS : COLL_ASYNC_SHM_STAGED;
}

bool coll_async_decision_reduce_streams(size_t bytes, size_t stream_bytes)
{
    return 0 != stream_bytes && bytes >= stream_bytes && bytes <= REDUCE_STREAM_MAX;
}

/* Between nodes */

/* The size up to which row takes `small` among n leaders, from its threshold and
 * its block per leader. */
static size_t small_up_to(const struct row *row, int n)
{
    size_t blocks = n > 0 ? row->small_block * (size_t) n : 0;

    return blocks > row->small_bytes ? blocks : row->small_bytes;
}

/* The size from which row's latency_bound algorithm pays for its latencies among
 * n leaders: where the bytes it saves moving (at LATENCY_BYTES a latency) make up
 * for the latencies it adds. */
static size_t latency_paid_from(const struct row *row, int n)
{
    int log = floor_log2(n), more;

    switch (row->latency_bound) {
    case COLL_ASYNC_ALG_RING: /* 2 (n - 1) latencies against 2 log2 p + 2, the fold's
                                 two whole vectors against ring's 2 (n - 1) / n */
        more = n - 2 - log;
        return more > 0 ? (size_t) more * LATENCY_BYTES : 0;
    case COLL_ASYNC_ALG_SCATTER_ALLGATHER: /* n - 1 more latencies, about
                                              ceil(log2 n) - 2 whole messages fewer */
        more = ceil_log2(n) - 2;
        return (size_t) (n - 1) * LATENCY_BYTES / (size_t) (more > 1 ? more : 1);
    default:
        return 0;
    }
}

enum coll_async_alg coll_async_decision_between(enum coll_async_family family,
                                                enum coll_async_alg forced, size_t bytes,
                                                size_t count, int n)
{
    const struct row *row = &table[family];
    enum coll_async_alg alg = forced;

    /* Multicast is the hierarchy's (coll_async_hier_multicast.c): where it does not
     * run, the point-to-point algorithms run as for AUTO. */
    if (!coll_async_decision_between_nodes(forced) || COLL_ASYNC_ALG_MULTICAST == forced
        || !(row->algs & (1u << forced))) {
        if (n <= row->few_leaders || bytes <= row->small_bytes
            || (row->per_element && count < (size_t) n)
            || bytes <= small_up_to(row, n)) {
            alg = row->small;
        } else {
            alg = power_of_two(n) ? row->large : row->large_uneven;
            if (NONE != row->latency_bound && alg == row->latency_bound
                && bytes < latency_paid_from(row, n)) {
                alg = row->rival;
            }
        }
    }
    if (!power_of_two(n) && (row->power_of_two_only & (1u << alg))) {
        alg = row->uneven;
    }
    return alg;
}

int coll_async_decision_describe(enum coll_async_family family, enum coll_async_alg forced, int n,
                                 char *buf, size_t len)
{
    enum coll_async_alg small = coll_async_decision_between(family, forced, 1, SIZE_MAX, n);
    enum coll_async_alg large = coll_async_decision_between(family, forced, SIZE_MAX, SIZE_MAX, n);

    size_t from = latency_paid_from(&table[family], n), up_to = small_up_to(&table[family], n);
    enum coll_async_alg middle = from > up_to + 1
                                     ? coll_async_decision_between(family, forced, from - 1,
                                                                   SIZE_MAX, n)
                                     : large;

    if (small == large) {
        return snprintf(buf, len, "%s", coll_async_alg_names[small]);
    }
    if (middle != large && middle != small) {
        return snprintf(buf, len, "%s up to %zu B, %s up to %zu B, then %s",
                        coll_async_alg_names[small], up_to, coll_async_alg_names[middle],
                        from - 1, coll_async_alg_names[large]);
    }
    return snprintf(buf, len, "%s up to %zu B, then %s", coll_async_alg_names[small],
                    from > up_to + 1 && middle == small ? from - 1 : up_to,
                    coll_async_alg_names[large]);
}

int coll_async_decision_leader_parts(size_t bytes, size_t multi_leader_bytes, int slots)
{
    return bytes >= multi_leader_bytes ? slots : 1;
}

size_t coll_async_decision_multicast_from(enum coll_async_alg alg, int nodes, int min_nodes,
                                          int max_nodes, size_t min_bytes,
                                          bool leaders_have_verbs)
{
    if (COLL_ASYNC_ALG_MULTICAST == alg) {
        return 1;
    }
    if (COLL_ASYNC_ALG_AUTO == coll_async_decision_leaders(alg) && 0 < min_nodes
        && nodes >= min_nodes && (0 == max_nodes || nodes <= max_nodes) && leaders_have_verbs) {
        return min_bytes;
    }
    return SIZE_MAX;
}
