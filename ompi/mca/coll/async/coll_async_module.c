/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the module, one per communicator.
 *
 * comm_query offers a module for every communicator, intercommunicators too.
 * When the module is enabled, the components of lower priority have already
 * installed their functions on the communicator;
 * the module keeps them as "below" (as han does) and asks the decision table
 * (coll_async_decision.h), per collective, whether this component runs it
 * (native) or hands it to them (delegated).
 */

#include "ompi_config.h"

#include <string.h>

#include "ompi/mca/coll/base/coll_base_util.h"
#include "ompi/runtime/params.h"
#include "opal/util/output.h"

#include "coll_async.h"
#include "coll_async_handoff.h"
#include "coll_async_network.h"
#include "coll_async_numa.h"

static void module_construct(mca_coll_async_module_t *module)
{
    memset(module->path, 0, sizeof(module->path));
    memcpy(module->algorithm, mca_coll_async_component.algorithm, sizeof(module->algorithm));
    memset(&module->below, 0, sizeof(module->below));
    module->has_channel = false;
    module->hier = NULL;
    module->numa = NULL;
    module->peers = NULL;
    memset(&module->own_peers, 0, sizeof(module->own_peers));
    coll_async_stream_init(&module->stream);
    coll_async_stream_init(&module->agree_stream);
    memset(&module->agree_peers, 0, sizeof(module->agree_peers));
    memset(&module->settle_failure, 0, sizeof(module->settle_failure));
    module->settle_comm = NULL;
    module->settle_reported = false;
}

/* MPI_Comm_free may come while nonblocking collectives are still in flight:
 * they complete normally, so the channel stays until the engine is done with it. */
static void module_destruct(mca_coll_async_module_t *module)
{
    COLL_ASYNC_TAKEN_OVER(module);
    coll_async_stream_drain(&module->stream, NULL);
    coll_async_stream_drain(&module->agree_stream, NULL);
    if (!module->has_channel && NULL == module->hier && NULL == module->peers) {
        return;
    }
    coll_async_peers_free(&module->agree_peers);
    coll_async_peers_free(&module->own_peers);
    mca_coll_async_numa_close(module->numa);
    if (module->has_channel) {
        coll_async_channel_close(&module->channel);
    }
    mca_coll_async_hier_close(module->hier);
}

OBJ_CLASS_INSTANCE(mca_coll_async_module_t, mca_coll_base_module_t, module_construct,
                   module_destruct);

/* The module that provides coll below this one, or NULL when none does. */
static mca_coll_base_module_t *below_module(const mca_coll_base_comm_coll_t *below,
                                            enum coll_async_coll coll)
{
    switch (coll) {
#define BELOW_CASE(U, l)                                                        \
    case COLL_ASYNC_##U:                                                        \
        return NULL != below->coll_##l ? below->coll_##l##_module : NULL;       \
    case COLL_ASYNC_I##U:                                                       \
        return NULL != below->coll_i##l ? below->coll_i##l##_module : NULL;     \
    case COLL_ASYNC_##U##_INIT:                                                 \
        return NULL != below->coll_##l##_init ? below->coll_##l##_init_module : NULL;
        COLL_ASYNC_FAMILIES(BELOW_CASE)
#undef BELOW_CASE
    default:
        return NULL;
    }
}

/* Name of the component that owns a module selected on comm. */
static const char *component_of(struct ompi_communicator_t *comm,
                                const mca_coll_base_module_t *module)
{
    mca_coll_base_avail_coll_t *avail;

    OPAL_LIST_FOREACH (avail, comm->c_coll->module_list, mca_coll_base_avail_coll_t) {
        if (avail->ac_module == module) {
            return avail->ac_component_name;
        }
    }
    return "another component";
}

/* Whether every rank of comm runs on this node. */
static bool all_on_this_node(struct ompi_communicator_t *comm)
{
    for (int rank = 0; rank < ompi_comm_size(comm); ++rank) {
        if (!mca_coll_async_on_this_node(ompi_comm_peer_lookup(comm, rank))) {
            return false;
        }
    }
    return true;
}

/* The communicator as the decision table sees it. */
static struct coll_async_decision_comm decision_comm(const mca_coll_async_module_t *module,
                                                     struct ompi_communicator_t *comm)
{
    return (struct coll_async_decision_comm){.size = ompi_comm_size(comm),
                                             .has_channel = module->has_channel,
                                             .spans_nodes = NULL != module->hier,
                                             .has_network = OMPI_COMM_IS_INTER(comm)
                                                                ? NULL != module->peers
                                                                : NULL != mca_coll_async_network(),
                                             .intercomm = OMPI_COMM_IS_INTER(comm)};
}

