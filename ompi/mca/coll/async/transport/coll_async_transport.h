/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: what every transport promises, and the one shape of their
 * operations.
 *
 * A transport is a struct whose first member is struct coll_async_transport:
 * a table of functions (struct coll_async_transport_ops) the mapper calls
 * without knowing which transport it holds. Point-to-point transports (TCP,
 * verbs RC) fill send and recv: bulk transfers matched by (peer, tag), a tag
 * naming one transfer at a time per direction. One-to-many transports (UD
 * multicast) fill bcast: the next broadcast of the group. What a transport
 * lacks is NULL.
 *
 * Every operation is a struct coll_async_transfer, owned by the caller and left
 * alone until it completes: status is COLL_ASYNC_TRANSFER_PENDING until then,
 * and 0 or -errno after; on failure error says why (owned by the transport,
 * valid until it is destroyed). complete, when set, runs inside progress right
 * after status is final; the transfer may be reused or freed from it. A post
 * that returns -errno did not post: the transfer will not complete.
 *
 * Not thread-safe: one thread at a time calls in (the engine's driver).
 * Pure C with no Open MPI dependency.
 */

#ifndef MCA_COLL_ASYNC_TRANSPORT_H
#define MCA_COLL_ASYNC_TRANSPORT_H

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#include "coll_async_auth.h"

#define COLL_ASYNC_TRANSFER_PENDING 1 /* status while in flight */
#define COLL_ASYNC_TRANSFER_STATE_BYTES 128

struct coll_async_transfer {
    /* Set by the caller before posting. */
    void (*complete)(struct coll_async_transfer *transfer);
    void *context;

    /* Set by the transport. */
    int status;
    const char *error;
    size_t bytes; /* receive: the length the sender sent */

    /* Private to the carrying transport: its queues' link, the status it
     * completes with, and its own state (a struct of its choosing, checked to
     * fit with coll_async_transfer_state_fits). */
    struct coll_async_transfer *next;
    int result;
    alignas(max_align_t) unsigned char state[COLL_ASYNC_TRANSFER_STATE_BYTES];
};

#define coll_async_transfer_state_fits(type) \
    _Static_assert(sizeof(type) <= COLL_ASYNC_TRANSFER_STATE_BYTES, #type " fits a transfer")

struct coll_async_transport;

struct coll_async_transport_ops {
    const char *name; /* "tcp", "verbs", "mcast": for messages */

    /* Closes everything; transfers still in flight complete with -ECANCELED. */
    void (*destroy)(struct coll_async_transport *transport);

    /* Bounded nonblocking work; completes transfers. How much it did (0: idle). */
    int (*progress)(struct coll_async_transport *transport);
    /* Readable (poll/epoll) while progress has something to do. */
    int (*fd)(const struct coll_async_transport *transport);

    /* This process's address blob (the caller publishes it); its length or -ENOSPC. */
    int (*address)(const struct coll_async_transport *transport, void *blob, size_t size);
    /* Where peer is, and its key; opens nothing. 0, -ENETUNREACH (this transport
     * cannot reach it: the mapper tries the next), -EINVAL, -EEXIST or -ENOMEM. */
    int (*add_peer)(struct coll_async_transport *transport, uint32_t peer,
                    const struct coll_async_key *key, const void *blob, size_t length);

    /* Point-to-point bulk transfers; NULL for a one-to-many transport. A receive
     * takes at most length bytes. */
    int (*send)(struct coll_async_transport *transport, uint32_t peer, uint64_t tag,
                const void *data, size_t length, struct coll_async_transfer *transfer);
    int (*recv)(struct coll_async_transport *transport, uint32_t peer, uint64_t tag,
                void *buffer, size_t length, struct coll_async_transfer *transfer);

    /* One-to-many: the group's next broadcast, length bytes from root's buffer
     * into every other member's; NULL for a point-to-point transport. */
    int (*bcast)(struct coll_async_transport *transport, uint32_t root, void *buffer,
                 size_t length, struct coll_async_transfer *transfer);

    /* [address, address + length) is being released: drop what refers to it
     * (registrations). Safe from any thread. NULL: the transport keeps nothing. */
    void (*release)(struct coll_async_transport *transport, const void *address,
                    size_t length);
};

struct coll_async_transport {
    const struct coll_async_transport_ops *ops;
};

/* A first-in first-out queue of transfers, linked through their own next, so
 * queueing never allocates. */
struct coll_async_transfer_queue {
    struct coll_async_transfer *head, *tail;
};

static inline void coll_async_transfer_push(struct coll_async_transfer_queue *queue,
                                            struct coll_async_transfer *transfer)
{
    transfer->next = NULL;
    if (NULL == queue->tail) {
        queue->head = transfer;
    } else {
        queue->tail->next = transfer;
    }
    queue->tail = transfer;
}

static inline struct coll_async_transfer *
coll_async_transfer_pop(struct coll_async_transfer_queue *queue)
{
    struct coll_async_transfer *transfer = queue->head;

    if (NULL != transfer) {
        queue->head = transfer->next;
        if (NULL == queue->head) {
            queue->tail = NULL;
        }
    }
    return transfer;
}

/* Takes transfer out wherever it stands; nothing when it is not queued here. */
static inline void coll_async_transfer_remove(struct coll_async_transfer_queue *queue,
                                              struct coll_async_transfer *transfer)
{
    struct coll_async_transfer *prev = NULL;

    for (struct coll_async_transfer *at = queue->head; NULL != at; prev = at, at = at->next) {
        if (at == transfer) {
            if (NULL == prev) {
                queue->head = transfer->next;
            } else {
                prev->next = transfer->next;
            }
            if (queue->tail == transfer) {
                queue->tail = prev;
            }
            return;
        }
    }
}

/* Completes every transfer of done: status from result, then complete. How many. */
static inline int coll_async_transfer_complete_all(struct coll_async_transfer_queue *done)
{
    struct coll_async_transfer *transfer;
    int count = 0;

    while (NULL != (transfer = coll_async_transfer_pop(done))) {
        transfer->status = transfer->result;
        if (NULL != transfer->complete) {
            transfer->complete(transfer);
        }
        ++count;
    }
    return count;
}

#endif /* MCA_COLL_ASYNC_TRANSPORT_H */
