/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the mapper.
 *
 * Puts one point-to-point transport (coll_async_transport.h) behind each peer:
 * the first, in the caller's order of preference, that reaches it (the mailbox
 * for a peer of this node, verbs or TCP for another's). The algorithms see one
 * service, tagged bulk transfers (coll_async_transport.h says what a tag
 * promises), whichever transport carries them; the engine's driver sees one
 * progress function and one fd to sleep on (a transport with no fd is polled
 * while an op is in flight), which also cover the one-to-many transports
 * attached later (a communicator's multicast group), since the driver's watch is
 * set once for the process. The mapper never knows which transports it holds.
 *
 * Not thread-safe: one thread at a time calls in (the engine's driver), but
 * coll_async_net_release, which any thread may call.
 * Pure C with no Open MPI dependency.
 */

#ifndef MCA_COLL_ASYNC_NET_H
#define MCA_COLL_ASYNC_NET_H

#include <stddef.h>
#include <stdint.h>

#include "coll_async_transport.h"

struct coll_async_net;

/* Where a peer published its address for one transport; NULL/0 where it did not. */
struct coll_async_net_blob {
    const void *data;
    size_t length;
};

/* Composes count point-to-point transports (1 .. COLL_ASYNC_NET_MAX_TRANSPORTS),
 * in order of preference; the mapper owns them from here on and destroys them,
 * at once when it fails. 0 or -errno (-EINVAL, owning nothing, for a bad count). */
#define COLL_ASYNC_NET_MAX_TRANSPORTS 4
int coll_async_net_create(struct coll_async_net **net, uint32_t nprocs,
                          struct coll_async_transport *const *transports, int count);
void coll_async_net_destroy(struct coll_async_net *net);

/* Chooses peer's transport: the first, in order of preference, that takes the
 * peer's blob for it (blobs[i] for transports[i] of create); key is the peer's
 * (coll_async_auth.h). 0, -EEXIST when already added, -ENETUNREACH when no
 * transport reaches it, or the last transport's -errno. */
int coll_async_net_add_peer(struct coll_async_net *net, uint32_t peer,
                            const struct coll_async_key *key,
                            const struct coll_async_net_blob *blobs);

/* The name of the transport that carries peer (its ops->name: "verbs", "tcp"),
 * "" when the peer was never added. */
const char *coll_async_net_peer_via(const struct coll_async_net *net, uint32_t peer);

/* What the mapper was asked to move since it was created: the transfers posted
 * (those that failed to post not counted) and their lengths. */
struct coll_async_net_counts {
    uint64_t sends, receives;
    uint64_t bytes_sent, bytes_received;
};
struct coll_async_net_counts coll_async_net_counts(const struct coll_async_net *net);

/* Bulk transfers on the peer's transport (coll_async_transport.h's send and recv). */
int coll_async_net_send_bulk(struct coll_async_net *net, uint32_t peer, uint64_t tag,
                             const void *data, size_t length,
                             struct coll_async_transfer *transfer);
int coll_async_net_recv_bulk(struct coll_async_net *net, uint32_t peer, uint64_t tag,
                             void *buffer, size_t length, struct coll_async_transfer *transfer);

/* A one-to-many transport the mapper drives with its own: its progress runs in
 * coll_async_net_progress, and its fd (readable while it has work) joins
 * coll_async_net_fd. The mapper does not own it. 0 or -errno. */
int coll_async_net_attach(struct coll_async_net *net, struct coll_async_transport *t);

/* Forgets an attached transport (its fd must still be open). */
void coll_async_net_detach(struct coll_async_net *net, struct coll_async_transport *t);

/* The transports' progress, attached ones included; how much they did (0: idle). */
int coll_async_net_progress(struct coll_async_net *net);

/* Readable while a transport has something to do. */
int coll_async_net_fd(const struct coll_async_net *net);

/* [address, address + length) is being released: every transport that keeps
 * something of memory (registrations) drops it. Safe from any thread. */
void coll_async_net_release(struct coll_async_net *net, const void *address, size_t length);

#endif /* MCA_COLL_ASYNC_NET_H */
