/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: MCA parameters, registered in one place, and their validation.
 *
 * The algorithm parameters are MCA enums generated from the decision table
 * (coll_async_decision.c), so ompi_info lists their values. Their enumerators
 * read names case-insensitively and keep a value they do not know instead of
 * refusing it: Open MPI would fail MPI_Init where the component was named in
 * --mca coll. Such a value, like every value that names something (CPU lists,
 * modes, registered as strings), is checked here: a wrong one gets this
 * component's own message and the component steps aside.
 */

#include "ompi_config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_async.h"
#include "coll_async_schedule.h"

/* Default priority: above tuned (30), so that listing async in --mca coll selects it,
 * and below self (75), which owns single-process communicators when it is loaded. */
#define DEFAULT_PRIORITY 40

/* Slots must hold a few cache lines per rank for the reduce-scatter pieces. */
#define MIN_SLOT_SIZE 4096
/* Far above what was measured useful (256 KiB), and low enough that the segment
 * of any number of ranks has a length a size_t holds. */
#define MAX_SLOT_SIZE (1ul << 30)
#define MAX_SETUP_TIMEOUT 3600

/* Timeouts in seconds become milliseconds in an int. */
#define MAX_TIMEOUT_S (INT_MAX / 1000)
#define MAX_TIMEOUT_TEXT "2147483"
/* TCP staging: at least 64 KiB (a small transfer's worth), at most 1 TiB. */
#define DEFAULT_TCP_STAGING ((size_t) 64 << 20)
#define MIN_TCP_STAGING ((size_t) 64 << 10)
#define MAX_TCP_STAGING ((size_t) 1 << 40)
#define DEFAULT_TCP_RENDEZVOUS ((size_t) 1 << 20)
#define TCP_STAGING_RANGE "65536 (64 KiB) to 1099511627776 (1 TiB); default 67108864 (64 MiB)"
/* 512 KiB: a quarter of the system calls of 128 KiB frames, which made the 16 MiB
 * alltoall over TCP 1.2x slower than btl/tcp; 1 MiB measured alike there and
 * slower in some bcasts (docs/performance.md). */
#define DEFAULT_TCP_CHUNK ((size_t) 512 << 10)
#define MIN_TCP_CHUNK ((size_t) 4 << 10)
#define MAX_TCP_CHUNK ((size_t) 64 << 20)
#define TCP_CHUNK_RANGE "4096 (4 KiB) to 67108864 (64 MiB); default 524288 (512 KiB)"
_Static_assert(MAX_TIMEOUT_S == 2147483, "MAX_TIMEOUT_TEXT says MAX_TIMEOUT_S");

/* The component whose fields the parameters are registered into (the one
 * Open MPI loaded), from register on. */
static mca_coll_async_component_t *component;

static int register_var(const char *name, const char *help, mca_base_var_type_t type,
                        mca_base_var_info_lvl_t level, void *storage)
{
    return mca_base_component_var_register(&component->super.collm_version,
                                           name, help, type, NULL, 0,
                                           MCA_BASE_VAR_FLAG_SETTABLE, level,
                                           MCA_BASE_VAR_SCOPE_ALL, storage);
}

#define MULTICAST_HELP                                                                        \
    " multicast: the root's node sends the data once into a UD multicast group of the "         \
    "nodes' leaders (verbs, RoCE or InfiniBand; the group is set up by the first such bcast and " \
    "every leader attached before anything is sent); where the group cannot be set up (no RDMA " \
    "port, a failed join, built without rdma-core) verbose level 1 says why, and the leaders " \
    "use the point-to-point algorithms. auto takes multicast from coll_async_mcast_min_nodes "   \
    "nodes and coll_async_mcast_min_bytes when every leader has an RDMA port and verbs reaches " \
    "every other."

#define NUMA_HELP                                                                             \
    " numa: on a communicator of one node whose ranks are in several NUMA domains "            \
    "(coll_async_virtual_numa pretends some), the call runs inside each domain, between the "  \
    "domains' leaders, and inside each domain again, so that only the leaders read across "    \
    "domains; auto does so from 2 domains on; flat: every rank of the node on one channel."

/* The old names of the algorithms between nodes, synonyms now. */
static const char *const between_nodes_synonym[COLL_ASYNC_NUM_FAMILIES] = {
    [COLL_ASYNC_FAMILY_ALLREDUCE] = "internode_allreduce_algorithm",
    [COLL_ASYNC_FAMILY_BCAST] = "internode_bcast_algorithm",
    [COLL_ASYNC_FAMILY_ALLGATHER] = "internode_allgather_algorithm",
};

/* An algorithm parameter's value the table does not accept for its family: this
 * value (no algorithm's), the text as given kept for params_check's message. */
#define UNKNOWN_ALG COLL_ASYNC_NUM_ALGS
static char unknown_value[COLL_ASYNC_NUM_FAMILIES][64];
static mca_base_var_enum_sfv_fn_t enum_string_from_value; /* Open MPI's own */

