/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the shared-memory segment of a communicator's ranks on this node,
 * as the glue sets it up: its creator (the member with the lowest process name),
 * its identity from the cards (the creator's secret key, the communicator's id
 * and members), the launcher's cleanup of its file should the creator die, and
 * the reports of a failure. The checks of what is found in /dev/shm and the one
 * decision of all the ranks are the transport's (transport/coll_async_shm.h).
 *
 * Nothing here waits for another rank: Open MPI enables the modules of new
 * communicators one at a time per process, from its progress engine, so a wait
 * there for a peer would hold up every other communicator that process creates
 * meanwhile (threads creating communicators at once: each process enables them
 * in its own order). The segment is made and attached at the communicator's
 * first collective instead (coll_async_settle.c).
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/output.h"

#include "coll_async.h"
#include "coll_async_card.h"

static uint8_t *put_le32(uint8_t *p, uint32_t value)
{
    for (int i = 0; i < 4; ++i, value >>= 8) {
        p[i] = (uint8_t) value;
    }
    return p + 4;
}

/* The rank of comm at index i of ranks (NULL: every rank, in order). */
static int rank_at(const int *ranks, int i)
{
    return NULL == ranks ? i : ranks[i];
}

/*
 * What every listed rank knows alike of the segment's members, whatever its job:
 * which of the communicator's segments it is (the whole communicator's, or one
 * node's part of it) and its members, by process name, in order. The
 * communicator's id (the same on all its ranks, and unique among the live
 * communicators of each) tells apart communicators of the same members; those
 * that share an id (a split's parts) have other members; a communicator created
 * again with a freed one's id and members is not created until every rank has
 * returned from the set-up before it.
 */
static uint8_t *encode_members(struct ompi_communicator_t *comm, const int *ranks, int count,
                               enum coll_async_segment_role role, size_t *length)
{
    uint8_t *context, *p;

    *length = 1 + 4 + (size_t) count * 8;
    context = malloc(*length);
    if (NULL == context) {
        return NULL;
    }
    p = context;
    *p++ = (uint8_t) role;
    p = put_le32(p, (uint32_t) count);
    for (int i = 0; i < count; ++i) {
        const opal_process_name_t *name =
            &ompi_comm_peer_lookup(comm, rank_at(ranks, i))->super.proc_name;

        p = put_le32(p, name->jobid);
        p = put_le32(p, name->vpid);
    }
    return context;
}

/* Whether process name a comes before b: by job, then by rank in the job. */
static bool name_before(const opal_process_name_t *a, const opal_process_name_t *b)
{
    return a->jobid != b->jobid ? a->jobid < b->jobid : a->vpid < b->vpid;
}

/* The index, among the listed ranks, of the one with the lowest process name. */
static int creator_index(struct ompi_communicator_t *comm, const int *ranks, int count)
{
    int creator = 0;

    for (int i = 1; i < count; ++i) {
        if (name_before(&ompi_comm_peer_lookup(comm, rank_at(ranks, i))->super.proc_name,
                        &ompi_comm_peer_lookup(comm, rank_at(ranks, creator))->super.proc_name)) {
            creator = i;
        }
    }
    return creator;
}

/* The segment's identity, from the card of its creator, the listed rank at index
 * creator. Every listed rank must have a card: one without runs no coll/async
 * and would never attach, so all decline alike, at once. */
static int identify(struct coll_async_shm_identity *id, struct ompi_communicator_t *comm,
                    const int *ranks, int count, int creator_at, enum coll_async_segment_role role,
                    struct coll_async_shm_failure *failure)
{
    const struct coll_async_card *creator =
        mca_coll_async_card_of(ompi_comm_peer_lookup(comm, rank_at(ranks, creator_at)));
    uint8_t *members;
    size_t length;
    int rc;

