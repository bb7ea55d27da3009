/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: building the hierarchy of a communicator that spans nodes. See
 * coll_async_hier.h.
 *
 * At the communicator's creation every rank reads every rank's place (node name,
 * NUMA domain) from the modex (coll_async_network.h) and all compute the same
 * hierarchy from the same data, exchanging no message: Open MPI may be creating
 * the communicator from inside its progress engine. The nodes are taken to be
 * alike (this node's NUMA domains and NICs stand for every node's).
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/output.h"

#include "coll_async.h"
#include "coll_async_card.h"
#include "coll_async_groups.h"
#include "coll_async_network.h"
#include "coll_async_numa.h"
#include "coll_async_topology.h"

int coll_async_hier_local_index(const struct coll_async_hier *hier, int rank)
{
    return coll_async_groups_index(hier->node_of, hier->node_first, hier->node_ranks, rank);
}

/* Every rank's place, from its card: node (numbered by first appearance in
 * comm) and NUMA domain; in *differs, the first rank whose card's tuning file
 * digest is not this rank's (-1: none). */
static int read_places(struct ompi_communicator_t *comm, struct coll_async_topology_place *places,
                       int *node_count, int *differs)
{
    int size = ompi_comm_size(comm), known = 0;
    const struct coll_async_card **cards = malloc(sizeof(*cards) * (size_t) size);
    int *renumbered = NULL; /* per node of the cards: its number in comm, or -1 */
    int rc = NULL == cards ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;

    *differs = -1;
    for (int rank = 0; rank < size && OMPI_SUCCESS == rc; ++rank) {
        cards[rank] = mca_coll_async_card_of(ompi_comm_peer_lookup(comm, rank));
        rc = NULL == cards[rank] ? OMPI_ERR_NOT_FOUND : OMPI_SUCCESS;
        known = OMPI_SUCCESS == rc && cards[rank]->node >= known ? cards[rank]->node + 1 : known;
        if (OMPI_SUCCESS == rc && *differs < 0
            && cards[rank]->tuning != mca_coll_async_card_mine()->tuning) {
            *differs = rank;
        }
    }
    if (OMPI_SUCCESS == rc && NULL == (renumbered = malloc(sizeof(int) * (size_t) known))) {
        rc = OMPI_ERR_OUT_OF_RESOURCE;
    }
    *node_count = 0;
    for (int node = 0; node < known && OMPI_SUCCESS == rc; ++node) {
        renumbered[node] = -1;
    }
    for (int rank = 0; rank < size && OMPI_SUCCESS == rc; ++rank) {
        int *node = &renumbered[cards[rank]->node];

        if (*node < 0) {
            *node = (*node_count)++;
        }
        places[rank].node = *node;
        places[rank].numa = cards[rank]->numa;
    }
    free(renumbered);
    free(cards);
    return rc;
}

/* Groups the ranks by node, ascending within one. */
static void group_by_node(struct coll_async_hier *hier,
                          const struct coll_async_topology_place *places)
{
    for (int rank = 0; rank < hier->size; ++rank) {
        hier->node_of[rank] = places[rank].node;
    }
    hier->rank_ordered = coll_async_groups_sort(hier->node_of, hier->size, hier->node_count,
                                                hier->node_first, hier->node_ranks);
    hier->node = hier->node_of[hier->rank];
    hier->local_rank = coll_async_hier_local_index(hier, hier->rank);
}

/*
 * The leaders: per node the ranks its NICs chose (coll_async_topology.h), each
 * once, in NIC order, the node's lowest rank when it has no NIC, then, up to
 * coll_async_leaders when that asks for more, other ranks of the node; as many
 * slots as the node with the fewest has, at most coll_async_leaders.
 */
/* Appends rank to chosen unless it is there already; the new count. */
static int add_once(int *chosen, int count, int rank)
{
    for (int j = 0; j < count; ++j) {
        if (chosen[j] == rank) {
            return count;
        }
    }
    chosen[count] = rank;
    return count + 1;
}