/* The family whose enumerator register_algorithm() named "coll_async_<family>_algorithms". */
static int family_of(const mca_base_var_enum_t *self)
{
    char name[64];

    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES; ++family) {
        snprintf(name, sizeof(name), "coll_async_%s_algorithms", coll_async_family_name(family));
        if (NULL != self->enum_name && 0 == strcmp(name, self->enum_name)) {
            return family;
        }
    }
    return -1;
}

/* A name (any case) or the number ompi_info shows beside it. */
static int algorithm_from_string(mca_base_var_enum_t *self, const char *text, int *value)
{
    int family = family_of(self);
    int alg;

    if (family < 0) {
        return OPAL_ERR_VALUE_OUT_OF_BOUNDS;
    }
    alg = coll_async_decision_parse(family, text);
    if (alg >= 0) {
        *value = alg;
        return OPAL_SUCCESS;
    }
    snprintf(unknown_value[family], sizeof(unknown_value[family]), "%s", text);
    *value = UNKNOWN_ALG;
    return OPAL_SUCCESS;
}

static int algorithm_to_string(mca_base_var_enum_t *self, const int value, char **text)
{
    int family = family_of(self);

    if (UNKNOWN_ALG == value && family >= 0) {
        *text = strdup(unknown_value[family]);
        return NULL == *text ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
    }
    return enum_string_from_value(self, value, text);
}

/* The names family's parameter accepts on one side of the node boundary,
 * "ring, recursive_doubling", or "" where it accepts none. */
static void names_of(enum coll_async_family family, bool (*side)(enum coll_async_alg), char *buf,
                     size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int alg = 0; alg < COLL_ASYNC_NUM_ALGS && used < len; ++alg) {
        if (side(alg) && coll_async_decision_accepts(family, alg)) {
            used += (size_t) snprintf(buf + used, len - used, "%s%s", 0 == used ? "" : ", ",
                                      coll_async_alg_names[alg]);
        }
    }
}

/* coll_async_<family>_algorithm: an MCA enum of the values the decision table
 * accepts for family. */
static int register_algorithm(enum coll_async_family family)
{
    mca_base_var_enum_value_t values[COLL_ASYNC_NUM_ALGS + 1];
    mca_base_var_enum_t *enumerator = NULL;
    char name[64], help[3072], list[192], between[128], inside[128];
    char between_help[512] = "", inside_help[1024] = "";
    int count = 0, index, rc;

    for (int alg = 0; alg < COLL_ASYNC_NUM_ALGS; ++alg) {
        if (coll_async_decision_accepts(family, alg)) {
            values[count++] = (mca_base_var_enum_value_t){alg, coll_async_alg_names[alg]};
        }
    }
    values[count] = (mca_base_var_enum_value_t){0, NULL};
    snprintf(name, sizeof(name), "coll_async_%s_algorithms", coll_async_family_name(family));
    rc = mca_base_var_enum_create(name, values, &enumerator);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    enum_string_from_value = enumerator->string_from_value;
    enumerator->value_from_string = algorithm_from_string;
    enumerator->string_from_value = algorithm_to_string;
    coll_async_decision_values(family, list, sizeof(list));
    names_of(family, coll_async_decision_between_nodes, between, sizeof(between));
    names_of(family, coll_async_decision_schedule_name, inside, sizeof(inside));
    if ('\0' != between[0] && coll_async_decision_hierarchical(family)) {
        snprintf(between_help, sizeof(between_help),
                 " %s: the leaders' algorithm between nodes (inside each node the component "
                 "chooses); on a communicator within one node, or where the group of nodes "
                 "cannot run it, the call runs as auto, said at verbose level 1.",
                 between);
    }
    if ('\0' != inside[0]) {
        snprintf(inside_help, sizeof(inside_help),
                 " %s: the shared-memory schedule inside a node, at every size (single_copy: "
                 "one copy from the peers' own buffers, needs CMA; staged: slot-sized chunks "
                 "through the slots%s); "
                 "between nodes the leaders' algorithm stays auto, and a node stage follows the "
                 "parameter of its own family (an allreduce across nodes reduces and bcasts "
                 "inside each node). Where the schedule cannot run (single_copy without CMA) "
                 "the component chooses, said at verbose level 1.%s",
                 inside,
                 coll_async_decision_accepts(family, COLL_ASYNC_ALG_ROOTED_CHUNKS)
                     ? "; rooted_chunks: the others hand their chunks to the root"
                     : "",
                 COLL_ASYNC_FAMILY_ALLREDUCE == family || COLL_ASYNC_FAMILY_REDUCE == family
                     ? " The small reductions' modes are coll_async_reduce_mode's, taken where "
                       "auto chooses them."
                     : "");
    }
    snprintf(name, sizeof(name), "%s_algorithm", coll_async_family_name(family));
    snprintf(help, sizeof(help),
             "Algorithm for the %s collective, blocking, nonblocking and persistent. One of: "
             "%s. auto: the component chooses per communicator and message size; delegate: "
             "always hand the call to the coll component selected below this one.%s%s%s%s",
             coll_async_family_name(family), list, between_help, inside_help,
             coll_async_decision_accepts(family, COLL_ASYNC_ALG_NUMA) ? NUMA_HELP : "",
             COLL_ASYNC_FAMILY_BCAST == family ? MULTICAST_HELP : "");

    component->algorithm_value[family] = COLL_ASYNC_ALG_AUTO;
    index = mca_base_component_var_register(&component->super.collm_version, name,
                                            help, MCA_BASE_VAR_TYPE_INT, enumerator, 0,
                                            MCA_BASE_VAR_FLAG_SETTABLE, OPAL_INFO_LVL_5,
                                            MCA_BASE_VAR_SCOPE_ALL,
                                            &component->algorithm_value[family]);
    OBJ_RELEASE(enumerator);
    if (index < 0) {
        return index;
    }
    if (NULL != between_nodes_synonym[family]) {
        rc = mca_base_var_register_synonym(index, "ompi", "coll", "async",
                                           between_nodes_synonym[family], 0);
        if (rc < 0) {
            return rc;
        }
    }
    return OMPI_SUCCESS;
}

