/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the leaders' bcast over a UD multicast group. See
 * coll_async_multicast.h.
 *
 * Tag steps of a collective (base tag + step): the addresses' allgather from 0,
 * the confirming allgather from n, a point-to-point bcast from 2n, the close's
 * barrier from 0 (n leaders).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_async_multicast.h"

enum state {
    STATE_UNSET,    /* no member yet: the next bcast sets it up */
    STATE_READY,    /* every leader attached */
    STATE_UNUSABLE, /* the set-up failed: bcasts go point to point */
};

/* What each leader tells the others in the set-up's two allgathers. */
struct entry {
    int32_t status; /* network byte order: 0, or -errno and why */
    uint32_t blob_length;
    uint8_t blob[COLL_ASYNC_MCAST_ADDRESS_MAX];
    char why[160];
};

struct coll_async_multicast {
    struct coll_async_leaders leaders;
    struct coll_async_multicast_config config;
    enum state state;
    struct coll_async_mcast *member;     /* typed, for its queries */
    struct coll_async_transport *transport; /* the same member, for everything else */
    struct entry *entries;       /* [leaders.size] during the set-up */
    size_t *block_offset, *block_bytes;
    uint64_t broadcasts;
    char summary[400];
};

enum phase {
    PHASE_CREATE,
    PHASE_ADDRESSES,
    PHASE_ATTACH,
    PHASE_CONFIRM,
    PHASE_BCAST,
    PHASE_DONE,
    PHASE_BARRIER, /* the close, then done */
};

struct coll_async_multicast *
coll_async_multicast_new(const struct coll_async_leaders *leaders,
                         const struct coll_async_multicast_config *config)
{
    struct coll_async_multicast *group = calloc(1, sizeof(*group));

    if (NULL != group) {
        group->leaders = *leaders;
        group->config = *config;
    }
    return group;
}

/* The member leaves the group; what it did stays in the summary. */
static void leave(struct coll_async_multicast *group)
{
    struct coll_async_mcast_stats s;

    if (NULL == group->member) {
        return;
    }
    coll_async_mcast_stats(group->member, &s);
    snprintf(group->summary, sizeof(group->summary),
             "%s: %llu broadcasts; data packets: %llu sent, %llu resent, %llu received, %llu "
             "dropped on purpose (coll_async_mcast_drop_fraction), %llu duplicates; packets "
             "refused: %llu not from the member they name, %llu with a wrong tag",
             coll_async_mcast_describe(group->member), (unsigned long long) group->broadcasts,
             (unsigned long long) s.data_sent, (unsigned long long) s.data_resent,
             (unsigned long long) s.data_received, (unsigned long long) s.dropped,
             (unsigned long long) s.duplicates, (unsigned long long) s.wrong_source,
             (unsigned long long) s.bad_tag);
    coll_async_net_detach(group->leaders.net, group->transport);
    group->transport->ops->destroy(group->transport);
    group->member = NULL;
    group->transport = NULL;
}

static void free_setup(struct coll_async_multicast *group)
{
    free(group->entries);
    free(group->block_offset);
    free(group->block_bytes);
    group->entries = NULL;
    group->block_offset = group->block_bytes = NULL;
}

void coll_async_multicast_free(struct coll_async_multicast *group)
{
    if (NULL == group) {
        return;
    }
    leave(group);
    free_setup(group);
    free(group);
}

bool coll_async_multicast_ready(const struct coll_async_multicast *group)
{
    return STATE_READY == group->state;
}

bool coll_async_multicast_open(const struct coll_async_multicast *group)
{
    return NULL != group->member;
}

const char *coll_async_multicast_summary(const struct coll_async_multicast *group)
{
    return group->summary;
}

/* The set-up */

static struct entry *mine(const struct coll_async_multicast *group)
{
    return &group->entries[group->leaders.rank];
}

/* why may be entry->why, written already. */
static void set_status(struct entry *entry, int status, const char *why)
{
    entry->status = (int32_t) htonl((uint32_t) status);
    if (why != entry->why) {
        snprintf(entry->why, sizeof(entry->why), "%s", why);
    }
}

/* Why this leader refuses the group when verbs must reach every other leader
 * (auto's rule), or NULL. */
static const char *not_over_verbs(const struct coll_async_multicast *group)
{
    const struct coll_async_leaders *l = &group->leaders;

    for (int i = 0; i < l->size; ++i) {
        if (i != l->rank && 0 != strcmp("verbs", coll_async_net_peer_via(l->net, l->peer[i]))) {
            return "a leader of another node is not reached over verbs";
        }
    }
    return NULL;
}

static int alloc_setup(struct coll_async_multicast *group)
{
    int n = group->leaders.size;

    group->entries = calloc(n, sizeof(struct entry));
    group->block_offset = malloc(sizeof(size_t) * (size_t) n);
    group->block_bytes = malloc(sizeof(size_t) * (size_t) n);
    if (NULL == group->entries || NULL == group->block_offset || NULL == group->block_bytes) {
        free_setup(group);
        return -ENOMEM;
    }
    for (int i = 0; i < n; ++i) {
        group->block_offset[i] = sizeof(struct entry) * (size_t) i;
        group->block_bytes[i] = sizeof(struct entry);
    }
    return 0;
}