/* One node's leaders, at most limit of them; their count. */
static int node_leaders(const struct coll_async_topology_node *n, int most, int limit,
                        int *chosen)
{
    int count = 0;

    for (int i = 0; i < n->nic_count && count < limit; ++i) {
        count = add_once(chosen, count, n->nic_leaders[i]);
    }
    if (0 == count) {
        chosen[count++] = n->leader;
    }
    /* More leaders than NICs when asked: over TCP one stream is bound by one core,
     * so more ranks can move more between nodes. */
    for (int i = 0; i < n->rank_count && count < most && count < limit; ++i) {
        count = add_once(chosen, count, n->ranks[i]);
    }
    return count;
}

static int choose_leaders(struct coll_async_hier *hier,
                          const struct coll_async_topology_place *places, int most)
{
    const struct coll_async_topology *topo = mca_coll_async_node_topology();
    struct coll_async_topology_hierarchy *tree = NULL;
    struct coll_async_topology_node_desc *descs = calloc(hier->node_count, sizeof(*descs));
    int nic_count = NULL != topo ? topo->nic_count : 0;
    int *nic_numa = calloc(nic_count + 1, sizeof(int));
    int numa_count = NULL != topo ? topo->numa_count : 1, rc = -ENOMEM;

    /* Pretend domains (coll_async_virtual_numa) may outnumber the machine's. */
    for (int rank = 0; rank < hier->size; ++rank) {
        numa_count = places[rank].numa >= numa_count ? places[rank].numa + 1 : numa_count;
    }

    for (int i = 0; i < nic_count && NULL != nic_numa; ++i) {
        nic_numa[i] = topo->nics[i].numa;
    }
    for (int node = 0; node < hier->node_count && NULL != descs; ++node) {
        descs[node] = (struct coll_async_topology_node_desc){
            .numa_count = numa_count,
            .nic_count = nic_count,
            .nic_numa = nic_numa};
    }
    if (NULL != descs && NULL != nic_numa) {
        rc = coll_async_topology_hierarchy_build(places, hier->size, descs, hier->node_count,
                                                 &tree);
    }
    if (0 == rc) {
        hier->slots = COLL_ASYNC_HIER_MAX_SLOTS;
        if (0 < most && most < hier->slots) {
            hier->slots = most;
        }
        for (int node = 0; node < hier->node_count; ++node) {
            int count = node_leaders(&tree->nodes[node], most, hier->slots,
                                     &hier->leaders[node * COLL_ASYNC_HIER_MAX_SLOTS]);

            hier->slots = count < hier->slots ? count : hier->slots;
        }
        /* Compact to slots per node. */
        for (int node = 0; node < hier->node_count; ++node) {
            memmove(&hier->leaders[node * hier->slots],
                    &hier->leaders[node * COLL_ASYNC_HIER_MAX_SLOTS],
                    sizeof(int) * (size_t) hier->slots);
        }
    }
    coll_async_topology_hierarchy_free(tree);
    free(descs);
    free(nic_numa);
    return rc;
}

/* This rank's slot and the group of leaders it belongs to. */
static void join_group(struct coll_async_hier *hier)
{
    hier->slot = -1;
    for (int slot = 0; slot < hier->slots; ++slot) {
        if (hier->leaders[hier->node * hier->slots + slot] == hier->rank) {
            hier->slot = slot;
        }
    }
    if (hier->slot < 0) {
        return;
    }
    for (int node = 0; node < hier->node_count; ++node) {
        hier->group_peer[node] = hier->peers.id[hier->leaders[node * hier->slots + hier->slot]];
    }
    hier->group = (struct coll_async_leaders){.net = hier->peers.net,
                                              .size = hier->node_count,
                                              .rank = hier->node,
                                              .peer = hier->group_peer,
                                              .ring = hier->ring};
}

