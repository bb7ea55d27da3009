/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the leaders' bcast over a UD multicast group
 * (transport/coll_async_mcast.h).
 *
 * One group per communicator that spans nodes, among the leaders of slot 0 (one
 * per node; a member's rank in the group is its node's index). No message may
 * be awaited while Open MPI creates a communicator (coll_async_hier.c), and the
 * address blobs exist only once a member's QP does, so the group is set up by
 * the first bcast that chooses multicast, as phases of that bcast:
 *
 *   create    the member's QP, and the join under way;
 *   addresses every leader's blob (or why it has none) allgathered over the
 *             mapper between nodes;
 *   attach    the members added, until this member is in the group;
 *   confirm   every leader's status allgathered, a barrier over the mapper: no
 *             root sends before every member is attached, and all leaders learn
 *             alike whether the group works.
 *
 * A working group carries that bcast and every later one that chooses
 * multicast; otherwise each leader says why, drops its member, and that bcast
 * and the later ones run the point-to-point bcast among the same leaders. A
 * group is closed when its communicator is freed, after a barrier of the
 * leaders: a receiver that left while a root still waited for its last
 * acknowledgement would fail the root's broadcast.
 *
 * The member is driven through the transport table (coll_async_transport.h):
 * its bcast, and the mapper's attach (coll_async_net_attach), so the driver's
 * progress and sleep cover it. Built with or without verbs: without, the
 * member's creation fails ("built without verbs") and the leaders fall back as
 * where one has no RDMA port.
 *
 * Runs on the engine's driver only, as the mapper does. Pure C, no Open MPI
 * header.
 */

#ifndef MCA_COLL_ASYNC_MULTICAST_H
#define MCA_COLL_ASYNC_MULTICAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll_async_internode.h"
#include "transport/coll_async_mcast.h"
#include "transport/coll_async_transport.h"

/* Largest group: the set-up's allgathers and a fallback bcast share one
 * collective's tag steps (3 per node and 64), and no larger group was ever
 * priced (bench/simulate has the root's acknowledgements cost more from 512). */
#define COLL_ASYNC_MULTICAST_MAX_NODES 1344
_Static_assert(3 * COLL_ASYNC_MULTICAST_MAX_NODES + 64 <= COLL_ASYNC_INTERNODE_TAG_STEPS,
               "a multicast set-up fits one collective's tags");

struct coll_async_multicast;

struct coll_async_multicast_config {
    const char *include, *exclude; /* RDMA ports, as coll_async_mcast_config has them */
    uint64_t group_id;             /* the same on every leader, unique among live groups */
    struct coll_async_key key;     /* the group key (both from coll_async_mcast_derive) */
    double drop_fraction;          /* tests only: received data packets discarded */
    bool verbs_only;               /* unusable unless verbs reaches every other leader */
    /* Called once, on the driver, when the set-up has decided: usable, with what
     * says where ("mcast 239.192.7.9 on rxe0:1 (10.77.0.1)"), or not, with what
     * says why. */
    void (*settled)(void *context, bool usable, const char *what);
    void *context;
};

/* One bcast, or the close, over a communicator's group. */
struct coll_async_multicast_call {
    /* Set by the caller before start. */
    struct coll_async_multicast *group;
    uint64_t tag;       /* the collective's base tag (set-up and fallback steps) */
    int root;           /* bcast: the root's group index */
    void *buf;
    size_t bytes;
    const char *error;  /* after a failure: why */

    /* Private. */
    int phase;
    bool posted;        /* the phase's transfer is under way */
    struct coll_async_internode x;
    struct coll_async_transfer transfer;
    char message[256];
};

/* The group's state among leaders, nothing set up yet: no message, no QP.
 * NULL when out of memory. */
struct coll_async_multicast *
coll_async_multicast_new(const struct coll_async_leaders *leaders,
                         const struct coll_async_multicast_config *config);

/* Frees what is left; the caller holds the driver's exclusion (a member not
 * closed by coll_async_multicast_close_start leaves the group here). */
void coll_async_multicast_free(struct coll_async_multicast *group);

/* Whether every leader attached: bcasts go over the group (else point to point). */
bool coll_async_multicast_ready(const struct coll_async_multicast *group);

/* Whether a member exists, to be closed after a barrier. */
bool coll_async_multicast_open(const struct coll_async_multicast *group);

/* "mcast 239.192.7.9 on rxe0:1 (10.77.0.1): 12 broadcasts; data packets: ...":
 * what the member did, kept after it closed; "" before it was set up. */
const char *coll_async_multicast_summary(const struct coll_async_multicast *group);

/* Starts a bcast (setting the group up first if needed), or the close (a
 * barrier of the leaders, then the member leaves the group). 0 or -errno. */
int coll_async_multicast_bcast_start(struct coll_async_multicast_call *call);
int coll_async_multicast_close_start(struct coll_async_multicast_call *call);

/* 0 done, COLL_ASYNC_INTERNODE_AGAIN, or -errno (call->error says why). What
 * a call takes it gives back before it returns anything but AGAIN. */
int coll_async_multicast_progress(struct coll_async_multicast_call *call);

#endif /* MCA_COLL_ASYNC_MULTICAST_H */
