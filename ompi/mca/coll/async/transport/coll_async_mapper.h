/*
 * coll/async: the transport mapper interface.
 *
 * Algorithms move data only through the mapper; the mapper picks, per peer, one of
 * the transports behind it (shared memory inside a node; verbs RC, UD multicast or
 * TCP between nodes) and drives it. One mapper per process, shared by all
 * communicators. Every operation is asynchronous and completes through the
 * transport's progress function.
 *
 * This header fixes the contract; the mapper and its transports fill it in the
 * issues that follow (shared memory first). Nothing in this version calls it yet.
 */

#ifndef MCA_COLL_ASYNC_MAPPER_H
#define MCA_COLL_ASYNC_MAPPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct coll_async_endpoint;   /* one connected peer, owned by a transport */
struct coll_async_mem;        /* a registered memory region */

/* Completion of an asynchronous operation, called from the transport's progress. */
struct coll_async_completion {
    void (*done)(struct coll_async_completion *completion, int status);
};

/* What a peer needs to read or write a registered region directly: RDMA address and
 * key, CMA process and address. Sent to the peer inside eager messages. */
struct coll_async_remote_token {
    uint64_t address;
    uint64_t key;
    uint32_t owner; /* process id or memory key owner, per transport */
    uint32_t transport;
};

struct coll_async_transport {
    const char *name;

    /* Whether and at what relative cost this transport reaches a peer (lower is
     * better, negative: unreachable). The mapper picks the cheapest per peer. */
    int (*reach)(int peer_world_rank);

    /* Lazy connection: only the peers an algorithm uses, reused afterwards. */
    int (*connect)(int peer_world_rank, struct coll_async_endpoint **endpoint);

    /* Memory pre/post-processing: RDMA registration (cached), a CMA token, or nothing. */
    int (*mem_register)(void *buffer, size_t length, struct coll_async_mem **mem,
                        struct coll_async_remote_token *token);
    void (*mem_deregister)(struct coll_async_mem *mem);

    /* Eager messages: small, into pre-posted slots, ordered per sender and receiver;
     * the receiver need not have posted a receive first. */
    int (*eager_send)(struct coll_async_endpoint *endpoint, const void *data, size_t length,
                      struct coll_async_completion *completion);
    int (*eager_recv)(struct coll_async_endpoint *endpoint, void *data, size_t length,
                      struct coll_async_completion *completion);

    /* Large data, zero-copy where the transport can, with the peer's token. */
    int (*put)(struct coll_async_endpoint *endpoint, const void *local, size_t length,
               const struct coll_async_remote_token *remote, size_t offset,
               struct coll_async_completion *completion);
    int (*get)(struct coll_async_endpoint *endpoint, void *local, size_t length,
               const struct coll_async_remote_token *remote, size_t offset,
               struct coll_async_completion *completion);

    /* Advances outstanding operations; returns how many completed. */
    int (*progress)(void);
};

#endif /* MCA_COLL_ASYNC_MAPPER_H */
