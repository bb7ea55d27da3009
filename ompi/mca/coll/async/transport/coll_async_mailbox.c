/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the shared-memory transport's set-up, peers and tear-down
 * (coll_async_mailbox.h): this process's mailbox, its address blob, mapping a
 * peer's mailbox and checking it is the peer's, watching that a waited-on peer
 * lives, and failing a peer.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "coll_async_clock.h"
#include "coll_async_mailbox_internal.h"

#define BLOB_MAGIC 0x6d626f78u /* "mbox" */
#define BLOB_CMA 1u

/* The address blob: where the mailbox is and what it must hold. The peers are
 * on this node: one byte order. */
struct blob {
    uint32_t magic;
    uint16_t version, flags;
    uint64_t node;
    uint32_t pid, fd;
    uint64_t nonce, chunk_size;
    uint32_t chunks, reserved;
};
_Static_assert(sizeof(struct blob) <= COLL_ASYNC_MAILBOX_ADDRESS_MAX, "the blob fits");

static uint64_t header_token(const struct coll_async_key *key, const struct mailbox_header *h)
{
    return coll_async_mac(key, h, offsetof(struct mailbox_header, token));
}

static void map_layout(struct mailbox_map *map, char *base, size_t length, uint64_t chunk_size,
                       uint32_t chunks)
{
    map->base = base;
    map->length = length;
    map->header = (struct mailbox_header *) base;
    map->ring = (struct mailbox_slot *) (base + mailbox_ring_offset());
    map->staging = base + mailbox_staging_offset();
    map->chunk_size = chunk_size;
    map->chunks = chunks;
}

/* Set-up */

static int own_mailbox(struct mailbox *mb)
{
    const struct coll_async_mailbox_config *c = &mb->config;
    size_t length = mailbox_length(c->chunk_size, c->chunks);
    struct mailbox_header *h;
    char *base;

    mb->memfd = memfd_create("coll_async_mailbox", MFD_CLOEXEC);
    if (mb->memfd < 0) {
        return -errno;
    }
    if (0 != ftruncate(mb->memfd, (off_t) length)) {
        return -errno;
    }
    base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, mb->memfd, 0);
    if (MAP_FAILED == base) {
        return -errno;
    }
    map_layout(&mb->map, base, length, c->chunk_size, c->chunks);
    for (uint32_t i = 0; i < MAILBOX_SLOTS; ++i) {
        mb->map.ring[i].seq = i;
    }
    h = mb->map.header;
    h->magic = MAILBOX_MAGIC;
    h->version = MAILBOX_VERSION;
    h->pid = (uint32_t) getpid();
    h->nonce = mb->nonce;
    h->chunk_size = c->chunk_size;
    h->chunks = c->chunks;
    h->slots = MAILBOX_SLOTS;
    h->token = header_token(&c->key, h);
    return 0;
}

static const struct coll_async_transport_ops mailbox_ops;

int coll_async_mailbox_create(const struct coll_async_mailbox_config *config,
                              struct coll_async_transport **transport)
{
    struct mailbox *mb;
    int rc;

    mb = calloc(1, sizeof(*mb));
    if (NULL == mb) {
        return -ENOMEM;
    }
    mb->base.ops = &mailbox_ops;
    mb->config = *config;
    mb->memfd = -1;
    if (0 == mb->config.chunk_size) {
        mb->config.chunk_size = 64 * 1024;
    }
    if (0 == mb->config.chunks) {
        mb->config.chunks = 16;
    }
    if (0 == mb->config.cma_min) {
        mb->config.cma_min = COLL_ASYNC_MAILBOX_CMA_MIN;
    }
    rc = mb->config.chunks > MAILBOX_MAX_CHUNKS || mb->config.chunk_size > MAILBOX_MAX_CHUNK_SIZE
                 || 0 != mb->config.chunk_size % 64 || config->self >= config->nprocs
             ? -EINVAL
             : coll_async_random(&mb->nonce, sizeof(mb->nonce));
    if (0 == rc) {
        mb->peers = calloc(config->nprocs, sizeof(*mb->peers));
        mb->free_chunks = calloc(mb->config.chunks, sizeof(*mb->free_chunks));
        mb->chunk_holder = calloc(mb->config.chunks, sizeof(*mb->chunk_holder));
        rc = NULL == mb->peers || NULL == mb->free_chunks || NULL == mb->chunk_holder
                 ? -ENOMEM
                 : own_mailbox(mb);
    }
    if (0 != rc) {
        mb->base.ops->destroy(&mb->base);
        return rc;
    }
    mb->max_holds = mb->config.chunks > 1 ? mb->config.chunks / 2 : 1;
    for (uint32_t i = 0; i < mb->config.chunks; ++i) {
        mb->free_chunks[mb->nfree++] = mb->config.chunks - 1 - i;
        mb->chunk_holder[i] = UINT32_MAX;
    }
    if (mb->config.try_cma) {
        /* Where Yama restricts ptrace to descendants, let the peers pull. */
        (void) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    }
    *transport = &mb->base;
    return 0;
}

