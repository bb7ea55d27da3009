/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the mapper between nodes (see coll_async_net.h).
 */

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "coll_async_net.h"

/* A source of work attached after creation (coll_async_net_attach). */
struct source {
    int fd;
    int (*progress)(void *context);
    void *context;
};

struct coll_async_net {
    struct coll_async_tcp *tcp;
    struct coll_async_verbs *verbs;
    uint32_t nprocs;
    uint8_t *via;  /* per peer: enum coll_async_net_via */
    int epoll_fd;  /* the transports' fds and the sources' */
    struct source *sources;
    int nsources, capacity;
};

static void destroy_transports(struct coll_async_tcp *tcp, struct coll_async_verbs *verbs)
{
    if (NULL != tcp) {
        coll_async_tcp_destroy(tcp);
    }
#if COLL_ASYNC_HAVE_VERBS
    if (NULL != verbs) {
        coll_async_verbs_destroy(verbs);
    }
#else
    (void) verbs;
#endif
}

static int epoll_add(int epoll_fd, int fd)
{
    struct epoll_event event = {.events = EPOLLIN};

    return 0 != epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event) ? -errno : 0;
}

/* One epoll fd over the transports' fds, even for one transport: sources
 * attached later join it, and the driver's watch cannot change its fd. */
static int watch_transports(struct coll_async_net *net)
{
    int rc = 0;

    net->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (0 > net->epoll_fd) {
        return -errno;
    }
    if (NULL != net->tcp) {
        rc = epoll_add(net->epoll_fd, coll_async_tcp_fd(net->tcp));
    }
#if COLL_ASYNC_HAVE_VERBS
    if (0 == rc && NULL != net->verbs) {
        rc = epoll_add(net->epoll_fd, coll_async_verbs_fd(net->verbs));
    }
#endif
    return rc;
}

int coll_async_net_create(struct coll_async_net **out, uint32_t nprocs,
                          struct coll_async_tcp *tcp, struct coll_async_verbs *verbs)
{
    struct coll_async_net *net;
    int rc;

    if (NULL == tcp && NULL == verbs) {
        return -EINVAL;
    }
    net = calloc(1, sizeof(*net));
    if (NULL == net) {
        destroy_transports(tcp, verbs);
        return -ENOMEM;
    }
    *net = (struct coll_async_net){.tcp = tcp, .verbs = verbs, .nprocs = nprocs,
                                   .epoll_fd = -1};
    net->via = calloc(nprocs, 1);
    rc = NULL == net->via ? -ENOMEM : watch_transports(net);
    if (0 != rc) {
        coll_async_net_destroy(net);
        return rc;
    }
    *out = net;
    return 0;
}

void coll_async_net_destroy(struct coll_async_net *net)
{
    if (NULL == net) {
        return;
    }
    destroy_transports(net->tcp, net->verbs);
    if (0 <= net->epoll_fd) {
        close(net->epoll_fd);
    }
    free(net->via);
    free(net->sources);
    free(net);
}

int coll_async_net_add_peer(struct coll_async_net *net, uint32_t peer,
                            const struct coll_async_key *key, const void *tcp_blob,
                            size_t tcp_length, const void *verbs_blob, size_t verbs_length)
{
    int rc = -ENETUNREACH;

    if (peer >= net->nprocs) {
        return -EINVAL;
    }
    if (COLL_ASYNC_NET_NONE != net->via[peer]) {
        return -EEXIST;
    }
#if COLL_ASYNC_HAVE_VERBS
    if (NULL != net->verbs && NULL != verbs_blob) {
        rc = coll_async_verbs_add_peer(net->verbs, peer, key, verbs_blob, verbs_length);
        if (0 == rc || -EEXIST == rc) {
            net->via[peer] = COLL_ASYNC_NET_VERBS;
            return 0;
        }
    }
#else
    (void) verbs_blob;
    (void) verbs_length;
#endif
    if (NULL != net->tcp && NULL != tcp_blob) {
        rc = coll_async_tcp_add_peer(net->tcp, peer, key, tcp_blob, tcp_length);
        if (0 == rc || -EEXIST == rc) {
            net->via[peer] = COLL_ASYNC_NET_TCP;
            return 0;
        }
    }
    return rc;
}

enum coll_async_net_via coll_async_net_peer_via(const struct coll_async_net *net, uint32_t peer)
{
    return peer < net->nprocs ? (enum coll_async_net_via) net->via[peer] : COLL_ASYNC_NET_NONE;
}