/* The shared-memory transport and the small-reduction modes. */
static int register_shm(void)
{
    mca_coll_async_component_t *c = component;
    int rc;

    /* 256 KiB measured best of 32-256 KiB at 2 ranks from 512 KiB to 4 MiB (fewer
     * flag rounds per byte) and as good below. Pages are touched only when used. */
    c->shm_slot_size = 256 * 1024;
    rc = register_var("shm_slot_size",
                      "Bytes of each rank's data slot (two per rank) in a communicator's "
                      "shared-memory segment. Messages up to this size go through the "
                      "slots; larger ones are copied once through CMA, or, without CMA, "
                      "pipelined through the slots in chunks of this size. At least 4096.",
                      MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_6, &c->shm_slot_size);
    if (rc < 0) {
        return rc;
    }
    /* Off by default: pinning the peer's pages for every call made CMA 2-4x slower
     * than the pipelined slots at every size measured (bench/compare, 2 ranks). */
    c->shm_cma = false;
    rc = register_var("shm_cma",
                      "Use single-copy transfers between ranks' buffers through Linux CMA "
                      "(process_vm_readv) for messages larger than a slot. When false (the "
                      "default: on the machines measured, pinning the peer's pages per call "
                      "costs more than the second copy), or when the kernel refuses CMA "
                      "(ptrace restrictions), large messages are pipelined through the "
                      "double-buffered slots. Transfers of 1 MiB or more between ranks of "
                      "one node in a communicator across nodes (the node's mailbox) are "
                      "pulled through CMA when this is true, and also when the node runs "
                      "more ranks than CPUs, where staging them needs both processes on a "
                      "CPU at once.",
                      MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_6, &c->shm_cma);
    if (rc < 0) {
        return rc;
    }
    /* 8 to 64 KiB measured alike within the noise at 2 ranks, 8 KiB to 4 MiB, and
     * 20-40 % faster than whole slots for bcast and reduce from 64 KiB. */
    c->shm_piece_size = 16 * 1024;
    rc = register_var("shm_piece_size",
                      "Bytes a rank writes into its slot before announcing them, so that "
                      "the readers copy or reduce a piece while the writer writes the next "
                      "(pipelining inside a slot). At least 64; larger than the slot (or 0): "
                      "the slot size (no pipelining inside a slot).",
                      MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_6, &c->shm_piece_size);
    if (rc < 0) {
        return rc;
    }
    /* A live creator finishes its file within microseconds: the bound is for
     * one that died or failed while at it, and must not fail a rank that is
     * merely descheduled on a loaded node. */
    c->shm_setup_timeout = 30;
    rc = register_var("shm_setup_timeout",
                      "Seconds a rank waits for a shared-memory segment whose file it found "
                      "at the segment's name but not finished by its creator (which died or "
                      "failed while making it, or a stale file); past it, the collective "
                      "fails on every rank of the node, with a message. The ranks make and "
                      "attach the segment at their first collective on a communicator and "
                      "wait for each other there as long as a collective waits. 1 to 3600.",
                      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_6, &c->shm_setup_timeout);
    if (rc < 0) {
        return rc;
    }
    /* Four threads creating communicators at once at 2 ranks reused 4932 of 4936
     * segments with room for four (1.5 MiB each with the default slots), 4522 with
     * room for one. 16 MiB keeps ten such, or one of 16 ranks. */
    c->shm_reuse_bytes = 16 * 1024 * 1024;
    rc = register_var("shm_reuse_bytes",
                      "Bytes of shared-memory segments each process keeps mapped after their "
                      "communicators are freed, so that the next communicator of the same "
                      "ranks on the node takes one again instead of making a file: no pages "
                      "to allocate at its first collective, none to free at MPI_Comm_free. "
                      "A segment is about 2 x coll_async_shm_slot_size per rank on the node "
                      "and half that again; larger ones are not kept. Oldest dropped first. "
                      "0: none kept.",
                      MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_6, &c->shm_reuse_bytes);
    if (rc < 0) {
        return rc;
    }
    /* With its early TCP transfers' staging kept, the 2 MiB alltoall at 4 ranks on 2
     * virtual nodes went from 44 to 7 ms here; 128 MiB holds a few of 16 MiB. */
    c->scratch_keep_bytes = 128 * 1024 * 1024;
    rc = register_var("scratch_keep_bytes",
                      "Bytes of temporary buffers (from 64 KiB: a node leader's staging "
                      "between nodes, reductions' scratch, data that arrived over TCP or "
                      "the node's mailbox before its receive) each process keeps after a "
                      "collective for the next one, instead of giving them back to the "
                      "system and paying a page fault per page at the next call. Smaller "
                      "kept buffers are dropped first to keep a larger one; all are freed "
                      "at MPI_Finalize. 0: none kept.",
                      MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_6, &c->scratch_keep_bytes);
    if (rc < 0) {
        return rc;
    }
    /* Streaming made bcast 1.5-2x faster from 16 KiB at 2 ranks here. */
    c->shm_stream_bytes = coll_async_schedule_config.stream_bytes;
    rc = register_var("shm_stream_bytes",
                      "Broadcasts, allgathers and reduces (these up to 64 KiB) of at least "
                      "this many bytes are written into the shared slots with non-temporal "
                      "(streaming) stores, which do not first read the lines into the "
                      "writer's cache: much faster where the lines sit in another core's "
                      "cache that shares no cache with the writer (the readers of the "
                      "slot's last use), slower where the ranks share a cache the data "
                      "would have stayed in. Allreduces never stream (measured slower). "
                      "0: never.",
                      MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_6, &c->shm_stream_bytes);
    if (rc < 0) {
        return rc;
    }
    c->reduce_mode_value = "auto";
    rc = register_var("reduce_mode",
                      "How small reductions (up to coll_async_small_reduce_bytes) combine "
                      "contributions in shared memory: \"auto\" (root for reduce and for "
                      "allreduces of 2 ranks from 512 bytes, each otherwise); \"each\" "
                      "(every rank reduces all slots); \"root\" (one "
                      "rank polls the arrivals, reduces and publishes); \"lock\" (senders "
                      "reduce into a shared accumulator under a lock); \"atomic\" (senders "
                      "reduce into it with atomic operations, where the type and operation "
                      "have them, else lock).",
                      MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_6, &c->reduce_mode_value);
    if (rc < 0) {
        return rc;
    }
    c->small_reduce_bytes = coll_async_schedule_config.small_reduce_bytes;
    rc = register_var("small_reduce_bytes",
                      "Largest reduction (bytes) combined by the small-message modes of "
                      "coll_async_reduce_mode; larger ones are reduce-scattered over all "
                      "ranks and gathered.",
                      MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_6, &c->small_reduce_bytes);
    return rc < 0 ? rc : OMPI_SUCCESS;
}

