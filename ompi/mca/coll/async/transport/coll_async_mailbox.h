/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the shared-memory point-to-point transport ("shm").
 *
 * A transport of coll_async_transport.h for the peers on this node. Every
 * process owns one mailbox, a memfd (nothing in /dev/shm, so nothing outlives a
 * killed rank): a header that proves whose it is, a ring of fixed-size
 * descriptors that every peer may push into and only the owner pops, and the
 * owner's staging chunks, which receivers copy out of. A peer maps another's
 * mailbox on first use through /proc/<pid>/fd/<fd> (the blob names them), which
 * only processes with ptrace-read rights over the owner can open. add_peer
 * opens nothing, but leaves to the next transport (-ENETUNREACH) a blob of
 * another node or version, or a mailbox it cannot see there (another user,
 * another pid namespace).
 *
 * Bulk transfers matched by (peer, tag), one per tag per direction, as TCP's:
 * - staged: the sender copies a piece into a free chunk of its own mailbox and
 *   pushes DATA into the receiver's ring; the receiver copies it into the posted
 *   buffer and answers CREDIT; DONE ends the transfer. Pieces that come before
 *   their receive are copied out into a buffer of the transfer's length (64 MiB
 *   for all, then they wait holding their chunks: back-pressure), so that a
 *   late receive never stops the sender's other transfers;
 * - CMA (both sides try_cma, cma_min bytes or more): the sender pushes
 *   RTS with its buffer's address, the receiver pulls with process_vm_readv in
 *   bounded pieces and answers DONE; a pull the kernel refuses answers so, and
 *   the sender falls back to staged for that peer.
 * A process may send before this one adds it (each rank adds a communicator's
 * peers when it gets there): what it sends is held, up to 4096 descriptors,
 * and taken in, in its order, once it is added; past that it fails when added.
 * A transfer longer than the receive posted fails on both sides with
 * -EMSGSIZE. A peer whose process exits (checked every 100 ms while a transfer
 * waits on it), that destroys its transport, whose mailbox does not prove
 * itself, or that breaks the protocol fails every transfer with it, the error
 * naming it; later posts to it fail at once.
 *
 * No descriptor: fd is -1 and the driver polls progress while a transfer is in
 * flight. Not thread-safe: one thread at a time calls in (the engine's driver).
 * Pure C with no Open MPI dependency.
 */

#ifndef MCA_COLL_ASYNC_MAILBOX_H
#define MCA_COLL_ASYNC_MAILBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll_async_auth.h"
#include "coll_async_transport.h"

#define COLL_ASYNC_MAILBOX_ADDRESS_MAX 64 /* blob bytes */
/* Below this, staged even where CMA works. Measured (test_mailbox's ping-pong,
 * 2-vCPU VM): staged is faster at every size there, 2x at 8 B (no syscall),
 * 1.3-1.5x from 256 KiB to 16 MiB (sender and receiver copy in parallel,
 * where CMA is one copy on one core plus pinning pages); CMA's one copy halves
 * the memory traffic, which counts on a node whose every core runs a rank, and
 * needs no turn of the sender's, which counts where ranks share cores. */
#define COLL_ASYNC_MAILBOX_CMA_MIN (1024 * 1024)

struct coll_async_mailbox_config {
    uint32_t self, nprocs;     /* this process's id; ids are below nprocs */
    struct coll_async_key key; /* this process's (coll_async_auth.h) */
    uint64_t node;             /* equal on processes that share memory with this one; a peer
                                  whose blob names another node is -ENETUNREACH */
    bool try_cma;              /* single copy with process_vm_readv where the kernel allows */
    size_t chunk_size;         /* staging piece; 0: 64 KiB */
    unsigned chunks;           /* staging pieces of this process; 0: 16 */
    size_t cma_min;            /* sends this long or longer use CMA where both sides try it;
                                  0: COLL_ASYNC_MAILBOX_CMA_MIN */
};

/* 0 or -errno; *transport is the mailbox's struct coll_async_transport (ops->name "shm"). */
int coll_async_mailbox_create(const struct coll_async_mailbox_config *config,
                              struct coll_async_transport **transport);

/* What the transport did, for tests and verbose output. */
struct coll_async_mailbox_stats {
    uint64_t staged_sends;  /* sends completed through staging chunks */
    uint64_t cma_sends;     /* sends the receiver pulled with CMA */
    uint64_t cma_fallbacks; /* CMA pulls refused, sent staged instead */
    uint64_t refused;       /* descriptors dropped: no valid MAC, or a replay */
    uint64_t early_copied;  /* bytes copied from early buffers to receives posted late */
};

void coll_async_mailbox_stats(const struct coll_async_transport *transport,
                              struct coll_async_mailbox_stats *stats);

#endif /* MCA_COLL_ASYNC_MAILBOX_H */