static int mailbox_address(const struct coll_async_transport *transport, void *out, size_t size)
{
    const struct mailbox *mb = (const struct mailbox *) transport;
    struct blob blob = {
        .magic = BLOB_MAGIC, .version = MAILBOX_VERSION,
        .flags = mb->config.try_cma ? BLOB_CMA : 0, .node = mb->config.node,
        .pid = (uint32_t) getpid(), .fd = (uint32_t) mb->memfd, .nonce = mb->nonce,
        .chunk_size = mb->config.chunk_size, .chunks = mb->config.chunks,
    };

    if (size < sizeof(blob)) {
        return -ENOSPC;
    }
    memcpy(out, &blob, sizeof(blob));
    return (int) sizeof(blob);
}

/* Whether this process can map the mailbox the blob names: one look, no open.
 * Another user's, or a process in another pid namespace (a container), is left
 * to the next transport here rather than failing at the first transfer. */
static bool mailbox_in_reach(const struct blob *blob)
{
    char path[64];
    struct stat st;

    snprintf(path, sizeof(path), "/proc/%u/fd/%u", blob->pid, blob->fd);
    return 0 == stat(path, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid()
           && (size_t) st.st_size == mailbox_length(blob->chunk_size, blob->chunks);
}

static int mailbox_add_peer(struct coll_async_transport *transport, uint32_t id,
                            const struct coll_async_key *key, const void *data, size_t length)
{
    struct mailbox *mb = (struct mailbox *) transport;
    struct mailbox_peer *peer;
    struct blob blob;

    if (id >= mb->config.nprocs || id == mb->config.self) {
        return -EINVAL;
    }
    if (NULL != mb->peers[id]) {
        return -EEXIST;
    }
    /* Another node, another version or no blob of ours: the next transport's. */
    if (sizeof(blob) != length) {
        return -ENETUNREACH;
    }
    memcpy(&blob, data, sizeof(blob));
    if (BLOB_MAGIC != blob.magic || MAILBOX_VERSION != blob.version
        || blob.node != mb->config.node || 0 == blob.pid || 0 == blob.chunks
        || blob.chunks > MAILBOX_MAX_CHUNKS || 0 == blob.chunk_size
        || blob.chunk_size > MAILBOX_MAX_CHUNK_SIZE) {
        return -ENETUNREACH;
    }
    if (!mailbox_in_reach(&blob)) {
        return -ENETUNREACH;
    }
    peer = calloc(1, sizeof(*peer));
    if (NULL == peer) {
        return -ENOMEM;
    }
    peer->id = id;
    peer->key = *key;
    peer->pid = blob.pid;
    peer->fd_number = blob.fd;
    peer->nonce = blob.nonce;
    peer->chunk_size = blob.chunk_size;
    peer->chunks = blob.chunks;
    peer->cma = 0 != (blob.flags & BLOB_CMA);
    peer->pidfd = -1;
    snprintf(peer->too_long, sizeof(peer->too_long),
             "shm: peer %u (pid %u): a transfer longer than the receive posted for its tag", id,
             peer->pid);
    snprintf(peer->too_short, sizeof(peer->too_short),
             "shm: peer %u (pid %u): its receive for the tag is shorter than the send", id,
             peer->pid);
    peer->next = mb->all;
    mb->all = peer;
    mb->peers[id] = peer;
    if (NULL != mb->unadded && (0 != mb->unadded[id].n || mb->unadded[id].overflow)) {
        peer->replay = true; /* it sent first: the next drain takes that in */
        ++mb->nreplay;
    }
    return 0;
}

/* Peers */

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int) syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