/* When auto takes multicast for bcast, and forced loss for tests. */
static int register_multicast(void)
{
    mca_coll_async_component_t *c = component;
    int rc;

    /* bench/simulate: from 8 nodes and 64 KiB multicast's one sending beats
     * binomial's 3 and more rounds (2.2x at 8 nodes). Not measured on hardware:
     * the soft-RoCE guest, CPU-bound, never saw it win on 3 to 6 nodes. */
    c->mcast_min_nodes = 8;
    rc = register_var("mcast_min_nodes",
                      "Fewest nodes on which coll_async_bcast_algorithm=auto sends "
                      "bcasts of coll_async_mcast_min_bytes and more over a UD multicast group "
                      "of the nodes' leaders (when every leader has an RDMA port and verbs "
                      "reaches every other). 0: auto never does. The default is "
                      "bench/simulate's, not measured on hardware (see docs/performance.md): "
                      "tune it there.",
                      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, &c->mcast_min_nodes);
    if (rc < 0) {
        return rc;
    }
    /* bench/simulate: the root takes every receiver's acknowledgement every 32
     * packets, so past about 53 nodes (InfiniBand's defaults there) acknowledging
     * costs the root more than streaming; from 128 nodes scatter-allgather beats
     * multicast at 4 MiB and more, and from 256 binomial beats it at 64 KiB. */
    c->mcast_max_nodes = 128;
    rc = register_var("mcast_max_nodes",
                      "Most nodes on which coll_async_bcast_algorithm=auto sends bcasts over "
                      "multicast: the root takes each receiver's acknowledgements, which past "
                      "this many nodes cost more than multicast saves (bench/simulate's model; "
                      "not measured on hardware). 0: no bound.",
                      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, &c->mcast_max_nodes);
    if (rc < 0) {
        return rc;
    }
    c->mcast_min_bytes = 64 * 1024;
    rc = register_var("mcast_min_bytes",
                      "Smallest bcast (bytes) that coll_async_bcast_algorithm=auto "
                      "sends over multicast on coll_async_mcast_min_nodes nodes or more.",
                      MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5, &c->mcast_min_bytes);
    if (rc < 0) {
        return rc;
    }

    c->mcast_drop_fraction = 0;
    rc = register_var("mcast_drop_fraction",
                      "For tests only: the fraction (0 to 1) of the multicast data packets each "
                      "leader receives that it discards on arrival, as if the network had lost "
                      "them, chosen by a seeded pseudo-random sequence. The group's "
                      "acknowledgements, gap reports and resends must then repair the loss, and "
                      "results stay exact, only slower. Needed where the network loses nothing "
                      "to test with: soft-RoCE in one machine loops multicast back before any "
                      "wire, so tc netem cannot drop it. 0 (the default): none.",
                      MCA_BASE_VAR_TYPE_DOUBLE, OPAL_INFO_LVL_9, &c->mcast_drop_fraction);
    return rc < 0 ? rc : OMPI_SUCCESS;
}

