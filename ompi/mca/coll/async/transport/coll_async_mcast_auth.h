/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: what makes a multicast group's packets its members' own
 * (transport/coll_async_mcast.h).
 *
 * A group's id, the IPv4 multicast address the transport derives from it, and
 * its key come from a secret only the job's processes read (the card key of
 * the communicator's rank 0, from the modex) and the communicator's context id:
 * no one outside the job can name the group ahead of time, let alone tag a
 * packet for it. Every packet a member receives passes two checks before the
 * protocol looks at it:
 *
 *  - its source: the member it names as its sender must be the one whose QP
 *    number (the completion's src_qp) and address its address blob carries,
 *    as the members exchanged them over the authenticated mapper between nodes:
 *    on RoCE the source in the network header (the GID of an IPv6 or IB GRH,
 *    the IPv4 source of RoCE v2 over IPv4), on InfiniBand the source LID. A
 *    host that joins the group sends from its own QP and address;
 *  - its tag: SipHash-2-4 under the group key over every header field (type,
 *    version, flags, state, sender, group, sequence; DATA: packet index, stamp,
 *    the broadcast's length, which fix the payload's offset and length; ACK and
 *    ROOT: count, ranges, echo, the ranges themselves). Not over the payload:
 *    SipHash runs at about 1.3 GB/s a core here against tens of GB/s for the
 *    copy a packet costs otherwise, which would cap every leader's multicast
 *    receive below what one RC stream carries, and the one who could swap a
 *    payload under a valid header (who sees the group's packets and sends with
 *    a member's source address and QP number) can forge RC traffic too.
 *
 * Pure C with no Open MPI or rdma-core dependency.
 */

#ifndef MCA_COLL_ASYNC_MCAST_AUTH_H
#define MCA_COLL_ASYNC_MCAST_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll_async_auth.h"

#define COLL_ASYNC_MCAST_GRH_BYTES 40 /* what a UD receive holds before the packet */

/* The group id and group key of the communicator with context id cid, from
 * secret (its rank 0's card key): the same on every member, different for
 * every communicator alive at once (a process's live communicators differ in
 * their context ids; split ones sharing an id differ in their rank 0). */
void coll_async_mcast_derive(const struct coll_async_key *secret, uint32_t cid,
                             uint64_t *group_id, struct coll_async_key *group_key);

/* Writes the tag of packet's first covered bytes into the 8 bytes at tag_at
 * (which it covers as zeros). */
void coll_async_mcast_seal(const struct coll_async_key *key, uint8_t *packet, size_t covered,
                           size_t tag_at);

/* Whether the tag at tag_at is right for packet's first covered bytes; zeros it
 * in packet (a received packet, the caller's to change). */
bool coll_async_mcast_tag_ok(const struct coll_async_key *key, uint8_t *packet, size_t covered,
                             size_t tag_at);

/* Whether the network header a RoCE UD receive starts with (grh, GRH_BYTES)
 * names gid as its source: an IPv6 or IB GRH's source GID, or, for RoCE v2 over
 * IPv4 (the IPv4 header in the last 20 bytes), the IPv4 address of an
 * IPv4-mapped gid. */
bool coll_async_mcast_source_is(const uint8_t *grh, const uint8_t *gid);

#endif /* MCA_COLL_ASYNC_MCAST_AUTH_H */
