/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the mapper (see coll_async_net.h).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "coll_async_net.h"

#define NO_TRANSPORT 0xff /* net->via: the peer was never added */

struct coll_async_net {
    struct coll_async_transport *transports[COLL_ASYNC_NET_MAX_TRANSPORTS]; /* owned */
    int ntransports;
    uint32_t nprocs;
    uint8_t *via; /* per peer: its transport's index, or NO_TRANSPORT */
    int epoll_fd; /* every transport's fd, attached ones too */
    struct coll_async_transport **attached;
    int nattached, capacity;
    struct coll_async_net_counts counts;
};

/* A transport without a descriptor (fd < 0: shared memory) is polled by the
 * driver while a transfer is in flight; it has nothing to add. */
static int epoll_add(int epoll_fd, const struct coll_async_transport *t)
{
    struct epoll_event event = {.events = EPOLLIN};
    int fd = t->ops->fd(t);

    return 0 <= fd && 0 != epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event) ? -errno : 0;
}

/* One epoll fd over the transports' fds, even for one transport: transports
 * attached later join it, and the driver's watch cannot change its fd. */
static int watch_transports(struct coll_async_net *net)
{
    int rc = 0;

    net->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (0 > net->epoll_fd) {
        return -errno;
    }
    for (int i = 0; i < net->ntransports && 0 == rc; ++i) {
        rc = epoll_add(net->epoll_fd, net->transports[i]);
    }
    return rc;
}

int coll_async_net_create(struct coll_async_net **out, uint32_t nprocs,
                          struct coll_async_transport *const *transports, int count)
{
    struct coll_async_net *net;
    int rc;

    if (count < 1 || count > COLL_ASYNC_NET_MAX_TRANSPORTS) {
        return -EINVAL;
    }
    net = calloc(1, sizeof(*net));
    if (NULL == net) {
        for (int i = 0; i < count; ++i) {
            transports[i]->ops->destroy(transports[i]);
        }
        return -ENOMEM;
    }
    for (int i = 0; i < count; ++i) {
        net->transports[i] = transports[i];
    }
    net->ntransports = count;
    net->nprocs = nprocs;
    net->epoll_fd = -1;
    net->via = malloc(nprocs);
    rc = NULL == net->via ? -ENOMEM : watch_transports(net);
    if (0 != rc) {
        coll_async_net_destroy(net);
        return rc;
    }
    for (uint32_t peer = 0; peer < nprocs; ++peer) {
        net->via[peer] = NO_TRANSPORT;
    }
    *out = net;
    return 0;
}

void coll_async_net_destroy(struct coll_async_net *net)
{
    if (NULL == net) {
        return;
    }
    for (int i = 0; i < net->ntransports; ++i) {
        net->transports[i]->ops->destroy(net->transports[i]);
    }
    if (0 <= net->epoll_fd) {
        close(net->epoll_fd);
    }
    free(net->via);
    free(net->attached);
    free(net);
}

int coll_async_net_add_peer(struct coll_async_net *net, uint32_t peer,
                            const struct coll_async_key *key,
                            const struct coll_async_net_blob *blobs)
{
    int rc = -ENETUNREACH;

    if (peer >= net->nprocs) {
        return -EINVAL;
    }
    if (NO_TRANSPORT != net->via[peer]) {
        return -EEXIST;
    }
    /* A transport that cannot take the peer leaves it to the next. */
    for (int i = 0; i < net->ntransports; ++i) {
        struct coll_async_transport *t = net->transports[i];

        if (NULL == blobs[i].data) {
            continue; /* the peer published no address for it */
        }
        rc = t->ops->add_peer(t, peer, key, blobs[i].data, blobs[i].length);
        if (0 == rc || -EEXIST == rc) {
            net->via[peer] = (uint8_t) i;
            return 0;
        }
    }
    return rc;
}