/* Between nodes: the TCP transport, the leaders, the algorithms. */
static int register_network(void)
{
    mca_coll_async_component_t *c = component;
    int rc;

    c->tcp_if_include = "";
    rc = register_var("tcp_if_include",
                      "Interfaces the TCP transport between nodes listens on and connects "
                      "over, as btl_tcp_if_include: comma-separated names (eth0) or CIDR "
                      "subnets (10.0.0.0/8). Exclusive with coll_async_tcp_if_exclude. "
                      "Empty: every IPv4 interface that is up, loopback only when nothing "
                      "else is (and loopback alone with coll_async_virtual_nodes).",
                      MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_4, &c->tcp_if_include);
    if (rc < 0) {
        return rc;
    }
    c->tcp_if_exclude = "";
    rc = register_var("tcp_if_exclude",
                      "Interfaces the TCP transport must not use, in the form of "
                      "coll_async_tcp_if_include.",
                      MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_4, &c->tcp_if_exclude);
    if (rc < 0) {
        return rc;
    }
    c->tcp_links = 0;
    rc = register_var("tcp_links",
                      "Connections per peer, one per pair of interfaces the two sides share "
                      "(same subnet); large transfers are striped over all of them. 0 (the "
                      "default): as many as there are such pairs.",
                      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, &c->tcp_links);
    if (rc < 0) {
        return rc;
    }
    c->tcp_connect_timeout = 30;
    rc = register_var("tcp_connect_timeout",
                      "Seconds a connection to a peer may take to be set up before the "
                      "collectives that need it fail with an error naming the peer "
                      "(1 to " MAX_TIMEOUT_TEXT ").",
                      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, &c->tcp_connect_timeout);
    if (rc < 0) {
        return rc;
    }
    c->tcp_staging_limit = DEFAULT_TCP_STAGING;
    rc = register_var("tcp_staging_limit",
                      "Bytes of TCP transfers this process holds for receives not posted yet "
                      "(all peers together; " TCP_STAGING_RANGE "). Past it, the connection "
                      "such a transfer comes on is not read until its receive is posted: a "
                      "peer, or a forged header, cannot make this process allocate more.",
                      MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_6, &c->tcp_staging_limit);
    if (rc < 0) {
        return rc;
    }
    c->tcp_rendezvous_bytes = DEFAULT_TCP_RENDEZVOUS;
    rc = register_var("tcp_rendezvous_bytes",
                      "TCP transfers of this many bytes or more are announced and sent only "
                      "once the receiver has posted their receive: a receiver that is late "
                      "then holds and copies none of them, for one round trip more per "
                      "transfer. 0: never (every transfer is sent at once, and one that "
                      "comes before its receive is staged).",
                      MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_6, &c->tcp_rendezvous_bytes);
    if (rc < 0) {
        return rc;
    }
    c->tcp_chunk_bytes = DEFAULT_TCP_CHUNK;
    rc = register_var("tcp_chunk_bytes",
                      "Bytes of a TCP transfer that one frame carries and one system call "
                      "writes (" TCP_CHUNK_RANGE "). A transfer crosses a peer's links in "
                      "frames of this size; a larger one costs fewer system calls, and "
                      "holds a rendezvous' announcement or answer behind it longer.",
                      MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_6, &c->tcp_chunk_bytes);
    if (rc < 0) {
        return rc;
    }
    c->verbs_if_include = "";
    rc = register_var("verbs_if_include",
                      "RDMA devices and ports the verbs transport may use between nodes: "
                      "comma-separated device (mlx5_0) or device:port (mlx5_0:1). Exclusive "
                      "with coll_async_verbs_if_exclude. Empty (the default): every active "
                      "port. A peer no port reaches is reached over TCP.",
                      MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_4, &c->verbs_if_include);
    if (rc < 0) {
        return rc;
    }
    c->verbs_if_exclude = "";
    rc = register_var("verbs_if_exclude",
                      "RDMA devices and ports the verbs transport must not use, in the form "
                      "of coll_async_verbs_if_include; \"all\" turns verbs off.",
                      MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_4, &c->verbs_if_exclude);
    if (rc < 0) {
        return rc;
    }
    c->verbs_ports = 0;
    rc = register_var("verbs_ports",
                      "Ports one large transfer is striped over, among those both sides have. "
                      "0 (the default): all of them.",
                      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, &c->verbs_ports);
    if (rc < 0) {
        return rc;
    }
    c->leaders = 0;
    rc = register_var("leaders",
                      "Leaders per node for large allreduces: each moves its share of the "
                      "vector between nodes, the first ones from ranks near their NIC. 0 (the "
                      "default): one per NIC of the node; N: N leaders (more than the NICs: "
                      "other ranks of the node join, since over TCP one stream is bound by one "
                      "core), at most the node's ranks and 8.",
                      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, &c->leaders);
    if (rc < 0) {
        return rc;
    }
    c->multi_leader_bytes = 64 * 1024;
    rc = register_var("multi_leader_bytes",
                      "Smallest allreduce (bytes) split over several leaders per node; "
                      "smaller ones have one leader per node.",
                      MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_6, &c->multi_leader_bytes);
    if (rc < 0) {
        return rc;
    }
    c->tuning_file = "";
    rc = register_var("tuning_file",
                      "A tuning file (docs/tuning-file.md), written by hand or by a program: rows "
                      "\"FAMILY NODES BYTES ALGORITHM\" after a first line \"coll_async_tuning "
                      "1\" that choose the leaders' algorithm between nodes of allreduce, "
                      "bcast, allgather, allgatherv, reduce_scatter and reduce_scatter_block by "
                      "number of nodes and message size, where the family's "
                      "coll_async_<family>_algorithm leaves it to auto; the built-in thresholds "
                      "choose where the file has no row. Read once per process at MPI_Init "
                      "(at most 1 MiB, 4096 rows). A file that cannot be read or is wrong "
                      "anywhere is ignored whole, with a message naming its line; a "
                      "communicator uses the rows only where every one of its ranks read the "
                      "same rows (say, a file on a shared file system), else the built-in "
                      "thresholds, with a message. Verbose level 1 says which row of the "
                      "file chose each leaders' algorithm. Empty (the default): none.",
                      MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_5, &c->tuning_file);
    if (rc < 0) {
        return rc;
    }
    c->profile_ring = false;
    rc = register_var("profile_ring",
                      "Measure the bandwidth between the leaders of each communicator that "
                      "spans nodes, once when it is created, and order the ring of the ring "
                      "algorithms by it (fastest links next to each other).",
                      MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_5, &c->profile_ring);
    return rc < 0 ? rc : OMPI_SUCCESS;
}