/* Opens the shared-memory channel when comm spans several ranks of this node, or
 * the hierarchy when it spans nodes: this rank's half of their set-up, which
 * waits for no rank but a channel's creator; the rest is settled at the first
 * collective (coll_async_settle.c). Under MPI_THREAD_MULTIPLE Open MPI enables
 * the module from inside its progress engine, where no point-to-point message
 * could be awaited either. */
static void open_channel(mca_coll_async_module_t *module, struct ompi_communicator_t *comm)
{
    /* The job's settings with this communicator's algorithms: the hierarchy and
     * the NUMA split copy what they keep of them. */
    struct coll_async_config comm_config = mca_coll_async_component.config;
    const struct coll_async_config *config = &comm_config;

    memcpy(comm_config.algorithm, module->algorithm, sizeof(comm_config.algorithm));

    if (1 == ompi_comm_size(comm)) {
        return;
    }
    if (!all_on_this_node(comm)) {
        if (coll_async_decision_wanted(module->algorithm)) {
            module->hier = mca_coll_async_hier_open(comm, config);
        }
        return;
    }
    if (!coll_async_decision_wanted(module->algorithm)) {
        return;
    }
    /* Before the channel, which carries whether this rank opened the split's. */
    module->numa = mca_coll_async_numa_open(comm, NULL, ompi_comm_size(comm),
                                            ompi_comm_rank(comm), config);
    if (OMPI_SUCCESS != mca_coll_async_segment_open(&module->channel, &config->channel, comm, NULL,
                                                    ompi_comm_size(comm), ompi_comm_rank(comm),
                                                    COLL_ASYNC_SEGMENT_COMM,
                                                    NULL != module->numa && module->numa->opened)) {
        mca_coll_async_numa_close(module->numa);
        module->numa = NULL;
        return;
    }
    module->has_channel = true;
    opal_output_verbose(0 == ompi_comm_rank(comm) ? 1 : 2, mca_coll_async_output,
                        "coll:async: %s (cid %u, size %d, rank %d): shared memory, %zu-byte "
                        "slots written in %zu-byte pieces",
                        comm->c_name, coll_async_comm_cid(comm), ompi_comm_size(comm),
                        ompi_comm_rank(comm), config->channel.slot_size, config->channel.piece_size);
}

/* A family forced to delegate (by an MCA value or a hint) where no component
 * below provides one of its forms cannot be honoured: said once, and the family
 * runs as auto instead of the communicator's creation failing. On an
 * intercommunicator the call itself says so (coll_async_dispatch.c). */
static void refuse_impossible_delegation(mca_coll_async_module_t *module,
                                         struct ompi_communicator_t *comm)
{
    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES && !OMPI_COMM_IS_INTER(comm);
         ++family) {
        bool below = true;

        for (int form = 0; form < COLL_ASYNC_NUM_FORMS; ++form) {
            below = below && NULL != below_module(&module->below,
                                                  COLL_ASYNC_NUM_FORMS * family + form);
        }
        if (COLL_ASYNC_ALG_DELEGATE == module->algorithm[family] && !below) {
            /* A single process runs every family itself: nothing to say there. */
            mca_coll_async_show_help(0 == ompi_comm_rank(comm) && ompi_comm_size(comm) > 1,
                                     "delegate refused", coll_async_family_name(family),
                                     comm->c_name);
            module->algorithm[family] = COLL_ASYNC_ALG_AUTO;
        }
    }
}

static int choose_path(mca_coll_async_module_t *module, enum coll_async_coll coll,
                       struct ompi_communicator_t *comm)
{
    enum coll_async_family family = coll_async_family_of(coll);
    struct coll_async_decision_comm on = decision_comm(module, comm);
    bool can_delegate = NULL != below_module(&module->below, coll);

    if (coll_async_decision_native(family, module->algorithm[family], &on)) {
        module->path[coll] = COLL_ASYNC_PATH_NATIVE;
        return OMPI_SUCCESS;
    }
    if (can_delegate || on.intercomm) {
        /* On an intercommunicator with nothing below: a family MPI does not
         * define there is never called, and another job's (the mapper does
         * not reach it) fails at the call with a message (coll_async_dispatch.c)
         * unless a component enabled after this one provides it. */
        module->path[coll] = COLL_ASYNC_PATH_DELEGATED;
        return OMPI_SUCCESS;
    }
    mca_coll_async_show_help(0 == ompi_comm_rank(comm), "nothing below",
                             mca_coll_async_coll_names[coll], ompi_comm_size(comm), comm->c_name);
    return OMPI_ERR_NOT_SUPPORTED;
}