/* This node's NUMA split, where its ranks are in several domains, and then the
 * shared-memory channel of this node's ranks, when there are several, which
 * carries whether this rank opened the split's (coll_async_numa_split.c). */
static int open_local(struct coll_async_hier *hier, struct ompi_communicator_t *comm,
                      const struct coll_async_config *config)
{
    const int *ranks = &hier->node_ranks[hier->node_first[hier->node]];
    int count = coll_async_hier_node_size(hier, hier->node);

    if (count < 2) {
        return OMPI_SUCCESS;
    }
    hier->numa = mca_coll_async_numa_open(comm, ranks, count, hier->local_rank, config);
    if (OMPI_SUCCESS
        != mca_coll_async_segment_open(&hier->local, &config->channel, comm, ranks, count,
                                       hier->local_rank, COLL_ASYNC_SEGMENT_NODE,
                                       NULL != hier->numa && hier->numa->opened)) {
        mca_coll_async_numa_close(hier->numa);
        hier->numa = NULL;
        return OMPI_ERROR;
    }
    hier->has_local = true;
    return OMPI_SUCCESS;
}

static struct coll_async_hier *hier_alloc(int size, int nodes)
{
    struct coll_async_hier *hier = calloc(1, sizeof(*hier));

    if (NULL == hier) {
        return NULL;
    }
    hier->node_of = calloc(size, sizeof(int));
    hier->node_ranks = calloc(size, sizeof(int));
    hier->node_first = calloc(nodes + 1, sizeof(int));
    hier->leaders = calloc((size_t) nodes * COLL_ASYNC_HIER_MAX_SLOTS, sizeof(int));
    hier->group_peer = calloc(nodes, sizeof(uint32_t));
    if (NULL == hier->node_of || NULL == hier->node_ranks || NULL == hier->node_first
        || NULL == hier->leaders || 0 != coll_async_peers_alloc(&hier->peers, size)
        || NULL == hier->group_peer) {
        mca_coll_async_hier_close(hier);
        return NULL;
    }
    return hier;
}