/* The carrying transport's op completed: the caller's completes with it. */
static void finish(struct coll_async_net_op *op, int status, const char *error, size_t bytes)
{
    op->error = error;
    op->bytes = bytes;
    op->status = status;
    if (NULL != op->complete) {
        op->complete(op);
    }
}

static void tcp_done(struct coll_async_tcp_op *inner)
{
    finish(inner->context, inner->status, inner->error, inner->bytes);
}

#if COLL_ASYNC_HAVE_VERBS
static void verbs_done(struct coll_async_verbs_op *inner)
{
    finish(inner->context, inner->status, inner->error, inner->bytes);
}
#endif

/* Posts a bulk send or receive on the peer's transport. */
static int post(struct coll_async_net *net, uint32_t peer, uint64_t tag, void *buffer,
                size_t length, bool send, struct coll_async_net_op *op)
{
    int rc = -ENETUNREACH;

    op->status = COLL_ASYNC_NET_PENDING;
    op->error = NULL;
    op->bytes = 0;
    switch (coll_async_net_peer_via(net, peer)) {
    case COLL_ASYNC_NET_TCP:
        op->via.tcp = (struct coll_async_tcp_op){.complete = tcp_done, .context = op};
        rc = send ? coll_async_tcp_send_bulk(net->tcp, peer, tag, buffer, length, &op->via.tcp)
                  : coll_async_tcp_recv_bulk(net->tcp, peer, tag, buffer, length, &op->via.tcp);
        op->error = op->via.tcp.error;
        break;
#if COLL_ASYNC_HAVE_VERBS
    case COLL_ASYNC_NET_VERBS:
        op->via.verbs = (struct coll_async_verbs_op){.complete = verbs_done, .context = op};
        rc = send ? coll_async_verbs_send_bulk(net->verbs, peer, tag, buffer, length,
                                               &op->via.verbs)
                  : coll_async_verbs_recv_bulk(net->verbs, peer, tag, buffer, length,
                                               &op->via.verbs);
        op->error = op->via.verbs.error;
        break;
#endif
    default:
        op->error = "the peer was never added to the mapper";
        break;
    }
    if (0 != rc) {
        op->status = rc;
    }
    return rc;
}

int coll_async_net_send_bulk(struct coll_async_net *net, uint32_t peer, uint64_t tag,
                             const void *data, size_t length, struct coll_async_net_op *op)
{
    return post(net, peer, tag, (void *) data, length, true, op);
}

int coll_async_net_recv_bulk(struct coll_async_net *net, uint32_t peer, uint64_t tag,
                             void *buffer, size_t length, struct coll_async_net_op *op)
{
    return post(net, peer, tag, buffer, length, false, op);
}

int coll_async_net_attach(struct coll_async_net *net, int fd, int (*progress)(void *context),
                          void *context)
{
    int rc;

    if (net->nsources == net->capacity) {
        int capacity = 0 == net->capacity ? 4 : 2 * net->capacity;
        struct source *grown = realloc(net->sources, sizeof(*grown) * (size_t) capacity);

        if (NULL == grown) {
            return -ENOMEM;
        }
        net->sources = grown;
        net->capacity = capacity;
    }
    rc = epoll_add(net->epoll_fd, fd);
    if (0 == rc) {
        net->sources[net->nsources++] = (struct source){fd, progress, context};
    }
    return rc;
}

void coll_async_net_detach(struct coll_async_net *net, void *context)
{
    for (int i = 0; i < net->nsources; ++i) {
        if (net->sources[i].context == context) {
            (void) epoll_ctl(net->epoll_fd, EPOLL_CTL_DEL, net->sources[i].fd, NULL);
            net->sources[i] = net->sources[--net->nsources];
            return;
        }
    }
}

int coll_async_net_progress(struct coll_async_net *net)
{
    int done = 0;

    if (NULL != net->tcp) {
        done += coll_async_tcp_progress(net->tcp);
    }
#if COLL_ASYNC_HAVE_VERBS
    if (NULL != net->verbs) {
        done += coll_async_verbs_progress(net->verbs);
    }
#endif
    for (int i = 0; i < net->nsources; ++i) {
        done += net->sources[i].progress(net->sources[i].context);
    }
    return done;
}

int coll_async_net_fd(const struct coll_async_net *net)
{
    return net->epoll_fd;
}

struct coll_async_tcp *coll_async_net_tcp(const struct coll_async_net *net)
{
    return net->tcp;
}

struct coll_async_verbs *coll_async_net_verbs(const struct coll_async_net *net)
{
    return net->verbs;
}