/* Where coll goes on this communicator, in words: "native" or "tuned". */
static const char *destination(mca_coll_async_module_t *module, enum coll_async_coll coll,
                               struct ompi_communicator_t *comm)
{
    const mca_coll_base_module_t *below = below_module(&module->below, coll);

    if (COLL_ASYNC_PATH_NATIVE == module->path[coll]) {
        return "native";
    }
    return NULL != below ? component_of(comm, below) : "nothing (none below)";
}

/*
 * One line per destination, e.g.
 *   coll:async: MPI_COMM_WORLD (cid 0, size 2): delegated to tuned: allgather allreduce ...
 * Rank 0 of the communicator prints at verbosity 1, every rank at 2.
 */
static void report_paths(mca_coll_async_module_t *module, struct ompi_communicator_t *comm)
{
    int level = 0 == ompi_comm_rank(comm) ? 1 : 2;
    bool reported[COLL_ASYNC_NUM_COLLS] = {false};

    if (opal_output_get_verbosity(mca_coll_async_output) < level) {
        return;
    }
    for (int first = 0; first < COLL_ASYNC_NUM_COLLS; ++first) {
        const char *where = destination(module, first, comm);
        char names[COLL_ASYNC_NUM_COLLS * 24] = "";

        if (reported[first]) {
            continue;
        }
        for (int coll = first; coll < COLL_ASYNC_NUM_COLLS; ++coll) {
            if (!reported[coll] && 0 == strcmp(where, destination(module, coll, comm))) {
                strcat(names, " ");
                strcat(names, mca_coll_async_coll_names[coll]);
                reported[coll] = true;
            }
        }
        opal_output_verbose(level, mca_coll_async_output,
                            "coll:async: %s (cid %u, size %d, rank %d): %s%s:%s", comm->c_name,
                            coll_async_comm_cid(comm), ompi_comm_size(comm), ompi_comm_rank(comm),
                            0 == strcmp(where, "native") ? "" : "delegated to ", where, names);
    }
}

/*
 * Families forced to an algorithm between nodes that this communicator cannot
 * run (it is on one node, or its nodes are a group the algorithm does not take):
 * their calls run as the table chooses instead, said once per communicator, e.g.
 *   coll:async: MPI_COMM_WORLD (cid 0, size 2): allreduce forced to ring, which
 *   runs between nodes, and the communicator is on one node: auto instead
 * (a schedule inside a node that its channel cannot run, single_copy without CMA,
 * is said once the channel is settled: mca_coll_async_module_report_settled).
 */
static void report_fallbacks(mca_coll_async_module_t *module, struct ompi_communicator_t *comm)
{
    int nodes = NULL != module->hier ? module->hier->node_count : 1;

    if (0 != ompi_comm_rank(comm) || 1 == ompi_comm_size(comm)) {
        return;
    }
    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES; ++family) {
        enum coll_async_alg alg = module->algorithm[family], instead;

        if (COLL_ASYNC_PATH_NATIVE != module->path[COLL_ASYNC_NUM_FORMS * family]
            || !coll_async_decision_fallback(family, alg, nodes, &instead)) {
            continue;
        }
        if (1 == nodes) {
            opal_output_verbose(1, mca_coll_async_output,
                                "coll:async: %s (cid %u, size %d): %s forced to %s, which runs "
                                "between nodes, and the communicator is on one node: %s "
                                "instead", comm->c_name, coll_async_comm_cid(comm),
                                ompi_comm_size(comm), coll_async_family_name(family),
                                coll_async_alg_names[alg], coll_async_alg_names[instead]);
        } else {
            opal_output_verbose(1, mca_coll_async_output,
                                "coll:async: %s (cid %u, size %d): %s forced to %s, which %d "
                                "nodes cannot run: %s instead", comm->c_name,
                                coll_async_comm_cid(comm), ompi_comm_size(comm),
                                coll_async_family_name(family), coll_async_alg_names[alg], nodes,
                                coll_async_alg_names[instead]);
        }
    }
}

void mca_coll_async_module_report_settled(mca_coll_async_module_t *module,
                                          struct ompi_communicator_t *comm)
{
    const struct coll_async_channel *channel = module->has_channel ? &module->channel
                                               : NULL != module->hier && module->hier->has_local
                                                   ? &module->hier->local
                                                   : NULL;
    bool cma;