/* This leader's member, joining; its entry says how it went. */
static void create_member(struct coll_async_multicast *group)
{
    const struct coll_async_leaders *l = &group->leaders;
    struct coll_async_mcast_config config = {.include = group->config.include,
                                             .exclude = group->config.exclude,
                                             .group_id = group->config.group_id,
                                             .key = group->config.key,
                                             .self = (uint32_t) l->rank,
                                             .nranks = (uint32_t) l->size,
                                             .drop_fraction = group->config.drop_fraction,
                                             .drop_seed = group->config.group_id};
    struct entry *entry = mine(group);
    const char *refused = group->config.verbs_only ? not_over_verbs(group) : NULL;
    int rc, length;

    if (NULL != refused) {
        set_status(entry, -ENETUNREACH, refused);
        return;
    }
    rc = coll_async_mcast_create(&group->member, &config, entry->why, sizeof(entry->why));
    if (0 == rc) {
        group->transport = coll_async_mcast_transport(group->member);
        /* The mapper drives the member with its transports from here on. */
        rc = coll_async_net_attach(l->net, group->transport);
        if (0 != rc) {
            snprintf(entry->why, sizeof(entry->why), "its fd cannot be watched: %s",
                     strerror(-rc));
            group->transport->ops->destroy(group->transport);
            group->member = NULL;
            group->transport = NULL;
        }
    }
    if (0 != rc) {
        set_status(entry, rc, entry->why);
        return;
    }
    length = group->transport->ops->address(group->transport, entry->blob, sizeof(entry->blob));
    entry->blob_length = htonl((uint32_t) length);
    set_status(entry, 0, "");
}

/* The first leader whose entry failed, in words; NULL when none did. */
static const char *first_failure(struct coll_async_multicast_call *call)
{
    const struct coll_async_multicast *group = call->group;

    for (int i = 0; i < group->leaders.size; ++i) {
        const struct entry *entry = &group->entries[i];

        if (0 != entry->status) {
            snprintf(call->message, sizeof(call->message), "the leader of node %d: %.*s", i,
                     (int) sizeof(entry->why), entry->why);
            return call->message;
        }
    }
    return NULL;
}

/* Every leader decides alike, from the same entries. */
static void settle(struct coll_async_multicast_call *call, const char *failure)
{
    struct coll_async_multicast *group = call->group;

    if (NULL == failure) {
        group->state = STATE_READY;
    } else {
        group->state = STATE_UNUSABLE;
        leave(group);
        group->summary[0] = '\0';
    }
    if (NULL != group->config.settled) {
        group->config.settled(group->config.context, NULL == failure,
                              NULL == failure ? coll_async_mcast_describe(group->member)
                                              : failure);
    }
    free_setup(group);
}

static int add_members(struct coll_async_multicast *group)
{
    for (int i = 0; i < group->leaders.size; ++i) {
        const struct entry *entry = &group->entries[i];
        int rc;

        if (i == group->leaders.rank) {
            continue;
        }
        rc = group->transport->ops->add_peer(group->transport, (uint32_t) i, NULL, entry->blob,
                                             ntohl(entry->blob_length));
        if (0 != rc) {
            set_status(mine(group), rc, "a leader's address blob was refused");
            return rc;
        }
    }
    return 0;
}

/* attach: 0 once this member is in the group or has failed (its entry says),
 * else AGAIN. */
static int attach(struct coll_async_multicast_call *call)
{
    struct coll_async_multicast *group = call->group;
    const char *why = NULL;
    int rc;

    if (!call->posted) {
        call->posted = true;
        if (0 != add_members(group)) {
            return 0;
        }
    }
    rc = coll_async_mcast_attached(group->member, &why);
    if (0 == rc) {
        return COLL_ASYNC_INTERNODE_AGAIN;
    }
    if (rc < 0) {
        set_status(mine(group), rc, NULL != why ? why : "the join failed");
    }
    return 0;
}

/* The point-to-point parts */

/* Starts an internode collective of kind among the leaders at tag + step. */
static int start_internode(struct coll_async_multicast_call *call,
                           enum coll_async_family kind, uint64_t step)
{
    struct coll_async_multicast *group = call->group;
    bool entries = COLL_ASYNC_FAMILY_ALLGATHER == kind;

    call->x = (struct coll_async_internode){.group = &group->leaders,
                                            .tag = call->tag + step,
                                            .alg = COLL_ASYNC_ALG_AUTO,
                                            .buf = entries ? (void *) group->entries : call->buf,
                                            .bytes = call->bytes,
                                            .root = call->root,
                                            .block_offset = group->block_offset,
                                            .block_bytes = group->block_bytes};
    return coll_async_internode_start(&call->x, kind);
}