/* Maps peer's mailbox and checks it is the one its blob named. 0, or fails the peer. */
static int map_peer(struct mailbox *mb, struct mailbox_peer *peer)
{
    size_t length = mailbox_length(peer->chunk_size, peer->chunks);
    const struct mailbox_header *h;
    char path[64];
    struct stat st;
    char *base;
    int fd;

    /* The pidfd first: if the pid is reused after it, the header tells. */
    peer->pidfd = open_pidfd((pid_t) peer->pid);
    if (peer->pidfd < 0 && ESRCH == errno) {
        mailbox_peer_fail(mb, peer, -ESRCH, "exited");
        return -ESRCH;
    }
    snprintf(path, sizeof(path), "/proc/%u/fd/%u", peer->pid, peer->fd_number);
    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        int rc = -errno;

        mailbox_peer_fail(mb, peer, rc, "cannot open its mailbox %s: %s", path, strerror(-rc));
        return rc;
    }
    if (0 != fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()
        || (size_t) st.st_size != length) {
        close(fd);
        mailbox_peer_fail(mb, peer, -EACCES, "%s is not a mailbox of this user and layout", path);
        return -EACCES;
    }
    base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (MAP_FAILED == base) {
        int rc = -errno;

        mailbox_peer_fail(mb, peer, rc, "cannot map its mailbox: %s", strerror(-rc));
        return rc;
    }
    map_layout(&peer->map, base, length, peer->chunk_size, peer->chunks);
    peer->mapped = true;
    h = peer->map.header;
    if (MAILBOX_MAGIC != h->magic || MAILBOX_VERSION != h->version || peer->pid != h->pid
        || peer->nonce != h->nonce || peer->chunk_size != h->chunk_size
        || peer->chunks != h->chunks || MAILBOX_SLOTS != h->slots
        || !coll_async_tags_equal(h->token, header_token(&peer->key, h))) {
        mailbox_peer_fail(mb, peer, -EACCES,
                          "its mailbox does not prove itself (pid reused, or not the peer's)");
        return -EACCES;
    }
    return 0;
}

int mailbox_peer_ready(struct mailbox *mb, struct mailbox_peer *peer)
{
    if (0 != peer->failed) {
        return peer->failed;
    }
    return peer->mapped ? 0 : map_peer(mb, peer);
}

static bool peer_exited(const struct mailbox_peer *peer)
{
    char path[64], state = '?';
    FILE *stat;

    if (0 <= peer->pidfd) { /* readable once the process has exited, reaped or not */
        struct pollfd pfd = {.fd = peer->pidfd, .events = POLLIN};

        return 0 < poll(&pfd, 1, 0);
    }
    if (0 != kill((pid_t) peer->pid, 0) && ESRCH == errno) {
        return true;
    }
    snprintf(path, sizeof(path), "/proc/%u/stat", peer->pid);
    stat = fopen(path, "r");
    if (NULL == stat) {
        return true;
    }
    /* "pid (comm) S ...": the state follows the last ')'. */
    {
        char line[512], *close;

        if (NULL != fgets(line, sizeof(line), stat) && NULL != (close = strrchr(line, ')'))
            && ' ' == close[1]) {
            state = close[2];
        }
    }
    fclose(stat);
    return 'Z' == state || 'X' == state;
}

void mailbox_peer_check_alive(struct mailbox *mb, struct mailbox_peer *peer, uint64_t now_ns)
{
    if (now_ns < peer->next_check_ns) {
        return;
    }
    peer->next_check_ns = now_ns + MAILBOX_LIVENESS_NS;
    if (peer_exited(peer)) {
        mailbox_peer_fail(mb, peer, -EPIPE, "exited");
    }
}

void mailbox_finish(struct mailbox *mb, struct coll_async_transfer *t, int result,
                    const char *error)
{
    t->result = result;
    t->error = error;
    coll_async_transfer_push(&mb->done, t);
}

static void fail_queue(struct mailbox *mb, struct coll_async_transfer_queue *queue, int rc,
                       const char *error)
{
    struct coll_async_transfer *t;

    while (NULL != (t = coll_async_transfer_pop(queue))) {
        mailbox_finish(mb, t, rc, error);
    }
}

