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

/* The hierarchy's multicast state, at hier->multicast: the same on every rank
 * but for the group, which only slot 0's leaders hold. */
struct coll_async_hier_multicast {
    /* bcasts of at least this many bytes (and more than 0) go over the leaders'
     * multicast group; SIZE_MAX: none. */
    size_t from;
    const char *off; /* why not, where the parameter asked for it; or NULL */
    /* A bcast row of the tuning file names multicast for this node count (the
     * family's value auto): rows, the group is set up for the sizes they cover;
     * else rows_off says why those sizes go point to point. */
    bool rows;
    const char *rows_off;
    struct coll_async_multicast *group; /* slot 0's leaders, when from says */
};

/* Leaders at verbose level 1: node 0's; the others at 2. */
static int level_of(const struct coll_async_hier *hier)
{
    return 0 == hier->node ? 1 : 2;
}

/* Whether every node's first leader published a verbs address. */
static bool leaders_have_verbs(const struct coll_async_hier *hier)
{
    for (int node = 0; node < hier->node_count; ++node) {
        if (!mca_coll_async_network_has_verbs(hier->peers.id[hier->leaders[node * hier->slots]])) {
            return false;
        }
    }
    return true;
}

/* Whether the tuning file's rows may send bcasts over multicast (state->rows),
 * else why not (state->rows_off): a row names it for this node count, and the
 * group can be set up as auto sets it up, over verbs. From the cards and the
 * rows, which every rank has alike. */
static void choose_rows(struct coll_async_hier_multicast *state,
                        const struct coll_async_hier *hier, enum coll_async_alg alg)
{
    state->rows = false;
    state->rows_off = NULL;
    if (COLL_ASYNC_ALG_AUTO != alg
        || !coll_async_tuning_names(hier->tuning, COLL_ASYNC_FAMILY_BCAST,
                                    COLL_ASYNC_ALG_MULTICAST, hier->node_count)) {
        return;
    }
    if (!coll_async_mcast_built()) {
        state->rows_off = "the component was built without rdma-core";
    } else if (hier->node_count > COLL_ASYNC_MULTICAST_MAX_NODES) {
        state->rows_off = "more nodes than its set-up can number";
    } else if (!leaders_have_verbs(hier)) {
        state->rows_off = "not every node's leader has an RDMA port";
    } else {
        state->rows = true;
    }
}

/* state->from and state->rows, and why multicast is off when it was asked for
 * (or NULL). */
static const char *choose(struct coll_async_hier_multicast *state,
                          const struct coll_async_hier *hier,
                          const struct coll_async_config *config)
{
    enum coll_async_alg alg =
        coll_async_decision_leaders(hier->algorithm[COLL_ASYNC_FAMILY_BCAST]);

    state->from = SIZE_MAX;
    choose_rows(state, hier, alg);
    if (COLL_ASYNC_ALG_MULTICAST != alg && COLL_ASYNC_ALG_AUTO != alg) {
        return NULL;
    }
    if (!coll_async_mcast_built()) {
        return "the component was built without rdma-core";
    }
    if (hier->node_count > COLL_ASYNC_MULTICAST_MAX_NODES) {
        return "more nodes than its set-up can number";
    }
    state->from = coll_async_decision_multicast_from(
        alg, hier->node_count, config->multicast.min_nodes, config->multicast.max_nodes,
        config->multicast.min_bytes,
        COLL_ASYNC_ALG_AUTO == alg && leaders_have_verbs(hier));
    return NULL;
}

/* The group's verbose line, when the first multicast bcast has set it up: on the
 * thread that ran it, which may be the progress thread, so said later. */
static void settled(void *context, bool usable, const char *what)
{
    struct coll_async_hier *hier = context;

    mca_coll_async_say_later(level_of(hier),
                             "coll:async: %s (cid %u): bcast between %d nodes %s: %s", hier->name,
                             hier->cid, hier->node_count,
                             usable ? "over multicast, every leader attached"
                                    : "point to point, multicast not used",
                             what);
}

