/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: a communicator's multicast group for bcast between nodes, as its
 * hierarchy holds it (coll_async_multicast.h): which bcasts use it, its
 * configuration, what verbose output says of it, and its close at
 * communicator free.
 *
 * Which bcasts go over multicast is decided alike on every rank of the
 * communicator from what they all know alike (the parameters, the node count,
 * the message size, and whether every leader published a verbs address in the
 * modex): the ranks of a node order their stages by it. Whether the group then
 * works is for the leaders to find out at the first such bcast; where it does
 * not, they fall back among themselves, and the other ranks see no difference.
 *
 * The group's id (hence its multicast address) and its key are derived from the
 * card key of the communicator's rank 0, which only the job's processes read in
 * the modex, and the communicator's context id: no one outside the job can
 * guess the group's address ahead of time or tag a packet for it.
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/output.h"

#include "coll_async.h"
#include "coll_async_card.h"
#include "coll_async_network.h"
#include "transport/coll_async_mcast_auth.h"

/* Leaders at verbose level 1: node 0's; the others at 2. */
static int level_of(const struct coll_async_hier *hier)
{
    return 0 == hier->node ? 1 : 2;
}

/* Whether every node's first leader published a verbs address. */
static bool leaders_have_verbs(const struct coll_async_hier *hier)
{
    for (int node = 0; node < hier->node_count; ++node) {
        if (!mca_coll_async_network_has_verbs(hier->peer[hier->leaders[node * hier->slots]])) {
            return false;
        }
    }
    return true;
}

/* multicast_from, and why multicast is off when it was asked for (or NULL). */
static const char *choose(struct coll_async_hier *hier)
{
    const mca_coll_async_component_t *c = &mca_coll_async_component;
    enum coll_async_alg alg = hier->algorithm[COLL_ASYNC_FAMILY_BCAST];

    hier->multicast_from = SIZE_MAX;
    if (COLL_ASYNC_ALG_MULTICAST != alg && COLL_ASYNC_ALG_AUTO != alg) {
        return NULL;
    }
    if (!coll_async_mcast_built()) {
        return "the component was built without rdma-core";
    }
    if (hier->node_count > COLL_ASYNC_MULTICAST_MAX_NODES) {
        return "more nodes than its set-up can number";
    }
    hier->multicast_from = coll_async_decision_multicast_from(
        alg, hier->node_count, c->mcast_min_nodes, c->mcast_min_bytes,
        COLL_ASYNC_ALG_AUTO == alg && leaders_have_verbs(hier));
    return NULL;
}

/* The group's verbose line, when the first multicast bcast has set it up. */
static void settled(void *context, bool usable, const char *what)
{
    struct coll_async_hier *hier = context;

    opal_output_verbose(level_of(hier), mca_coll_async_component.output,
                        "coll:async: %s (cid %u): bcast between %d nodes %s: %s", hier->name,
                        hier->cid, hier->node_count,
                        usable ? "over multicast, every leader attached"
                               : "point to point, multicast not used",
                        what);
}

int mca_coll_async_hier_multicast_open(struct coll_async_hier *hier,
                                       struct ompi_communicator_t *comm)
{
    mca_coll_async_component_t *c = &mca_coll_async_component;
    struct coll_async_multicast_config config = {
        .include = c->verbs_if_include,
        .exclude = c->verbs_if_exclude,
        .drop_fraction = c->mcast_drop_fraction,
        .verbs_only = COLL_ASYNC_ALG_AUTO == hier->algorithm[COLL_ASYNC_FAMILY_BCAST],
        .settled = settled,
        .context = hier};
    const struct coll_async_card *first;

    hier->multicast_off = choose(hier);
    if (SIZE_MAX == hier->multicast_from || 0 != hier->slot) {
        return OMPI_SUCCESS;
    }
    /* Every rank across nodes has rank 0's card: the hierarchy was built from it. */
    first = mca_coll_async_card_of(ompi_comm_peer_lookup(comm, 0));
    if (NULL == first) {
        return OMPI_ERR_NOT_FOUND;
    }
    coll_async_mcast_derive(&first->key, coll_async_comm_cid(comm), &config.group_id,
                            &config.key);
    hier->multicast = coll_async_multicast_new(&hier->group, &config);
    return NULL == hier->multicast ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
}

int mca_coll_async_hier_multicast_describe(const struct coll_async_hier *hier, const char *others,
                                           char *buf, size_t len)
{
    if (NULL != hier->multicast_off) {
        return snprintf(buf, len, "%s (multicast asked for, but %s)", others,
                        hier->multicast_off);
    }
    if (SIZE_MAX == hier->multicast_from) {
        return snprintf(buf, len, "%s", others);
    }
    return snprintf(buf, len, "%s, or over multicast from %zu B (point to point where the "
                    "group cannot be set up)", others, hier->multicast_from);
}

/* The close, as an op of the engine's driver: the leaders' barrier, then the
 * member leaves the group (coll_async_multicast_close_start). */
static int close_step(struct coll_async_op *op)
{
    int rc = coll_async_multicast_progress(op->plan);

    if (COLL_ASYNC_INTERNODE_AGAIN == rc) {
        return COLL_ASYNC_AGAIN;
    }
    return 0 == rc ? OMPI_SUCCESS : OMPI_ERROR;
}

void mca_coll_async_hier_multicast_close(struct coll_async_hier *hier)
{
    struct coll_async_multicast_call call = {.group = hier->multicast};
    struct coll_async_stream stream;
    struct coll_async_op op = {.stream = &stream, .step = close_step, .plan = &call, .root = -1};

    if (NULL == hier->multicast) {
        return;
    }
    if (coll_async_multicast_open(hier->multicast)) {
        /* Every rank has taken as many tags as this leader: the last one is theirs too. */
        call.tag = coll_async_hier_next_tag(hier);
        coll_async_stream_init(&stream);
        coll_async_multicast_close_start(&call);
        if (OMPI_SUCCESS != coll_async_engine_run_driven(&op, NULL)) {
            opal_output_verbose(1, mca_coll_async_component.output,
                                "coll:async: %s (cid %u): the leaders' barrier before leaving "
                                "the multicast group failed: %s", hier->name, hier->cid,
                                NULL != call.error ? call.error : "between nodes");
        }
        opal_output_verbose(level_of(hier), mca_coll_async_component.output,
                            "coll:async: %s (cid %u): left the multicast group: %s", hier->name,
                            hier->cid, coll_async_multicast_summary(hier->multicast));
    }
    /* The driver's exclusion: a member left behind touches the mapper as it goes. */
    coll_async_engine_hold();
    coll_async_multicast_free(hier->multicast);
    coll_async_engine_release();
    hier->multicast = NULL;
}