void mailbox_peer_fail(struct mailbox *mb, struct mailbox_peer *peer, int rc, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (0 != peer->failed) {
        return;
    }
    peer->failed = rc;
    n = snprintf(peer->error, sizeof(peer->error), "shm: peer %u (pid %u): ", peer->id, peer->pid);
    va_start(ap, fmt);
    vsnprintf(peer->error + n, sizeof(peer->error) - (size_t) n, fmt, ap);
    va_end(ap);
    for (struct mailbox_incoming *in = peer->incoming; NULL != in; in = in->next) {
        if (NULL != in->recv) {
            mailbox_finish(mb, in->recv, rc, peer->error);
            in->recv = NULL;
        }
    }
    mailbox_drop_incoming(mb, peer);
    fail_queue(mb, &peer->sends, rc, peer->error);
    fail_queue(mb, &peer->recvs, rc, peer->error);
    /* Its CREDITs will not come: our chunks it held are ours again. */
    for (uint32_t c = 0; c < mb->config.chunks; ++c) {
        if (peer->id == mb->chunk_holder[c]) {
            mb->chunk_holder[c] = UINT32_MAX;
            mb->free_chunks[mb->nfree++] = c;
        }
    }
    peer->holds = 0;
    peer->nout = 0;
    peer->out_first = 0;
}

/* Tear-down */

static void mailbox_destroy(struct coll_async_transport *transport)
{
    struct mailbox *mb = (struct mailbox *) transport;
    struct mailbox_peer *peer;

    snprintf(mb->error, sizeof(mb->error), "shm: the transport was destroyed");
    while (NULL != (peer = mb->all)) {
        mb->all = peer->next;
        if (peer->mapped && 0 == peer->failed && mailbox_flush(peer)) {
            /* Best effort (its ring may be full): a peer waiting on us fails now,
             * not when this process exits. */
            struct mailbox_desc bye = {.type = DESC_BYE};

            (void) mailbox_post(mb, peer, &bye);
        }
        for (struct mailbox_incoming *in = peer->incoming; NULL != in; in = in->next) {
            if (NULL != in->recv) {
                mailbox_finish(mb, in->recv, -ECANCELED, mb->error);
                in->recv = NULL;
            }
        }
        mailbox_drop_incoming(mb, peer);
        fail_queue(mb, &peer->sends, -ECANCELED, mb->error);
        fail_queue(mb, &peer->recvs, -ECANCELED, mb->error);
        (void) coll_async_transfer_complete_all(&mb->done);
        if (peer->mapped) {
            munmap(peer->map.base, peer->map.length);
        }
        if (0 <= peer->pidfd) {
            close(peer->pidfd);
        }
        free(peer->out);
        free(peer);
    }
    (void) coll_async_transfer_complete_all(&mb->done);
    if (NULL != mb->map.base) {
        munmap(mb->map.base, mb->map.length);
    }
    if (0 <= mb->memfd) {
        close(mb->memfd);
    }
    for (uint32_t id = 0; NULL != mb->unadded && id < mb->config.nprocs; ++id) {
        free(mb->unadded[id].descs);
    }
    free(mb->unadded);
    free(mb->peers);
    free(mb->free_chunks);
    free(mb->chunk_holder);
    free(mb);
}

static int mailbox_fd(const struct coll_async_transport *transport)
{
    (void) transport;
    return -1; /* nothing to sleep on: the driver polls while a transfer is in flight */
}

void coll_async_mailbox_stats(const struct coll_async_transport *transport,
                              struct coll_async_mailbox_stats *stats)
{
    *stats = ((const struct mailbox *) transport)->stats;
}

void coll_async_mailbox_test_fail_cma(struct coll_async_transport *transport, int rc)
{
    ((struct mailbox *) transport)->fail_cma = rc;
}

int coll_async_mailbox_test_push(struct coll_async_transport *transport, uint32_t id,
                                 struct mailbox_desc *desc)
{
    struct mailbox *mb = (struct mailbox *) transport;
    struct mailbox_peer *peer = id < mb->config.nprocs ? mb->peers[id] : NULL;
    int rc = NULL == peer ? -EINVAL : mailbox_peer_ready(mb, peer);

    return 0 != rc ? rc : mailbox_post(mb, peer, desc);
}

static const struct coll_async_transport_ops mailbox_ops = {
    .name = "shm",
    .destroy = mailbox_destroy,
    .progress = mailbox_progress,
    .fd = mailbox_fd,
    .address = mailbox_address,
    .add_peer = mailbox_add_peer,
    .send = mailbox_send,
    .recv = mailbox_recv,
    .bcast = NULL,
    .release = NULL,
};