static struct coll_async_transport *transport_of(const struct coll_async_net *net,
                                                 uint32_t peer)
{
    return peer < net->nprocs && NO_TRANSPORT != net->via[peer] ? net->transports[net->via[peer]]
                                                                : NULL;
}

const char *coll_async_net_peer_via(const struct coll_async_net *net, uint32_t peer)
{
    const struct coll_async_transport *t = transport_of(net, peer);

    return NULL != t ? t->ops->name : "";
}

/* Posts a bulk send or receive on the peer's transport. */
static int post(struct coll_async_net *net, uint32_t peer, uint64_t tag, void *buffer,
                size_t length, bool send, struct coll_async_transfer *transfer)
{
    struct coll_async_transport *t = transport_of(net, peer);
    int rc;

    transfer->status = COLL_ASYNC_TRANSFER_PENDING;
    transfer->error = NULL;
    transfer->bytes = 0;
    if (NULL == t) {
        transfer->error = "the peer was never added to the mapper";
        rc = -ENETUNREACH;
    } else {
        rc = send ? t->ops->send(t, peer, tag, buffer, length, transfer)
                  : t->ops->recv(t, peer, tag, buffer, length, transfer);
    }
    if (0 != rc) {
        transfer->status = rc;
    } else if (send) {
        net->counts.sends += 1;
        net->counts.bytes_sent += length;
    } else {
        net->counts.receives += 1;
        net->counts.bytes_received += length;
    }
    return rc;
}

struct coll_async_net_counts coll_async_net_counts(const struct coll_async_net *net)
{
    return net->counts;
}

int coll_async_net_send_bulk(struct coll_async_net *net, uint32_t peer, uint64_t tag,
                             const void *data, size_t length,
                             struct coll_async_transfer *transfer)
{
    return post(net, peer, tag, (void *) data, length, true, transfer);
}

int coll_async_net_recv_bulk(struct coll_async_net *net, uint32_t peer, uint64_t tag,
                             void *buffer, size_t length, struct coll_async_transfer *transfer)
{
    return post(net, peer, tag, buffer, length, false, transfer);
}

int coll_async_net_attach(struct coll_async_net *net, struct coll_async_transport *t)
{
    int rc;

    if (net->nattached == net->capacity) {
        int capacity = 0 == net->capacity ? 4 : 2 * net->capacity;
        struct coll_async_transport **grown =
            realloc(net->attached, sizeof(*grown) * (size_t) capacity);

        if (NULL == grown) {
            return -ENOMEM;
        }
        net->attached = grown;
        net->capacity = capacity;
    }
    rc = epoll_add(net->epoll_fd, t);
    if (0 == rc) {
        net->attached[net->nattached++] = t;
    }
    return rc;
}

void coll_async_net_detach(struct coll_async_net *net, struct coll_async_transport *t)
{
    for (int i = 0; i < net->nattached; ++i) {
        if (net->attached[i] == t) {
            (void) epoll_ctl(net->epoll_fd, EPOLL_CTL_DEL, t->ops->fd(t), NULL);
            net->attached[i] = net->attached[--net->nattached];
            return;
        }
    }
}

int coll_async_net_progress(struct coll_async_net *net)
{
    int done = 0;

    for (int i = 0; i < net->ntransports; ++i) {
        done += net->transports[i]->ops->progress(net->transports[i]);
    }
    for (int i = 0; i < net->nattached; ++i) {
        done += net->attached[i]->ops->progress(net->attached[i]);
    }
    return done;
}

int coll_async_net_fd(const struct coll_async_net *net)
{
    return net->epoll_fd;
}

/* Only the owned transports: they never change after create, so another thread
 * may run this while the driver attaches and detaches. */
void coll_async_net_release(struct coll_async_net *net, const void *address, size_t length)
{
    for (int i = 0; i < net->ntransports; ++i) {
        struct coll_async_transport *t = net->transports[i];

        if (NULL != t->ops->release) {
            t->ops->release(t, address, length);
        }
    }
}
