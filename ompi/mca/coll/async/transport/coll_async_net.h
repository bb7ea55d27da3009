/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the mapper between nodes.
 *
 * Puts one transport behind each peer on another node: verbs RC when one of our
 * ports shares a subnet with one of the peer's, TCP otherwise. The leaders'
 * algorithms see one service, tagged bulk transfers (coll_async_tcp.h says what
 * a tag promises), whichever transport carries them; the engine's driver sees
 * one progress function and one fd to sleep on, which also cover the sources
 * attached later (a communicator's multicast group), since the driver's watch
 * is set once for the process.
 *
 * Not thread-safe: one thread at a time calls in (the engine's driver).
 * Pure C with no Open MPI dependency.
 */

#ifndef MCA_COLL_ASYNC_NET_H
#define MCA_COLL_ASYNC_NET_H

#include <stddef.h>
#include <stdint.h>

#include "coll_async_tcp.h"
#include "coll_async_verbs.h"

#define COLL_ASYNC_NET_PENDING 1 /* op status while in flight */

struct coll_async_net;

enum coll_async_net_via { COLL_ASYNC_NET_NONE, COLL_ASYNC_NET_TCP, COLL_ASYNC_NET_VERBS };

/* An operation: status, error and bytes as the transports' ops have them. */
struct coll_async_net_op {
    void (*complete)(struct coll_async_net_op *op);
    void *context;
    int status;
    const char *error;
    size_t bytes;

    /* Private: the carrying transport's op. */
    union {
        struct coll_async_tcp_op tcp;
        struct coll_async_verbs_op verbs;
    } via;
};

/* Composes the transports (either may be NULL, not both); the mapper owns them
 * from here on and destroys them, at once when it fails. 0 or -errno (-EINVAL,
 * owning nothing, when both are NULL). */
int coll_async_net_create(struct coll_async_net **net, uint32_t nprocs,
                          struct coll_async_tcp *tcp, struct coll_async_verbs *verbs);
void coll_async_net_destroy(struct coll_async_net *net);

/* Chooses peer's transport from its address blobs (NULL/0 where the peer
 * published none); key is the peer's (coll_async_auth.h). 0, -EEXIST when
 * already added, -ENETUNREACH when no transport reaches it, or a transport's
 * -errno. */
int coll_async_net_add_peer(struct coll_async_net *net, uint32_t peer,
                            const struct coll_async_key *key, const void *tcp_blob,
                            size_t tcp_length, const void *verbs_blob, size_t verbs_length);

enum coll_async_net_via coll_async_net_peer_via(const struct coll_async_net *net, uint32_t peer);

int coll_async_net_send_bulk(struct coll_async_net *net, uint32_t peer, uint64_t tag,
                             const void *data, size_t length, struct coll_async_net_op *op);
int coll_async_net_recv_bulk(struct coll_async_net *net, uint32_t peer, uint64_t tag,
                             void *buffer, size_t length, struct coll_async_net_op *op);

/* Another source of work the mapper drives with its transports: progress(context)
 * runs in coll_async_net_progress, and fd (readable while it has work) joins
 * coll_async_net_fd. 0 or -errno. */
int coll_async_net_attach(struct coll_async_net *net, int fd, int (*progress)(void *context),
                          void *context);

/* Forgets the source attached with context (its fd must still be open). */
void coll_async_net_detach(struct coll_async_net *net, void *context);

/* The transports' and the attached sources' progress; how much they did (0: idle). */
int coll_async_net_progress(struct coll_async_net *net);

/* Readable while a transport or an attached source has something to do. */
int coll_async_net_fd(const struct coll_async_net *net);

struct coll_async_tcp *coll_async_net_tcp(const struct coll_async_net *net);
struct coll_async_verbs *coll_async_net_verbs(const struct coll_async_net *net);

#endif /* MCA_COLL_ASYNC_NET_H */
