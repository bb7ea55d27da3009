/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the verbs RC transport (rdma-core).
 *
 * The same service as the TCP transport (coll_async_tcp.h), behind the same
 * interface (coll_async_transport.h, coll_async_verbs_transport), so the mapper
 * can put either behind a peer: bulk transfers matched by (peer, tag). What
 * differs is underneath:
 *
 *  - ports: every active port of every device the filter keeps, each with its
 *    own protection domain and completion queue (a completion channel per device,
 *    as verbs ties channels to a device; they, the rdma_cm event channel and a
 *    connect-deadline timer sit behind one epoll fd, so one fd wakes a sleeping
 *    thread);
 *  - connections: reliable-connected QPs, opened on first use with librdmacm
 *    (the address blob, published in the modex, carries each port's IP address
 *    and rdma_cm port); a process sends only on the QPs it connected, so two
 *    peers that both send hold two QPs and never race to connect;
 *  - trust: a connection is taken only from a process that proves it holds this
 *    process's key, and made only to one that proves it holds the peer's
 *    (coll_async_verbs_handshake.h), with a fresh nonce from each side; one that
 *    has not proved itself delivers nothing, cannot RDMA-write here, learns no
 *    buffer address or key, is held at most connect_timeout_ms and among at most
 *    max_unproven, and is closed and reported (on_refused) when it fails;
 *  - messages: SENDs into receive buffers the receiver posted in advance, with
 *    credits (the sender never sends more than the receiver posted; credits
 *    come back with the receiver's own messages, or alone when it has none);
 *  - bulk transfers of at most eager_limit bytes: one such SEND, copied once
 *    into the posted receive, or staged until it is posted (as TCP's);
 *  - longer bulk transfers: the receiver registers its buffer (through the
 *    registration cache) and, as soon as the receive is posted, tells the sender
 *    where it is (a "ready": address, capacity, rkey per port); the sender, once
 *    that has come (a send posted earlier waits for it), announces the length
 *    and RDMA-WRITEs with immediate straight into the buffer, chunk by chunk,
 *    striped over the ports both sides have; the receiver counts the bytes the
 *    immediates report and never copies.
 *
 * A receive smaller than the transfer fails with -EMSGSIZE, and so does the send
 * when the receive was posted first (always for transfers above eager_limit);
 * a small transfer staged before a too small receive makes that recv_bulk
 * return -EMSGSIZE, its send having completed. Sends complete when the peer's
 * device has acknowledged them. add_peer must be called for every peer that
 * sends to this process too: credits and readies go back on this side's own QPs.
 *
 * A completion with an error, a disconnect, a connection not made within
 * connect_timeout_ms, an acceptor that does not prove it holds the peer's key
 * (-EACCES), or a message from the peer that is not what this side expects
 * (-EPROTO: lengths, credits, writes beyond the posted receive) fails every
 * operation on that peer with -errno and a message naming the peer, the device
 * and the verbs status; later posts fail at once. A connection that never
 * proved itself fails no peer: it is closed and reported, nothing more.
 *
 * Not thread-safe: one thread at a time calls in (the engine's driver).
 * Pure C with no Open MPI dependency.
 */

#ifndef MCA_COLL_ASYNC_VERBS_H
#define MCA_COLL_ASYNC_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll_async_auth.h"
#include "coll_async_refusals.h"
#include "coll_async_transport.h"

#define COLL_ASYNC_VERBS_MAX_PORTS 8
#define COLL_ASYNC_VERBS_ADDRESS_MAX (4 + 24 * COLL_ASYNC_VERBS_MAX_PORTS) /* blob bytes */

struct coll_async_verbs;

/* One line about one connection refused ("verbs: refused a connection on rxe0:1
 * from 10.77.0.2 ...: why"), rate-limited as coll_async_refusals.h says. */
typedef coll_async_refused_fn coll_async_verbs_refused_fn;

/* One usable port, as discovery reports it. */
struct coll_async_verbs_port_info {
    char device[64];  /* "mlx5_0", "rxe0" */
    int port;         /* 1-based */
    char netdev[16];  /* the Ethernet device under a RoCE port, "" for InfiniBand */
    int numa;         /* the device's NUMA node, -1 when unknown */
};

struct coll_async_verbs_config {
    /* Device and port filter, like coll_async_tcp_if's: comma-separated
     * "device" or "device:port"; include and exclude are mutually exclusive;
     * NULL or "" when not given. */
    const char *include, *exclude;
    uint32_t self, nprocs;    /* this process's id; ids are below nprocs */
    struct coll_async_key key; /* this process's: a connector proves it knows it */
    size_t eager_limit;       /* largest transfer sent as one message; 0: 8 KiB */
    size_t chunk_size;        /* bulk striping unit; 0: 512 KiB */
    int max_ports;            /* ports one transfer stripes over; 0: all */
    int connect_timeout_ms;   /* 0: 10 s; also how long an accepted connection may
                               * take to prove itself */
    int max_unproven;         /* accepted connections not proven yet; more are
                               * rejected; 0: 128 */
    size_t cache_bytes;       /* registration cache capacity; 0: 256 MiB */
    bool uncached;            /* nothing reports freed memory (the transport's release
                               * is never called): register for each transfer only */
    coll_async_verbs_refused_fn on_refused; /* NULL: refusals go unsaid */
    void *context;                          /* on_refused's */
};

/* Lists the ports the filter keeps (active ones only), at most max; the count, 0
 * when there is no RDMA device, -EINVAL with a one-line reason in why, or
 * -ENODEV where the component was built without verbs (why says so). */
int coll_async_verbs_discover(const char *include, const char *exclude,
                              struct coll_async_verbs_port_info *ports, int max, char *why,
                              size_t why_len);

/* Opens the ports and starts listening. 0, -ENODEV when no port is usable (or
 * built without verbs), or -errno; why says what failed. */
int coll_async_verbs_create(struct coll_async_verbs **verbs,
                            const struct coll_async_verbs_config *config, char *why,
                            size_t why_len);

/* The transport verbs is. add_peer: -ENETUNREACH when no port of ours shares an
 * IP subnet with one of the peer's (the mapper then tries the next transport);
 * it must be called for every peer that sends to this process too (credits and
 * readies go back on this side's own QPs). send and recv: -EHOSTUNREACH before
 * add_peer. release drops the cached registrations overlapping the range (the
 * component calls it from Open MPI's memory release hook); safe from any
 * thread. */
static inline struct coll_async_transport *
coll_async_verbs_transport(struct coll_async_verbs *verbs) {
    return (struct coll_async_transport *) verbs; /* its first member */
}

/* The ports in use, for verbose output; how many (at most max). */
int coll_async_verbs_ports(const struct coll_async_verbs *verbs,
                           struct coll_async_verbs_port_info *ports, int max);

/* Bytes written to peer per port since start, for tests (how striping spread). */
int coll_async_verbs_port_bytes(const struct coll_async_verbs *verbs, uint32_t peer,
                                uint64_t *bytes, int max);

#endif /* MCA_COLL_ASYNC_VERBS_H */