/* Two lines: where the ranks are, and what runs between the nodes and why. */
static void report(const struct coll_async_hier *hier, struct ompi_communicator_t *comm)
{
    int level = 0 == hier->rank ? 1 : 2;
    char leaders[128] = "", allreduce[96], point_to_point[96], bcast[256], allgather[96];
    char reduce[96], barrier[96];
    int over_verbs = 0, over_tcp = 0;
    size_t used = 0;

    if (opal_output_get_verbosity(mca_coll_async_output) < level) {
        return;
    }
    for (int slot = 0; slot < hier->slots && used < sizeof(leaders); ++slot) {
        used += (size_t) snprintf(leaders + used, sizeof(leaders) - used, "%s%d",
                                  0 == slot ? "" : ",",
                                  hier->leaders[hier->node * hier->slots + slot]);
    }
    for (int rank = 0; rank < hier->size; ++rank) {
        if (hier->node_of[rank] != hier->node) {
            const char *via = coll_async_net_peer_via(hier->peers.net, hier->peers.id[rank]);

            over_verbs += 0 == strcmp("verbs", via);
            over_tcp += 0 == strcmp("tcp", via);
        }
    }
    opal_output_verbose(level, mca_coll_async_output,
                        "coll:async: %s (cid %u, size %d, rank %d): %d nodes, %d ranks on "
                        "this one (shared memory), %d leader%s per node (here ranks %s: one "
                        "per NIC, at most coll_async_leaders); ranks elsewhere reached over "
                        "verbs: %d, over TCP: %d (%s)",
                        comm->c_name, coll_async_comm_cid(comm), hier->size, hier->rank,
                        hier->node_count, coll_async_hier_node_size(hier, hier->node),
                        hier->slots, 1 == hier->slots ? "" : "s", leaders, over_verbs, over_tcp,
                        mca_coll_async_network_interfaces());
    /* The table's choices between nodes, as coll_async_decision_between() makes them. */
    coll_async_decision_describe(COLL_ASYNC_FAMILY_ALLREDUCE,
                                 hier->algorithm[COLL_ASYNC_FAMILY_ALLREDUCE], hier->node_count,
                                 allreduce, sizeof(allreduce));
    coll_async_decision_describe(COLL_ASYNC_FAMILY_BCAST, hier->algorithm[COLL_ASYNC_FAMILY_BCAST],
                                 hier->node_count, point_to_point, sizeof(point_to_point));
    mca_coll_async_hier_multicast_describe(hier, point_to_point, bcast, sizeof(bcast));
    coll_async_decision_describe(COLL_ASYNC_FAMILY_ALLGATHER,
                                 hier->algorithm[COLL_ASYNC_FAMILY_ALLGATHER], hier->node_count,
                                 allgather, sizeof(allgather));
    coll_async_decision_describe(COLL_ASYNC_FAMILY_REDUCE,
                                 hier->algorithm[COLL_ASYNC_FAMILY_REDUCE], hier->node_count,
                                 reduce, sizeof(reduce));
    coll_async_decision_describe(COLL_ASYNC_FAMILY_BARRIER,
                                 hier->algorithm[COLL_ASYNC_FAMILY_BARRIER], hier->node_count,
                                 barrier, sizeof(barrier));
    opal_output_verbose(level, mca_coll_async_output,
                        "coll:async: %s (cid %u): between %d nodes: allreduce %s (split over "
                        "the leaders from %zu B); bcast %s; allgather %s; reduce %s; "
                        "barrier %s",
                        comm->c_name, coll_async_comm_cid(comm), hier->node_count, allreduce,
                        hier->multi_leader_bytes, bcast, allgather, reduce, barrier);
    if (NULL != hier->tuning) {
        opal_output_verbose(level, mca_coll_async_output,
                            "coll:async: %s (cid %u): tuning file %s (%d rows, read alike by "
                            "every rank): its rows choose the leaders' algorithm where the "
                            "family's parameter is auto, the thresholds above elsewhere; the "
                            "first call each row chooses is said",
                            comm->c_name, coll_async_comm_cid(comm), hier->tuning_file,
                            hier->tuning->row_count);
    }
}

/* The tuning file's rows where every rank read the same ones (the digests on
 * their cards, which every rank compares alike: all use them or none does).
 * Where they differ, the job's first process says so once, and verbose level 1
 * per communicator. */
static int use_tuning(struct coll_async_hier *hier, struct ompi_communicator_t *comm,
                      const struct coll_async_config *config, int differs)
{
    static bool said;

    hier->tuning_file = config->tuning_file;
    if ('\0' == config->tuning_file[0]) {
        return OMPI_SUCCESS;
    }
    if (differs >= 0) {
        int other = hier->rank == differs ? 0 : differs;

        if (!said && mca_coll_async_first_process()) {
            said = true;
            mca_coll_async_show_help(true, "tuning file differs", config->tuning_file,
                                     comm->c_name, other, hier->rank);
        }
        opal_output_verbose(0 == hier->rank ? 1 : 2, mca_coll_async_output,
                            "coll:async: %s (cid %u): tuning file %s not used: rank %d read "
                            "other rows than rank %d (or none); the built-in thresholds choose",
                            comm->c_name, coll_async_comm_cid(comm), config->tuning_file, other,
                            hier->rank);
        return OMPI_SUCCESS;
    }
    if (NULL == config->tuning) {
        return OMPI_SUCCESS; /* refused everywhere: said at open */
    }
    hier->tuning_said = calloc((size_t) config->tuning->row_count + 1, 1);
    if (NULL == hier->tuning_said) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    hier->tuning = config->tuning;
    return OMPI_SUCCESS;
}