int mca_coll_async_hier_multicast_open(struct coll_async_hier *hier,
                                       struct ompi_communicator_t *comm,
                                       const struct coll_async_config *settings)
{
    struct coll_async_multicast_config config = {
        .include = settings->multicast.include,
        .exclude = settings->multicast.exclude,
        .drop_fraction = settings->multicast.drop_fraction,
        .verbs_only = COLL_ASYNC_ALG_AUTO
                      == coll_async_decision_leaders(hier->algorithm[COLL_ASYNC_FAMILY_BCAST]),
        .settled = settled,
        .context = hier};
    const struct coll_async_card *first;
    struct coll_async_hier_multicast *state = calloc(1, sizeof(*state));

    if (NULL == state) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    hier->multicast = state;
    state->off = choose(state, hier, settings);
    if ((SIZE_MAX == state->from && !state->rows) || 0 != hier->slot) {
        return OMPI_SUCCESS;
    }
    /* Every rank across nodes has rank 0's card: the hierarchy was built from it. */
    first = mca_coll_async_card_of(ompi_comm_peer_lookup(comm, 0));
    if (NULL == first) {
        return OMPI_ERR_NOT_FOUND;
    }
    coll_async_mcast_derive(&first->key, coll_async_comm_cid(comm), &config.group_id,
                            &config.key);
    state->group = coll_async_multicast_new(&hier->group, &config);
    return NULL == state->group ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
}

bool mca_coll_async_hier_multicast_takes(const struct coll_async_hier *hier, size_t bytes)
{
    const struct coll_async_tuning_row *row;

    if (NULL == hier->multicast || 0 == bytes) {
        return false;
    }
    /* Where a row of the tuning file chooses the bcast, the row's algorithm runs:
     * multicast where the group is set up for the rows, else point to point. */
    row = coll_async_tuning_choose(hier->tuning, COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_FAMILY_BCAST,
                                   hier->algorithm[COLL_ASYNC_FAMILY_BCAST], hier->node_count,
                                   bytes);
    if (NULL != row) {
        return COLL_ASYNC_ALG_MULTICAST == row->alg && hier->multicast->rows;
    }
    return bytes >= hier->multicast->from;
}

const char *mca_coll_async_hier_multicast_rows_off(const struct coll_async_hier *hier)
{
    return NULL != hier->multicast && NULL != hier->multicast->rows_off
               ? hier->multicast->rows_off
               : "nothing to send";
}

struct coll_async_multicast *mca_coll_async_hier_multicast_group(const struct coll_async_hier *hier)
{
    return NULL != hier->multicast ? hier->multicast->group : NULL;
}

int mca_coll_async_hier_multicast_describe(const struct coll_async_hier *hier, const char *others,
                                           char *buf, size_t len)
{
    const struct coll_async_hier_multicast *state = hier->multicast;

    if (NULL != state && NULL != state->rows_off) {
        return snprintf(buf, len, "%s (the tuning file's rows name multicast, but %s)", others,
                        state->rows_off);
    }
    if (NULL != state && NULL != state->off) {
        return snprintf(buf, len, "%s (multicast asked for, but %s)", others, state->off);
    }
    if (NULL != state && state->rows) {
        return snprintf(buf, len, "%s, or over multicast where the tuning file's rows name it "
                        "(point to point where the group cannot be set up)", others);
    }
    if (NULL == state || SIZE_MAX == state->from) {
        return snprintf(buf, len, "%s", others);
    }
    return snprintf(buf, len, "%s, or over multicast from %zu B (point to point where the "
                    "group cannot be set up)", others, state->from);
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
    struct coll_async_hier_multicast *state = hier->multicast;
    struct coll_async_multicast_call call = {.group = mca_coll_async_hier_multicast_group(hier)};
    struct coll_async_stream stream;
    struct coll_async_op op = {.stream = &stream, .step = close_step, .plan = &call};

    hier->multicast = NULL;
    if (NULL == call.group) {
        free(state);
        return;
    }
    if (coll_async_multicast_open(call.group)) {
        /* Every rank has taken as many tags as this leader: the last one is theirs too. */
        call.tag = coll_async_peers_next_tag(&hier->peers);
        coll_async_stream_init(&stream);
        coll_async_multicast_close_start(&call);
        if (OMPI_SUCCESS != coll_async_engine_run_driven(&op, NULL)) {
            opal_output_verbose(1, mca_coll_async_output,
                                "coll:async: %s (cid %u): the leaders' barrier before leaving "
                                "the multicast group failed: %s", hier->name, hier->cid,
                                NULL != call.error ? call.error : "between nodes");
        }
        opal_output_verbose(level_of(hier), mca_coll_async_output,
                            "coll:async: %s (cid %u): left the multicast group: %s", hier->name,
                            hier->cid, coll_async_multicast_summary(call.group));
    }
    /* The driver's exclusion: a member left behind touches the mapper as it goes. */
    coll_async_engine_hold();
    coll_async_multicast_free(call.group);
    coll_async_engine_release();
    free(state);
}