int mca_coll_async_params_register(mca_coll_async_component_t *c)
{
    component = c;
    int rc;

    c->priority = DEFAULT_PRIORITY;
    rc = register_var("priority",
                      "Priority of the async coll component. Above tuned's (30) it handles "
                      "the collectives of every communicator; components with a lower "
                      "priority remain as the modules it can delegate to. On an "
                      "intercommunicator it asks one more (above inter's 40), and 0 on one "
                      "to another job's processes where it cannot reach them (over TCP, "
                      "which every process of both jobs must have open). A negative "
                      "value disables it.",
                      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_6, &c->priority);
    if (rc < 0) {
        return rc;
    }

    c->verbose = 0;
    rc = register_var("verbose",
                      "Verbosity of the async coll component: 0 silent; 1 prints, per "
                      "communicator, the path each collective takes (native, or delegated "
                      "to which component); 10 adds why communicators are declined.",
                      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_9, &c->verbose);
    if (rc < 0) {
        return rc;
    }

    c->progress_cpus_value = "auto";
    rc = register_var("progress_cpus",
                      "CPUs for the component's progress thread: \"auto\" (a core near "
                      "the rank's NUMA domain that the rank is not bound to, when one "
                      "exists, else the rank's own cpuset), \"none\" (not pinned), or a "
                      "list of CPU numbers such as \"0,2,4-7\".",
                      MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_5, &c->progress_cpus_value);
    if (rc < 0) {
        return rc;
    }

    c->virtual_nodes = 0;
    rc = register_var("virtual_nodes",
                      "Split the ranks of the job into this many pretend nodes, to test on "
                      "one machine what runs between nodes: world rank r is on virtual node "
                      "r / ceil(size / N), and shared memory is used only inside one. 0 (the "
                      "default): the real nodes.",
                      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_9, &c->virtual_nodes);
    if (rc < 0) {
        return rc;
    }

    c->virtual_numa = 0;
    rc = register_var("virtual_numa",
                      "Split the ranks of each node (or virtual node) into this many pretend "
                      "NUMA domains, to test on one machine the NUMA stages inside a node: the "
                      "node's i-th of n ranks (by world rank) is in pretend domain i * N / n. "
                      "0 (the default): the domains of the ranks' bindings.",
                      MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_9, &c->virtual_numa);
    if (rc < 0) {
        return rc;
    }

    c->topology_xml = "";
    rc = register_var("topology_xml",
                      "An hwloc XML file (as lstopo --of xml writes) describing this node, "
                      "read instead of the machine: NUMA domains and NICs with their "
                      "locality, for tests that present a node this machine is not. Empty "
                      "(the default): the machine, as Open MPI's hwloc sees it.",
                      MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_9, &c->topology_xml);
    if (rc < 0) {
        return rc;
    }

    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES; ++family) {
        rc = register_algorithm(family);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
    rc = register_network();
    if (OMPI_SUCCESS == rc) {
        rc = register_multicast();
    }
    return OMPI_SUCCESS == rc ? register_shm() : rc;
}