/* The hierarchy's data, before the shared memory of this node. */
static int build(struct coll_async_hier *hier, struct ompi_communicator_t *comm,
                 const struct coll_async_config *config,
                 const struct coll_async_topology_place *places, const char **why)
{
    struct ompi_proc_t **procs = calloc(hier->size, sizeof(*procs));
    int rc;

    hier->name = comm->c_name;
    hier->cid = coll_async_comm_cid(comm);
    hier->peers.net = mca_coll_async_network();
    hier->peers.tag_base = (uint64_t) coll_async_comm_cid(comm) << 40;
    hier->multi_leader_bytes = config->multi_leader_bytes;
    memcpy(hier->algorithm, config->algorithm, sizeof(hier->algorithm));
    group_by_node(hier, places);
    if (NULL == procs) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (int rank = 0; rank < hier->size; ++rank) {
        procs[rank] = ompi_comm_peer_lookup(comm, rank);
    }
    *why = "it has a process of another job, or one no transport of this process reaches";
    rc = mca_coll_async_network_add(procs, hier->size, hier->peers.id);
    free(procs);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    *why = "the leaders could not be chosen";
    if (0 != choose_leaders(hier, places, config->leaders)) {
        return OMPI_ERROR;
    }
    join_group(hier);
    return OMPI_SUCCESS;
}

struct coll_async_hier *mca_coll_async_hier_open(struct ompi_communicator_t *comm,
                                                const struct coll_async_config *config)
{
    int size = ompi_comm_size(comm), node_count = 0, rc;
    struct coll_async_topology_place *places = calloc(size, sizeof(*places));
    struct coll_async_hier *hier = NULL;
    const char *why = "a process published no place (out of memory, or no coll/async)";

    int differs = -1;

    rc = NULL == places ? OMPI_ERR_OUT_OF_RESOURCE
                        : read_places(comm, places, &node_count, &differs);
    if (OMPI_SUCCESS == rc) {
        why = "out of memory";
        hier = hier_alloc(size, node_count);
        rc = NULL == hier ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
    }
    if (OMPI_SUCCESS == rc) {
        hier->size = size;
        hier->rank = ompi_comm_rank(comm);
        hier->node_count = node_count;
        rc = build(hier, comm, config, places, &why);
    }
    if (OMPI_SUCCESS == rc) {
        rc = use_tuning(hier, comm, config, differs);
    }
    /* After the rows: where one names multicast, the group is set up. */
    if (OMPI_SUCCESS == rc) {
        why = "out of memory";
        rc = mca_coll_async_hier_multicast_open(hier, comm, config);
    }
    free(places);
    if (OMPI_SUCCESS == rc) {
        why = "no shared memory for the ranks of this node";
        rc = open_local(hier, comm, config);
    }
    if (OMPI_SUCCESS == rc) {
        report(hier, comm);
        if (config->profile_ring
            && OMPI_SUCCESS == mca_coll_async_profile_ring(comm, hier, &hier->ring)) {
            hier->group.ring = hier->ring; /* NULL where this rank took no part */
        }
        return hier;
    }
    /* Every rank meets the same cause, as they read the same modex; but for a
     * failure of this node's shared memory, which its ranks meet together. */
    opal_output_verbose(1, mca_coll_async_output,
                        "coll:async: %s (cid %u, size %d): spans nodes, but %s: delegated",
                        comm->c_name, coll_async_comm_cid(comm), size, why);
    mca_coll_async_hier_close(hier);
    return NULL;
}

void mca_coll_async_hier_close(struct coll_async_hier *hier)
{
    if (NULL == hier) {
        return;
    }
    mca_coll_async_hier_multicast_close(hier);
    mca_coll_async_numa_close(hier->numa);
    if (hier->has_local) {
        coll_async_channel_close(&hier->local);
    }
    free(hier->node_of);
    free(hier->node_ranks);
    free(hier->node_first);
    free(hier->leaders);
    coll_async_peers_free(&hier->peers);
    free(hier->group_peer);
    free(hier->ring);
    free(hier->tuning_said);
    free(hier);
}
