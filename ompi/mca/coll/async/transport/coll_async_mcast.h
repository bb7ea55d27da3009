/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the UD multicast transport (rdma-core, librdmacm).
 *
 * Reliable one-to-many broadcast inside one group of nranks members (one group
 * per communicator). Each member owns one UD QP, joined with rdma_cm to the IPv4
 * multicast group derived from a group id all members agree on (239.192.0.0/14;
 * every packet also carries the full id, so two ids that share an address never
 * mix). The id and the group key come from a secret of the job's
 * (coll_async_mcast_derive): a member takes a packet only when its source is the
 * member it names, as the members' address blobs say, and its tag under the group
 * key is right (coll_async_mcast_auth.h); what fails is counted and dropped.
 *
 * A broadcast's root sends the buffer into the group as MTU-sized packets, each
 * carrying (broadcast sequence, packet index); receivers place each payload
 * straight at its offset and acknowledge to the root by unicast UD, to the QP
 * named in the root's address blob (the caller exchanges the blobs, over the
 * authenticated transports, as for the RC transport). The reliability protocol:
 *
 *  - sequences: the i-th broadcast posted on a member has sequence i; members
 *    post broadcasts in the same order (as MPI collectives are), so a sequence
 *    names one broadcast everywhere;
 *  - window: the root has at most `window` packets beyond the slowest receiver's
 *    cumulative acknowledgement, so a receiver tracks its packets in a window-bit
 *    ring and memory stays bounded whatever the length;
 *  - acknowledgements: a receiver acks cumulatively every window/4 packets and
 *    when it has everything, reports gaps (ranges of missing packets) when it sees
 *    one, at most every resend_timeout/4, and reports its state when it has heard
 *    nothing for resend_timeout (backing off); the root resends a gap into the
 *    group (who has it drops the duplicate) when the report proves its last
 *    sending lost (the report echoes the newest packet that came, and packets
 *    arrive in the order sent), and when no acknowledgement moved for
 *    resend_timeout it resends the slowest receiver's first missing packet marked
 *    "answer me" (backing off while receivers say they have not posted yet);
 *  - early packets: packets of a broadcast this member has not posted yet go to a
 *    staging pool of `window` packets, copied in on the post. The root sends no
 *    more than `window` packets to a receiver that has acknowledged nothing, so
 *    the pool holds one early broadcast whole; what does not fit is dropped and
 *    comes back through the gap reports;
 *  - failure: a member that answers nothing for failure_timeout_ms (the root for
 *    its receivers, a receiver for the root, which pokes it at least every
 *    failure_timeout_ms/4) fails the broadcast with -ETIMEDOUT and a message
 *    naming it. A member alive but not yet posted says so, and is waited for.
 *
 * The root's broadcast completes when every receiver has acknowledged every
 * packet; a receiver's when it holds every packet (it keeps answering the root
 * about finished broadcasts, so the root can finish too). Several broadcasts,
 * from any roots, may be in flight (COLL_ASYNC_MCAST_MAX_ACTIVE at once; later
 * posts wait their turn). A broadcast of 0 bytes sends nothing: it completes at
 * once on every member (the sequence is consumed alike everywhere).
 *
 * Joining is asynchronous: coll_async_mcast_attached() says when this member is
 * in the group. Packets sent before a member attached are lost to it and come
 * back through resends, but for speed the caller attaches every member before
 * the first broadcast (a barrier over another transport once all report
 * attached).
 *
 * The member is a transport (coll_async_transport.h) that fills bcast: every
 * broadcast is a struct coll_async_transfer and completes inside the table's
 * progress, which does a bounded amount of nonblocking work; a thread with
 * nothing to do sleeps on its fd (completions, rdma_cm events and resend
 * timers).
 *
 * Not thread-safe: one thread at a time calls in (the engine's driver).
 * Pure C with no Open MPI dependency.
 */

#ifndef MCA_COLL_ASYNC_MCAST_H
#define MCA_COLL_ASYNC_MCAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll_async_auth.h"
#include "coll_async_transport.h"

#define COLL_ASYNC_MCAST_ADDRESS_MAX 28 /* blob bytes */
#define COLL_ASYNC_MCAST_MAX_ACTIVE 4   /* broadcasts in flight at once */

struct coll_async_mcast;

struct coll_async_mcast_config {
    /* Where to join: the RDMA port behind the IPv4 address `address` (dotted
     * quad) or, when address is NULL or "", the first port the filter keeps that
     * has an IPv4 address. The filter is the RC transport's
     * (coll_async_port_filter.h): comma-separated "device" or "device:port";
     * include and exclude are mutually exclusive; NULL or "" when not given. */
    const char *address;
    const char *include, *exclude;
    uint64_t group_id;        /* the same on every member; names the group */
    struct coll_async_key key; /* the group key, the same on every member: tags */
    uint32_t self, nranks;    /* this member's rank; ranks are below nranks */
    size_t mtu;               /* packet bytes, headers included; 0 (or more than the
                                 port's active MTU): the port's active MTU */
    int window;               /* packets in flight per broadcast; 0: 128 */
    int resend_timeout_ms;    /* 0: 10 ms */
    int failure_timeout_ms;   /* a silent member fails the broadcast after; 0: 5 s */
    /* Tests only: receivers discard this fraction (0..1) of the data packets they
     * receive, chosen by a pseudo-random sequence seeded by drop_seed and the
     * rank, so loss can be forced where the network loses nothing. */
    double drop_fraction;
    uint64_t drop_seed;
};

/* Counters since create, for tests, benchmarks and verbose output. */
struct coll_async_mcast_stats {
    uint64_t data_sent;      /* data packets sent the first time */
    uint64_t data_resent;    /* data packets sent again */
    uint64_t data_received;  /* data packets taken (new to this member) */
    uint64_t duplicates;     /* data packets this member already had */
    uint64_t dropped;        /* data packets discarded by drop_fraction */
    uint64_t staged;         /* data packets kept for a broadcast not yet posted */
    uint64_t acks_sent, acks_received;
    uint64_t gap_reports;    /* acknowledgements that named missing packets */
    uint64_t timeouts;       /* resend timers that fired */
    uint64_t reordered;      /* first sendings that came after a later packet */
    uint64_t wrong_source;   /* packets of the group not from the member they name */
    uint64_t bad_tag;        /* packets from a member's source with a wrong tag */
};

/* Creates the QP and starts joining the group. 0, -ENODEV when no usable RDMA
 * port has an IPv4 address (or none matches address or the filter), -ENOTSUP
 * where the component was built without verbs, or -errno; why says what
 * failed. */
int coll_async_mcast_create(struct coll_async_mcast **mcast,
                            const struct coll_async_mcast_config *config, char *why,
                            size_t why_len);

/* The member as a transport (coll_async_transport.h), what everything but the
 * queries below goes through:
 *
 *  - bcast posts the group's next broadcast: root sends length bytes from
 *    buffer, every other member receives them into its buffer (of the same
 *    length). -errno: not posted (bad argument, or a member's blob is missing;
 *    the transfer's error says which) and no sequence consumed;
 *  - add_peer tells it where member peer is, from its blob (the key is not
 *    used: the group key tags every packet). Every member's blob is needed
 *    before the first broadcast. 0, -EINVAL (bad rank or blob) or -EEXIST;
 *  - address is this member's blob (GID, LID and QP number, for the
 *    acknowledgements), at most COLL_ASYNC_MCAST_ADDRESS_MAX bytes;
 *  - fd is readable while progress has something to do, resend timers included;
 *  - destroy leaves the group and frees everything; broadcasts still in flight
 *    complete with -ECANCELED. A member destroyed while a root still waits for
 *    its last acknowledgement cannot repeat it: destroy once every member's
 *    broadcasts have completed (after a barrier over another transport).
 *
 * A failed broadcast's error stays valid until destroy or until a later
 * broadcast fails: a caller that keeps it longer copies it. */
struct coll_async_transport *coll_async_mcast_transport(struct coll_async_mcast *mcast);

/* 1 once this member is in the group, 0 while the join is under way, -errno when
 * it failed (why, if not NULL, says why). */
int coll_async_mcast_attached(const struct coll_async_mcast *mcast, const char **why);

/* Packet bytes (the MTU in use), and the payload bytes each carries (less the header). */
size_t coll_async_mcast_mtu(const struct coll_async_mcast *mcast);
size_t coll_async_mcast_payload(const struct coll_async_mcast *mcast);

/* The multicast group's address ("239.x.y.z") and the device:port in use, for
 * verbose output and messages. */
const char *coll_async_mcast_describe(const struct coll_async_mcast *mcast);

void coll_async_mcast_stats(const struct coll_async_mcast *mcast,
                            struct coll_async_mcast_stats *stats);

/* Whether this build has the transport (rdma-core): where it has not,
 * coll_async_mcast_absent.c stands in and create fails. */
bool coll_async_mcast_built(void);

#endif /* MCA_COLL_ASYNC_MCAST_H */