    /* Open MPI itself may start a communicator's collectives from any thread that
     * runs its progress engine (a constructor's context-id agreement). Every
     * collective passes here: a plain load answers all but the first, with no
     * locked exchange. */
    if (NULL == channel || __atomic_load_n(&module->settle_reported, __ATOMIC_RELAXED)
        || NULL != __atomic_load_n(&module->stream.settle, __ATOMIC_ACQUIRE)
        || __atomic_exchange_n(&module->settle_reported, true, __ATOMIC_ACQ_REL)
        || coll_async_channel_failed(channel)) {
        return;
    }
    cma = coll_async_channel_single_copy(channel);
    opal_output_verbose(0 == ompi_comm_rank(comm) ? 1 : 2, mca_coll_async_output,
                        "coll:async: %s (cid %u, size %d, rank %d): shared memory settled, "
                        "large messages %s", comm->c_name, coll_async_comm_cid(comm),
                        ompi_comm_size(comm), ompi_comm_rank(comm),
                        cma ? "in one copy (CMA)" : "pipelined through the slots");
    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES && 0 == ompi_comm_rank(comm);
         ++family) {
        enum coll_async_alg alg = module->algorithm[family];

        if (COLL_ASYNC_PATH_NATIVE == module->path[COLL_ASYNC_NUM_FORMS * family]
            && coll_async_decision_shm_fallback(family, alg, cma)) {
            opal_output_verbose(1, mca_coll_async_output,
                                "coll:async: %s (cid %u, size %d): %s forced to %s, which "
                                "needs CMA between this node's ranks: auto inside the node",
                                comm->c_name, coll_async_comm_cid(comm), ompi_comm_size(comm),
                                coll_async_family_name(family), coll_async_alg_names[alg]);
        }
    }
}

struct coll_async_peers *mca_coll_async_module_peers(mca_coll_async_module_t *module,
                                                     struct ompi_communicator_t *comm)
{
    struct coll_async_peers *peers = &module->own_peers;
    int size = OMPI_COMM_IS_INTER(comm) ? ompi_comm_remote_size(comm) : ompi_comm_size(comm);
    int rc = OMPI_ERR_OUT_OF_RESOURCE;
    struct ompi_proc_t **procs;

    if (NULL != module->peers || NULL == mca_coll_async_network()) {
        return module->peers;
    }
    procs = calloc(size, sizeof(*procs));
    if (NULL != procs && 0 == coll_async_peers_alloc(peers, size)) {
        for (int rank = 0; rank < size; ++rank) {
            procs[rank] = ompi_comm_peer_lookup(comm, rank);
        }
        rc = mca_coll_async_network_add(procs, size, peers->id);
    }
    free(procs);
    if (OMPI_SUCCESS != rc) {
        opal_output_verbose(1, mca_coll_async_output,
                            "coll:async: %s (cid %u): a rank the mapper cannot reach (%d)",
                            comm->c_name, coll_async_comm_cid(comm), rc);
        coll_async_peers_free(peers);
        return NULL;
    }
    peers->net = mca_coll_async_network();
    peers->tag_base = (uint64_t) coll_async_comm_cid(comm) << 40;
    module->peers = peers;
    return peers;
}

#if COLL_ASYNC_FT
/* Under ULFM a process of the communicator has failed (its collectives are
 * revoked) or the communicator was revoked: the collectives in flight end with
 * MPI's error instead of waiting for the dead. Read by the progress thread too. */
static int comm_failed(void *owner)
{
    struct ompi_communicator_t *comm = owner;

    if (__atomic_load_n(&comm->comm_revoked, __ATOMIC_RELAXED)) {
        return MPI_ERR_REVOKED;
    }
    return __atomic_load_n(&comm->coll_revoked, __ATOMIC_RELAXED) ? MPI_ERR_PROC_FAILED : 0;
}
#endif