    for (int i = 0; i < count; ++i) {
        if (NULL == mca_coll_async_card_of(ompi_comm_peer_lookup(comm, rank_at(ranks, i)))) {
            snprintf(failure->why, sizeof(failure->why),
                     "rank %d published no coll/async card (it does not run this component)",
                     rank_at(ranks, i));
            failure->together = true;
            return OMPI_ERR_NOT_SUPPORTED;
        }
    }
    members = encode_members(comm, ranks, count, role, &length);
    rc = NULL == members ? -ENOMEM
                         : coll_async_shm_identify(id, &creator->key, members, length,
                                                   coll_async_comm_cid(comm));
    free(members);
    if (0 != rc) {
        snprintf(failure->why, sizeof(failure->why), "out of memory");
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    return OMPI_SUCCESS;
}

/* This rank's failure at creation, which the others meet only at their first
 * collective: the channel stays, failed, and every rank's collectives on it fail
 * alike from the first (mca_coll_async_segment_settle), each saying why, since
 * Open MPI shows one rank's help message of a topic and drops the others'. The
 * transport keeps its own failures; this one (identify()'s) came before it. */
static void fail_alone(struct coll_async_channel *channel, struct ompi_communicator_t *comm,
                       int rc, const char *path, const struct coll_async_shm_failure *failure)
{
    if (channel->shm.settled >= 0) {
        channel->shm.settled = rc < 0 ? rc : -EPROTO;
    }
    if ('\0' == channel->shm.why[0]) {
        snprintf(channel->shm.why, sizeof(channel->shm.why), "%s", failure->why);
    }
    opal_output_verbose(1, mca_coll_async_output,
                        "coll:async: %s (cid %u, size %d, rank %d): could not set up %s: %s",
                        comm->c_name, coll_async_comm_cid(comm), ompi_comm_size(comm),
                        ompi_comm_rank(comm), path, failure->why);
}

int mca_coll_async_segment_open(struct coll_async_channel *channel,
                                const struct coll_async_channel_config *config,
                                struct ompi_communicator_t *comm, const int *ranks, int count,
                                int index, enum coll_async_segment_role role, bool vote)
{
    int creator = creator_index(comm, ranks, count);
    struct coll_async_shm_failure failure = {.speaker = creator == index};
    struct coll_async_shm_identity id;
    char path[sizeof("/dev/shm") + COLL_ASYNC_SHM_NAME_MAX] = "(none)";
    int rc;

    memset(channel, 0, sizeof(*channel)); /* whatever fails, it closes alike */
    rc = identify(&id, comm, ranks, count, creator, role, &failure);
    if (OMPI_SUCCESS == rc) {
        coll_async_shm_path(&id, path, sizeof(path));
        rc = coll_async_channel_open(channel, &id, count, index, creator, vote ? 1 : 0, config,
                                     &failure);
    }
    if (0 == rc) {
        /* Should the creator die before it removes its file, the launcher's daemon
         * removes it (vader asks the same). Asked when the file is about to be
         * made: the request is a round trip to the daemon (asked at creation, it
         * tripled MPI_Comm_dup's time), and a communicator that runs no
         * collective, or reuses a parked segment, makes no file. */
        channel->shm.before_create = coll_async_remove_at_exit;
        return OMPI_SUCCESS;
    }
    if (!failure.together) {
        fail_alone(channel, comm, rc, path, &failure);
        return OMPI_SUCCESS;
    }
    opal_output_verbose(failure.speaker ? 1 : 2, mca_coll_async_output,
                        "coll:async: %s (cid %u, size %d, rank %d): no shared memory for its %d "
                        "ranks on this node (%s): %s", comm->c_name, coll_async_comm_cid(comm),
                        ompi_comm_size(comm), ompi_comm_rank(comm), count, path, failure.why);
    mca_coll_async_show_help(failure.speaker, "shm failed", comm->c_name, count, path,
                             failure.why);
    return OMPI_ERROR;
}

int mca_coll_async_segment_settle(struct coll_async_channel *channel,
                                  struct ompi_communicator_t *comm,
                                  struct coll_async_failure *said)
{
    struct coll_async_shm_failure failure = {.speaker = false};
    int rc = coll_async_channel_settle(channel, &failure);

    if (rc < 0) {
        /* The transport says why, every time: a failure this rank met at
         * creation too. */
        coll_async_failure_record(said, "shm unsettled", comm->c_name, ompi_comm_rank(comm),
                                  failure.why);
    }
    return rc;
}