/* Whether an integer parameter is within [min, max]; if not, says so. */
static bool in_range(const char *name, int value, int min, int max, const char *valid)
{
    char given[32];

    if (value >= min && value <= max) {
        return true;
    }
    snprintf(given, sizeof(given), "%d", value);
    mca_coll_async_show_help(mca_coll_async_first_process(), "bad value", name, given, valid);
    return false;
}

/* The same for a number of bytes. */
static bool bytes_in_range(const char *name, size_t value, size_t min, size_t max,
                           const char *valid)
{
    char given[32];

    if (value >= min && value <= max) {
        return true;
    }
    snprintf(given, sizeof(given), "%zu", value);
    mca_coll_async_show_help(mca_coll_async_first_process(), "bad value", name, given, valid);
    return false;
}

/* The shared-memory parameters, which size the segments: values that would
 * overflow its length or make no sense are refused with their valid range. */
static int check_shm(void)
{
    mca_coll_async_component_t *c = component;
    char given[32];
    int rc = OMPI_SUCCESS;

    if (!bytes_in_range("shm_slot_size", c->shm_slot_size, MIN_SLOT_SIZE, MAX_SLOT_SIZE,
                        "a number of bytes from 4096 to 1073741824 (1 GiB)")) {
        rc = OMPI_ERR_BAD_PARAM;
    }
    if (0 != c->shm_piece_size
        && (c->shm_piece_size < 64
            || c->shm_slot_size / c->shm_piece_size >= 1u << COLL_ASYNC_SHM_PIECE_BITS)) {
        snprintf(given, sizeof(given), "%zu", c->shm_piece_size);
        mca_coll_async_show_help(mca_coll_async_first_process(), "bad value", "shm_piece_size",
                                 given,
                                 "0 or a number of bytes of at least 64, at most "
                                 "1048575 pieces per slot");
        rc = OMPI_ERR_BAD_PARAM;
    }
    if (!in_range("shm_setup_timeout", c->shm_setup_timeout, 1, MAX_SETUP_TIMEOUT,
                  "a number of seconds from 1 to 3600")) {
        rc = OMPI_ERR_BAD_PARAM;
    }
    return rc;
}

/* The tuning file, once per process: its rows, or NULL after saying what is
 * wrong with it (the job's first process says it; the others at verbose level
 * 1), the built-in thresholds then choosing. Never a reason to step aside. */
static struct coll_async_tuning *tuning;

static void load_tuning(const char *path)
{
    struct coll_async_tuning_error error;
    char where[32] = "";

    if (NULL == path || '\0' == path[0]) {
        return;
    }
    tuning = coll_async_tuning_load(path, &error);
    if (NULL == tuning) {
        if (error.line > 0) {
            snprintf(where, sizeof(where), ":%d", error.line);
        }
        mca_coll_async_show_help(mca_coll_async_first_process(), "bad tuning file", path, where,
                                 error.why);
    }
}

void mca_coll_async_params_fini(mca_coll_async_component_t *c)
{
    c->config.tuning = NULL;
    coll_async_tuning_free(tuning);
    tuning = NULL;
}

/* The settings handed down (coll_async_config.h), from the checked values. */
static void fill_config(const mca_coll_async_component_t *c, struct coll_async_config *config)
{
    config->channel = (struct coll_async_channel_config){
        .slot_size = c->shm_slot_size,
        /* A piece larger than the slot (the default with small slots) is the slot. */
        .piece_size = 0 == c->shm_piece_size || c->shm_piece_size > c->shm_slot_size
                          ? c->shm_slot_size : c->shm_piece_size,
        .cma = c->shm_cma,
        .setup_timeout_ms = (unsigned) c->shm_setup_timeout * 1000u};
    config->virtual_nodes = c->virtual_nodes;
    config->virtual_numa = c->virtual_numa;
    config->topology_xml = NULL != c->topology_xml ? c->topology_xml : "";
    config->progress_cpus_value = c->progress_cpus_value;
    config->leaders = c->leaders;
    config->multi_leader_bytes = c->multi_leader_bytes;
    config->profile_ring = c->profile_ring;
    config->tuning = tuning;
    config->tuning_file = NULL != c->tuning_file ? c->tuning_file : "";
    memcpy(config->algorithm, c->algorithm, sizeof(config->algorithm));
    config->tcp.include = c->tcp_if_include;
    config->tcp.exclude = c->tcp_if_exclude;
    config->tcp.links = c->tcp_links;
    config->tcp.connect_timeout_s = c->tcp_connect_timeout;
    config->tcp.staging_limit = c->tcp_staging_limit;
    config->tcp.rendezvous_bytes = c->tcp_rendezvous_bytes;
    config->tcp.chunk_bytes = c->tcp_chunk_bytes;
    config->verbs.include = c->verbs_if_include;
    config->verbs.exclude = c->verbs_if_exclude;
    config->verbs.ports = c->verbs_ports;
    config->multicast.include = c->verbs_if_include;
    config->multicast.exclude = c->verbs_if_exclude;
    config->multicast.drop_fraction = c->mcast_drop_fraction;
    config->multicast.min_nodes = c->mcast_min_nodes;
    config->multicast.max_nodes = c->mcast_max_nodes;
    config->multicast.min_bytes = c->mcast_min_bytes;
}