static int module_enable(mca_coll_base_module_t *base, struct ompi_communicator_t *comm)
{
    mca_coll_async_module_t *module = (mca_coll_async_module_t *) base;

    module->below = *comm->c_coll;
#if COLL_ASYNC_FT
    if (ompi_ftmpi_enabled) {
        module->stream.abandoned = module->agree_stream.abandoned = comm_failed;
        module->stream.owner = module->agree_stream.owner = comm;
    }
#endif
#if COLL_ASYNC_HAVE_AGREE
    /* A fault-tolerant agreement selected below (coll/ftagree) stays: this
     * module's is for where there is none. coll/basic's, which Open MPI selects
     * without ULFM, runs as this module's iallreduce, in the communicator's
     * order, where this one keeps an order of its own (coll_async_agree.c). */
    if (NULL != module->below.coll_agree
        && 0 == strcmp("ftagree", component_of(comm, module->below.coll_agree_module))) {
        module->super.coll_agree = NULL;
        module->super.coll_iagree = NULL;
    }
#    if COLL_ASYNC_FT
    else if (ompi_ftmpi_enabled && comm == &ompi_mpi_comm_world.comm) {
        mca_coll_async_show_help(0 == ompi_comm_rank(comm), "no fault-tolerant agreement");
    }
#    endif
#endif
    mca_coll_async_place_progress_thread(&mca_coll_async_component.config);
    mca_coll_async_node_report(comm);
    memcpy(module->algorithm, mca_coll_async_component.algorithm, sizeof(module->algorithm));
    mca_coll_async_hints_read(comm, module->algorithm);
    refuse_impossible_delegation(module, comm);
    if (OMPI_COMM_IS_INTER(comm)) {
        /* The remote group's ranks, over the mapper; the local group needs no
         * channel of its own (coll_async_intercomm.c). */
        (void) mca_coll_async_module_peers(module, comm);
    } else {
        open_channel(module, comm);
    }
    if (NULL != module->hier) {
        module->peers = &module->hier->peers;
    }
    for (int coll = 0; coll < COLL_ASYNC_NUM_COLLS; ++coll) {
        int rc = choose_path(module, coll, comm);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
    report_paths(module, comm);
    report_fallbacks(module, comm);
    mca_coll_async_settle_install(module, comm);
    coll_async_module_install(&module->super, comm);
    COLL_ASYNC_HANDED_OVER(module);
    return OMPI_SUCCESS;
}

/* The functions below this module's back on comm, where Open MPI leaves that to the
 * module (coll_async_compat.h). */
static int module_disable(mca_coll_base_module_t *base, struct ompi_communicator_t *comm)
{
    mca_coll_async_module_t *module = (mca_coll_async_module_t *) base;

    coll_async_module_uninstall(base, comm, &module->below);
    return OMPI_SUCCESS;
}

/* Whether every process of group has TCP open (a card with its address). */
static bool group_has_tcp(struct ompi_group_t *group)
{
    for (int rank = 0; rank < ompi_group_size(group); ++rank) {
        if (!mca_coll_async_network_tcp_with(ompi_group_peer_lookup(group, rank))) {
            return false;
        }
    }
    return true;
}

/* Whether the mapper reaches every rank of comm's remote group: processes of
 * this job always; those of another job (MPI_Comm_spawn, connect/accept) over
 * TCP, where every process of both groups opened it, which every one of them
 * reads alike from the cards: both groups take the same module, or neither. */
static bool reaches_remote_group(struct ompi_communicator_t *comm)
{
    bool foreign = false;

    if (NULL == mca_coll_async_network()) {
        return false;
    }
    for (int rank = 0; rank < ompi_comm_remote_size(comm); ++rank) {
        foreign = foreign || ompi_comm_peer_lookup(comm, rank)->super.proc_name.jobid
                                 != OMPI_PROC_MY_NAME->jobid;
    }
    return !foreign || (group_has_tcp(comm->c_local_group) && group_has_tcp(comm->c_remote_group));
}

/* The component's priority. On an intercommunicator one more, above
 * coll/inter (whose default equals async's), as it runs them all natively;
 * but where the mapper cannot reach the remote group, the lowest, so that any
 * other component that can take it overrides this module's functions. */
static int query_priority(struct ompi_communicator_t *comm)
{
    if (!OMPI_COMM_IS_INTER(comm)) {
        return mca_coll_async_component.priority;
    }
    return reaches_remote_group(comm) ? mca_coll_async_component.priority + 1 : 0;
}

mca_coll_base_module_t *mca_coll_async_comm_query(struct ompi_communicator_t *comm,
                                                  int *priority)
{
    mca_coll_async_module_t *module;

    if (mca_coll_async_component.priority < 0) {
        return NULL;
    }

    module = OBJ_NEW(mca_coll_async_module_t);
    if (NULL == module) {
        return NULL;
    }
    module->super.coll_module_enable = module_enable;
    coll_async_module_set_disable(&module->super, module_disable);
    mca_coll_async_dispatch_install(&module->super);
    *priority = query_priority(comm);
    return &module->super;
}