/* Runs the phase's internode collective, started on the first call. */
static int run_internode(struct coll_async_multicast_call *call,
                         enum coll_async_family kind, uint64_t step)
{
    int rc;

    if (!call->posted) {
        rc = start_internode(call, kind, step);
        if (0 != rc) {
            call->error = "out of memory between nodes";
            return rc;
        }
        call->posted = true;
    }
    rc = coll_async_internode_progress(&call->x);
    if (COLL_ASYNC_INTERNODE_AGAIN != rc) {
        call->error = call->x.error;
        coll_async_internode_fini(&call->x);
    }
    return rc;
}

/* The multicast itself */

/* The transfer's error, copied: the transport keeps it only until a later
 * broadcast fails. */
static int failed(struct coll_async_multicast_call *call, int rc)
{
    if (NULL == call->transfer.error) {
        call->error = NULL;
    } else {
        snprintf(call->message, sizeof(call->message), "%s", call->transfer.error);
        call->error = call->message;
    }
    return rc;
}

static int multicast(struct coll_async_multicast_call *call)
{
    struct coll_async_multicast *group = call->group;
    int rc;

    if (!call->posted) {
        call->transfer = (struct coll_async_transfer){.complete = NULL};
        rc = group->transport->ops->bcast(group->transport, (uint32_t) call->root, call->buf,
                                          call->bytes, &call->transfer);
        if (0 != rc) {
            return failed(call, rc);
        }
        call->posted = true;
        ++group->broadcasts;
    }
    if (COLL_ASYNC_TRANSFER_PENDING == call->transfer.status) {
        return COLL_ASYNC_INTERNODE_AGAIN;
    }
    return 0 == call->transfer.status ? 0 : failed(call, call->transfer.status);
}

/* The phases */

static int bcast_phase(struct coll_async_multicast_call *call)
{
    uint64_t n = (uint64_t) call->group->leaders.size;

    if (STATE_READY == call->group->state) {
        return multicast(call);
    }
    return run_internode(call, COLL_ASYNC_FAMILY_BCAST, 2 * n);
}

/* One phase's work: 0 when it is over, AGAIN, or -errno. */
static int run_phase(struct coll_async_multicast_call *call)
{
    struct coll_async_multicast *group = call->group;
    uint64_t n = (uint64_t) group->leaders.size;
    int rc;

    switch (call->phase) {
    case PHASE_CREATE:
        if (0 != alloc_setup(group)) {
            call->error = "out of memory for the multicast group";
            return -ENOMEM;
        }
        create_member(group);
        return 0;
    case PHASE_ADDRESSES:
        rc = run_internode(call, COLL_ASYNC_FAMILY_ALLGATHER, 0);
        if (0 == rc && NULL != first_failure(call)) {
            settle(call, call->message);
        }
        return rc;
    case PHASE_ATTACH:
        return attach(call);
    case PHASE_CONFIRM:
        rc = run_internode(call, COLL_ASYNC_FAMILY_ALLGATHER, n);
        if (0 == rc) {
            settle(call, first_failure(call));
        }
        return rc;
    case PHASE_BCAST:
        return bcast_phase(call);
    case PHASE_BARRIER:
        rc = run_internode(call, COLL_ASYNC_FAMILY_BARRIER, 0);
        if (COLL_ASYNC_INTERNODE_AGAIN != rc) {
            /* Past the barrier, or failed: either way no root waits for this member. */
            leave(group);
        }
        return rc;
    default:
        return 0;
    }
}

static enum phase next_phase(const struct coll_async_multicast_call *call)
{
    switch (call->phase) {
    case PHASE_ADDRESSES: /* a leader has no member: nothing to attach or confirm */
        return STATE_UNUSABLE == call->group->state ? PHASE_BCAST : PHASE_ATTACH;
    case PHASE_BCAST:
    case PHASE_BARRIER:
        return PHASE_DONE;
    default:
        return call->phase + 1;
    }
}

int coll_async_multicast_progress(struct coll_async_multicast_call *call)
{
    while (PHASE_DONE != call->phase) {
        int rc = run_phase(call);

        if (0 != rc) {
            if (rc < 0 && STATE_UNSET == call->group->state) {
                /* The leaders could not even agree: no group for this communicator.
                 * The entries stay until it is freed: a failed transfer may still
                 * point into them. */
                call->group->state = STATE_UNUSABLE;
                leave(call->group);
            }
            return rc;
        }
        call->posted = false;
        call->phase = next_phase(call);
    }
    return 0;
}

int coll_async_multicast_bcast_start(struct coll_async_multicast_call *call)
{
    call->error = NULL;
    call->posted = false;
    call->phase = STATE_UNSET == call->group->state ? PHASE_CREATE : PHASE_BCAST;
    return 0;
}

int coll_async_multicast_close_start(struct coll_async_multicast_call *call)
{
    call->error = NULL;
    call->posted = false;
    call->phase = PHASE_BARRIER;
    return 0;
}