int mca_coll_async_params_check(mca_coll_async_component_t *c)
{
    char why[256], values[128];
    int rc = OMPI_SUCCESS, mode;

    if (0 != coll_async_parse_cpus(c->progress_cpus_value, &c->config.progress_cpus,
                                   why, sizeof(why))) {
        mca_coll_async_show_help(mca_coll_async_first_process(), "bad cpu list",
                                 c->progress_cpus_value, why);
        rc = OMPI_ERR_BAD_PARAM;
    }

    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES; ++family) {
        if (UNKNOWN_ALG == c->algorithm_value[family]) {
            coll_async_decision_values(family, values, sizeof(values));
            mca_coll_async_show_help(mca_coll_async_first_process(), "bad algorithm",
                                     coll_async_family_name(family), unknown_value[family],
                                     values);
            rc = OMPI_ERR_BAD_PARAM;
            continue;
        }
        c->algorithm[family] = (enum coll_async_alg) c->algorithm_value[family];
    }

    mode = coll_async_parse_name(c->reduce_mode_value, coll_async_reduce_mode_names,
                                 COLL_ASYNC_NUM_REDUCE_MODES);
    if (mode < 0) {
        coll_async_join_names(coll_async_reduce_mode_names, COLL_ASYNC_NUM_REDUCE_MODES,
                              values, sizeof(values));
        mca_coll_async_show_help(mca_coll_async_first_process(), "bad value", "reduce_mode",
                                 c->reduce_mode_value, values);
        rc = OMPI_ERR_BAD_PARAM;
    } else {
        coll_async_schedule_config.reduce_mode = (enum coll_async_reduce_mode) mode;
    }
    if (OMPI_SUCCESS != check_shm()) {
        rc = OMPI_ERR_BAD_PARAM;
    }
    coll_async_schedule_config.small_reduce_bytes = c->small_reduce_bytes;
    coll_async_schedule_config.stream_bytes = c->shm_stream_bytes;
    if (!in_range("virtual_nodes", c->virtual_nodes, 0, INT_MAX,
                  "0 (the real nodes) or a number of pretend nodes")
        || !in_range("virtual_numa", c->virtual_numa, 0, INT_MAX,
                     "0 (the real NUMA domains) or a number of pretend domains")
        || !in_range("leaders", c->leaders, 0, INT_MAX, "0 (one per NIC) or a number of leaders")
        || !in_range("tcp_links", c->tcp_links, 0, INT_MAX, "0 (all) or a number of connections")
        || !in_range("tcp_connect_timeout", c->tcp_connect_timeout, 1, MAX_TIMEOUT_S,
                     "a number of seconds from 1 to " MAX_TIMEOUT_TEXT)
        || !in_range("verbs_ports", c->verbs_ports, 0, INT_MAX, "0 (all) or a number of ports")
        || !in_range("mcast_min_nodes", c->mcast_min_nodes, 0, INT_MAX,
                     "0 (auto never takes multicast) or a number of nodes")
        || !in_range("mcast_max_nodes", c->mcast_max_nodes, 0, INT_MAX,
                     "0 (no bound) or a number of nodes")) {
        rc = OMPI_ERR_BAD_PARAM;
    }
    if (!bytes_in_range("tcp_staging_limit", c->tcp_staging_limit, MIN_TCP_STAGING,
                        MAX_TCP_STAGING, "a number of bytes, " TCP_STAGING_RANGE)
        || !bytes_in_range("tcp_chunk_bytes", c->tcp_chunk_bytes, MIN_TCP_CHUNK, MAX_TCP_CHUNK,
                           "a number of bytes, " TCP_CHUNK_RANGE)) {
        rc = OMPI_ERR_BAD_PARAM;
    }
    /* Written so that NaN fails too. */
    if (!(c->mcast_drop_fraction >= 0 && c->mcast_drop_fraction <= 1)) {
        char given[32];

        snprintf(given, sizeof(given), "%g", c->mcast_drop_fraction);
        mca_coll_async_show_help(mca_coll_async_first_process(), "bad value",
                                 "mcast_drop_fraction", given,
                                 "a fraction from 0 (no loss) to 1");
        rc = OMPI_ERR_BAD_PARAM;
    }
    if (OMPI_SUCCESS == rc && NULL == tuning) {
        load_tuning(c->tuning_file);
    }
    fill_config(c, &c->config);
    return rc;
}
