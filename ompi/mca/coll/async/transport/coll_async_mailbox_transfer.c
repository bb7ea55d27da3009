/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the shared-memory transport's protocol (coll_async_mailbox.h):
 * posting sends and receives, draining this process's ring into per-peer
 * lists (whatever is posted, so the ring never waits on a post), staging and
 * pulling, and holding every descriptor to its bounds. A peer that breaks them
 * fails, alone.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "coll_async_clock.h"
#include "coll_async_mailbox_internal.h"
#include "coll_async_scratch.h"
#include "coll_async_shm.h" /* coll_async_shm_copy */


static struct mailbox_peer *peer_of(struct mailbox *mb, uint32_t id)
{
    return id < mb->config.nprocs ? mb->peers[id] : NULL;
}

/* Posting */

/* NULL, or the peer ready for transfers; else says why in transfer. */
static struct mailbox_peer *usable_peer(struct mailbox *mb, uint32_t id,
                                        struct coll_async_transfer *t, int *rc)
{
    struct mailbox_peer *peer = peer_of(mb, id);

    t->bytes = 0;
    if (NULL == peer) {
        t->error = "shm: the peer was never added";
        *rc = -EINVAL;
        return NULL;
    }
    *rc = mailbox_peer_ready(mb, peer);
    if (0 != *rc) {
        t->error = peer->error;
        return NULL;
    }
    return peer;
}

static int send_advance(struct mailbox *mb, struct mailbox_peer *peer);

int mailbox_send(struct coll_async_transport *transport, uint32_t id, uint64_t tag,
                 const void *data, size_t length, struct coll_async_transfer *t)
{
    struct mailbox *mb = (struct mailbox *) transport;
    struct mailbox_peer *peer;
    struct mailbox_send *s = mailbox_send_of(t);
    int rc;

    if (NULL == (peer = usable_peer(mb, id, t, &rc))) {
        return rc;
    }
    memset(s, 0, sizeof(*s));
    s->peer = peer;
    s->tag = tag;
    s->data = data;
    s->length = length;
    s->cma = mb->config.try_cma && peer->cma && !peer->cma_refused
             && length >= mb->config.cma_min;
    t->status = COLL_ASYNC_TRANSFER_PENDING;
    t->error = NULL;
    coll_async_transfer_push(&peer->sends, t);
    (void) send_advance(mb, peer);
    return 0;
}

static struct mailbox_incoming *find_incoming(struct mailbox_peer *peer, uint64_t tag)
{
    struct mailbox_incoming *in = peer->incoming;

    while (NULL != in && in->tag != tag) {
        in = in->next;
    }
    return in;
}

static void incoming_step(struct mailbox *mb, struct mailbox_peer *peer,
                          struct mailbox_incoming *in);
static bool match(struct mailbox *mb, struct mailbox_peer *peer, struct mailbox_incoming *in,
                  struct coll_async_transfer *t);

int mailbox_recv(struct coll_async_transport *transport, uint32_t id, uint64_t tag,
                 void *buffer, size_t length, struct coll_async_transfer *t)
{
    struct mailbox *mb = (struct mailbox *) transport;
    struct mailbox_recv *r = mailbox_recv_of(t);
    struct mailbox_incoming *in;
    struct mailbox_peer *peer;
    int rc;

    if (NULL == (peer = usable_peer(mb, id, t, &rc))) {
        return rc;
    }
    memset(r, 0, sizeof(*r));
    r->peer = peer;
    r->tag = tag;
    r->buffer = buffer;
    r->length = length;
    t->status = COLL_ASYNC_TRANSFER_PENDING;
    t->error = NULL;
    in = find_incoming(peer, tag);
    if (NULL != in && NULL == in->recv && !in->discard) {
        if (match(mb, peer, in, t)) {
            incoming_step(mb, peer, in);
        }
    } else {
        coll_async_transfer_push(&peer->recvs, t);
    }
    return 0;
}

/* Sending */

static int post(struct mailbox *mb, struct mailbox_peer *peer, struct mailbox_desc *desc)
{
    int rc = mailbox_post(mb, peer, desc);

    if (0 != rc) {
        mailbox_peer_fail(mb, peer, rc, "no memory for a descriptor");
    }
    return rc;
}

/* One send's next steps, while chunks and ring room last. false: stop for now. */
static bool send_step(struct mailbox *mb, struct mailbox_peer *peer, struct mailbox_send *s)
{
    if (s->cma) {
        if (!s->announced) {
            struct mailbox_desc d = {.type = DESC_RTS, .tag = s->tag, .total = s->length,
                                     .arg = (uint64_t) (uintptr_t) s->data};

            s->announced = true;
            return 0 == post(mb, peer, &d) && 0 == peer->nout;
        }
        return true;
    }
    if (0 == s->length && !s->announced) {
        struct mailbox_desc d = {.type = DESC_DATA, .tag = s->tag, .arg = MAILBOX_NO_CHUNK};

        s->announced = true;
        return 0 == post(mb, peer, &d) && 0 == peer->nout;
    }
    while (s->staged < s->length) {
        struct mailbox_desc d = {.type = DESC_DATA, .tag = s->tag, .total = s->length};
        size_t n = s->length - s->staged;
        uint32_t chunk;

        if (0 == mb->nfree || 0 != peer->nout || peer->holds >= mb->max_holds) {
            return false; /* back-pressure: no chunk, its share taken, or its ring full */
        }
        chunk = mb->free_chunks[--mb->nfree];
        mb->chunk_holder[chunk] = peer->id;
        ++peer->holds;
        n = n < mb->config.chunk_size ? n : mb->config.chunk_size;
        coll_async_shm_copy(mb->map.staging + (size_t) chunk * mb->config.chunk_size,
                            s->data + s->staged, n);
        d.offset = s->staged;
        d.length = (uint32_t) n;
        d.arg = chunk;
        s->staged += n;
        s->announced = true;
        if (0 != post(mb, peer, &d)) {
            return false;
        }
    }
    return true;
}

static int send_advance(struct mailbox *mb, struct mailbox_peer *peer)
{
    int before = (int) mb->nfree;

    if (!mailbox_flush(peer)) {
        return 0;
    }
    for (struct coll_async_transfer *t = peer->sends.head; NULL != t && 0 == peer->failed;
         t = t->next) {
        if (!send_step(mb, peer, mailbox_send_of(t))) {
            break;
        }
    }
    return before != (int) mb->nfree;
}

static struct coll_async_transfer *find_send(struct mailbox_peer *peer, uint64_t tag)
{
    struct coll_async_transfer *t = peer->sends.head;

    while (NULL != t && mailbox_send_of(t)->tag != tag) {
        t = t->next;
    }
    return t;
}

static void on_done(struct mailbox *mb, struct mailbox_peer *peer, const struct mailbox_desc *d)
{
    struct coll_async_transfer *t = find_send(peer, d->tag);
    int64_t status = (int64_t) d->arg;
    struct mailbox_send *s;

    if (NULL == t) {
        mailbox_peer_fail(mb, peer, -EPROTO, "a DONE for tag %llu, which has no send",
                          (unsigned long long) d->tag);
        return;
    }
    s = mailbox_send_of(t);
    if (MAILBOX_CMA_REFUSED == status && s->cma) {
        /* It cannot pull from us: staged from here on. */
        s->cma = false;
        s->announced = false;
        peer->cma_refused = true;
        ++mb->stats.cma_fallbacks;
        return;
    }
    if ((0 != status && -EMSGSIZE != status) || (!s->cma && s->staged != s->length)) {
        mailbox_peer_fail(mb, peer, -EPROTO, "a DONE for tag %llu of status %lld, out of turn",
                          (unsigned long long) d->tag, (long long) status);
        return;
    }
    coll_async_transfer_remove(&peer->sends, t);
    if (0 == status) {
        ++*(s->cma ? &mb->stats.cma_sends : &mb->stats.staged_sends);
    }
    mailbox_finish(mb, t, (int) status, 0 == status ? NULL : peer->too_short);
}

static void on_credit(struct mailbox *mb, struct mailbox_peer *peer, const struct mailbox_desc *d)
{
    if (d->arg >= mb->config.chunks || peer->id != mb->chunk_holder[d->arg]) {
        mailbox_peer_fail(mb, peer, -EPROTO, "a CREDIT for chunk %llu, which it does not hold",
                          (unsigned long long) d->arg);
        return;
    }
    mb->chunk_holder[d->arg] = UINT32_MAX;
    mb->free_chunks[mb->nfree++] = (uint32_t) d->arg;
    --peer->holds;
}

/* Receiving */

static struct mailbox_incoming *new_incoming(struct mailbox *mb, struct mailbox_peer *peer,
                                             const struct mailbox_desc *d)
{
    struct mailbox_incoming *in;

    if (peer->nincoming >= MAILBOX_MAX_INCOMING) {
        mailbox_peer_fail(mb, peer, -EPROTO, "more than %d transfers before their receives",
                          MAILBOX_MAX_INCOMING);
        return NULL;
    }
    in = calloc(1, sizeof(*in));
    if (NULL == in) {
        mailbox_peer_fail(mb, peer, -ENOMEM, "no memory for a transfer");
        return NULL;
    }
    in->tag = d->tag;
    in->total = d->total;
    in->pieces_tail = &in->pieces;
    in->next = peer->incoming;
    peer->incoming = in;
    ++peer->nincoming;
    return in;
}

static void free_incoming(struct mailbox *mb, struct mailbox_incoming *in)
{
    struct mailbox_piece *p;

    while (NULL != (p = in->pieces)) {
        in->pieces = p->next;
        free(p);
    }
    if (NULL != in->early) {
        mb->early_bytes -= in->total;
        coll_async_scratch_give(in->early);
    }
    free(in);
}

static void remove_incoming(struct mailbox *mb, struct mailbox_peer *peer,
                            struct mailbox_incoming *in)
{
    struct mailbox_incoming **p = &peer->incoming;

    while (*p != in) {
        p = &(*p)->next;
    }
    *p = in->next;
    --peer->nincoming;
    peer->pieces -= in->npieces;
    free_incoming(mb, in);
}

void mailbox_drop_incoming(struct mailbox *mb, struct mailbox_peer *peer)
{
    struct mailbox_incoming *in;

    while (NULL != (in = peer->incoming)) {
        peer->incoming = in->next;
        free_incoming(mb, in);
    }
    peer->nincoming = 0;
    peer->pieces = 0;
}

/* in's receive is posted: it takes the transfer, or fails as too short.
 * false: in is gone. */
static bool match(struct mailbox *mb, struct mailbox_peer *peer, struct mailbox_incoming *in,
                  struct coll_async_transfer *t)
{
    t->bytes = in->total;
    if (in->total <= mailbox_recv_of(t)->length) {
        in->recv = t;
        if (NULL != in->early) { /* one more copy, of what came before the receive */
            coll_async_shm_copy(mailbox_recv_of(t)->buffer, in->early, in->early_end);
            mb->stats.early_copied += in->early_end;
            mb->early_bytes -= in->total;
            coll_async_scratch_give(in->early);
            in->early = NULL;
        }
        return true;
    }
    mailbox_finish(mb, t, -EMSGSIZE, peer->too_long);
    in->discard = true;
    if (NULL != in->early) {
        mb->early_bytes -= in->total;
        coll_async_scratch_give(in->early);
        in->early = NULL;
    }
    if (in->cma) { /* nothing to drain: say so now */
        struct mailbox_desc d = {.type = DESC_DONE, .tag = in->tag, .arg = (uint64_t) -EMSGSIZE};

        remove_incoming(mb, peer, in);
        (void) post(mb, peer, &d);
        return false;
    }
    return true;
}

static void match_posted(struct mailbox *mb, struct mailbox_peer *peer,
                         struct mailbox_incoming *in)
{
    for (struct coll_async_transfer *t = peer->recvs.head; NULL != t; t = t->next) {
        if (mailbox_recv_of(t)->tag == in->tag) {
            coll_async_transfer_remove(&peer->recvs, t);
            (void) match(mb, peer, in, t); /* staged in stays: on_data goes on with it */
            return;
        }
    }
}

/* Room to copy in's pieces out before its receive: the sender's chunks must
 * not wait on a post (the post may wait on the sender's other transfers). */
static bool early_room(struct mailbox *mb, struct mailbox_incoming *in)
{
    if (NULL == in->early && 0 != in->total && in->total <= MAILBOX_EARLY_LIMIT - mb->early_bytes
        && NULL != (in->early = coll_async_scratch_take(in->total))) {
        mb->early_bytes += in->total;
    }
    return NULL != in->early;
}

/* Copies (or drops) in's waiting pieces once it can, and ends it when whole. */
static void incoming_step(struct mailbox *mb, struct mailbox_peer *peer,
                          struct mailbox_incoming *in)
{
    struct mailbox_piece *p;

    if (in->cma || (NULL == in->recv && !in->discard && !early_room(mb, in))) {
        return; /* pulled; or held, its chunks the back-pressure */
    }
    while (NULL != (p = in->pieces)) {
        struct mailbox_desc credit = {.type = DESC_CREDIT, .arg = p->chunk};
        const char *from = peer->map.staging + p->chunk * peer->chunk_size;

        if (NULL != in->recv) {
            coll_async_shm_copy(mailbox_recv_of(in->recv)->buffer + p->offset, from, p->length);
        } else if (NULL != in->early) {
            coll_async_shm_copy(in->early + p->offset, from, p->length);
            if (p->offset + p->length > in->early_end) {
                in->early_end = p->offset + p->length;
            }
        }
        in->received += p->length;
        in->pieces = p->next;
        --in->npieces;
        --peer->pieces;
        free(p);
        if (0 != post(mb, peer, &credit)) {
            return;
        }
    }
    in->pieces_tail = &in->pieces;
    if (in->received == in->total && (NULL != in->recv || in->discard)) {
        struct mailbox_desc done = {.type = DESC_DONE, .tag = in->tag,
                                    .arg = in->discard ? (uint64_t) -EMSGSIZE : 0};

        if (NULL != in->recv) {
            mailbox_finish(mb, in->recv, 0, NULL);
        }
        remove_incoming(mb, peer, in);
        (void) post(mb, peer, &done);
    }
}

static void on_data(struct mailbox *mb, struct mailbox_peer *peer, const struct mailbox_desc *d)
{
    struct mailbox_incoming *in = find_incoming(peer, d->tag);
    struct mailbox_piece *p;

    if (d->offset > d->total || d->length > d->total - d->offset
        || (0 == d->length ? MAILBOX_NO_CHUNK != d->arg || 0 != d->total
                           : d->arg >= peer->chunks || d->length > peer->chunk_size)) {
        mailbox_peer_fail(mb, peer, -EPROTO,
                          "a DATA of %u bytes at %llu of %llu in chunk %llu, out of bounds",
                          d->length, (unsigned long long) d->offset,
                          (unsigned long long) d->total, (unsigned long long) d->arg);
        return;
    }
    if (NULL == in) {
        if (NULL == (in = new_incoming(mb, peer, d))) {
            return;
        }
        match_posted(mb, peer, in);
    } else if (in->cma || in->total != d->total || in->received + d->length > in->total) {
        mailbox_peer_fail(mb, peer, -EPROTO, "a DATA for tag %llu that its transfer does not take",
                          (unsigned long long) d->tag);
        return;
    }
    if (0 != d->length) {
        if (peer->pieces >= peer->chunks || NULL == (p = malloc(sizeof(*p)))) {
            mailbox_peer_fail(mb, peer, -EPROTO, "more pieces held than it has chunks");
            return;
        }
        p->next = NULL;
        p->offset = d->offset;
        p->chunk = d->arg;
        p->length = d->length;
        *in->pieces_tail = p;
        in->pieces_tail = &p->next;
        ++in->npieces;
        ++peer->pieces;
    }
    incoming_step(mb, peer, in);
}

static void on_rts(struct mailbox *mb, struct mailbox_peer *peer, const struct mailbox_desc *d)
{
    struct mailbox_incoming *in;

    if (0 == d->total || 0 == d->arg || NULL != find_incoming(peer, d->tag)) {
        mailbox_peer_fail(mb, peer, -EPROTO, "an RTS for tag %llu, out of turn",
                          (unsigned long long) d->tag);
        return;
    }
    if (!mb->config.try_cma) {
        struct mailbox_desc refuse = {.type = DESC_DONE, .tag = d->tag,
                                      .arg = MAILBOX_CMA_REFUSED};

        (void) post(mb, peer, &refuse);
        return;
    }
    if (NULL != (in = new_incoming(mb, peer, d))) {
        in->cma = true;
        in->address = d->arg;
        match_posted(mb, peer, in);
    }
}

/* Pulls matched CMA transfers from peer, within *budget bytes. */
static int pull(struct mailbox *mb, struct mailbox_peer *peer, size_t *budget)
{
    struct mailbox_incoming *in, *next;
    int pulled = 0;

    for (in = peer->incoming; NULL != in && *budget > 0 && 0 == peer->failed; in = next) {
        struct mailbox_recv *r;
        size_t n;
        ssize_t moved;

        next = in->next;
        if (!in->cma || NULL == in->recv) {
            continue;
        }
        r = mailbox_recv_of(in->recv);
        n = in->total - in->received;
        n = n < MAILBOX_CMA_PIECE ? n : MAILBOX_CMA_PIECE;
        n = n < *budget ? n : *budget;
        {
            struct iovec here = {.iov_base = r->buffer + in->received, .iov_len = n};
            struct iovec there = {.iov_base = (void *) (uintptr_t) (in->address + in->received),
                                  .iov_len = n};

            moved = 0 != mb->fail_cma ? (errno = -mb->fail_cma, -1)
                                      : process_vm_readv((pid_t) peer->pid, &here, 1, &there, 1,
                                                         0);
        }
        ++pulled;
        if (0 == moved) {
            moved = -1;
            errno = EFAULT; /* nothing there: as a bad address */
        }
        if (moved > 0) {
            in->received += (uint64_t) moved;
            *budget -= (size_t) moved;
        } else if (moved < 0 && (EPERM == errno || ENOSYS == errno || EFAULT == errno
                                 || EACCES == errno)) {
            struct mailbox_desc refuse = {.type = DESC_DONE, .tag = in->tag,
                                          .arg = MAILBOX_CMA_REFUSED};

            in->cma = false; /* the pieces come staged now */
            in->received = 0;
            (void) post(mb, peer, &refuse);
            continue;
        } else if (moved < 0 && EINTR != errno && EAGAIN != errno) {
            mailbox_peer_fail(mb, peer, ESRCH == errno ? -EPIPE : -errno,
                              ESRCH == errno ? "exited" : "a CMA pull failed");
            return pulled;
        }
        if (in->received == in->total) {
            struct mailbox_desc done = {.type = DESC_DONE, .tag = in->tag};

            mailbox_finish(mb, in->recv, 0, NULL);
            remove_incoming(mb, peer, in);
            (void) post(mb, peer, &done);
        }
    }
    return pulled;
}

/* Progress */

static void dispatch(struct mailbox *mb, struct mailbox_peer *peer, const struct mailbox_desc *d)
{
    switch (d->type) {
    case DESC_DATA:
        on_data(mb, peer, d);
        break;
    case DESC_CREDIT:
        on_credit(mb, peer, d);
        break;
    case DESC_RTS:
        on_rts(mb, peer, d);
        break;
    case DESC_DONE:
        on_done(mb, peer, d);
        break;
    case DESC_BYE:
        mailbox_peer_fail(mb, peer, -ECONNRESET, "closed its transport");
        break;
    default:
        mailbox_peer_fail(mb, peer, -EPROTO, "a descriptor of unknown type %u", d->type);
    }
}

/* A sealed descriptor from peer: it counts if it is the next of its serials. */
static void take_in(struct mailbox *mb, struct mailbox_peer *peer, const struct mailbox_desc *d)
{
    if (0 != peer->failed || d->serial != peer->serial_in) {
        ++mb->stats.refused; /* a replay, or a failed peer's */
        return;
    }
    ++peer->serial_in;
    if (0 == mailbox_peer_ready(mb, peer)) {
        dispatch(mb, peer, d);
    }
}

/* Holds a sealed descriptor from a process not added yet: dropping it would
 * lose it and, its serial spent, refuse all it sends after (a hang). Bounded:
 * past MAILBOX_MAX_UNADDED the process fails when added. */
static void hold_unadded(struct mailbox *mb, const struct mailbox_desc *d)
{
    struct mailbox_unadded *u;

    if (NULL == mb->unadded
        && NULL == (mb->unadded = calloc(mb->config.nprocs, sizeof(*mb->unadded)))) {
        ++mb->stats.refused; /* no memory: as a stranger's */
        return;
    }
    u = &mb->unadded[d->from];
    if (!u->overflow && u->n == u->capacity) {
        uint32_t capacity = 0 == u->capacity ? 16 : 2 * u->capacity;
        struct mailbox_desc *grown = capacity > MAILBOX_MAX_UNADDED
                                         ? NULL
                                         : realloc(u->descs, capacity * sizeof(*grown));

        if (NULL == grown) {
            u->overflow = true;
        } else {
            u->descs = grown;
            u->capacity = capacity;
        }
    }
    if (u->overflow) {
        ++mb->stats.refused;
        return;
    }
    u->descs[u->n++] = *d;
}

/* Takes in, in their order, what the peers added since the last drain sent
 * before they were: ahead of the ring, which holds only what came after. */
static void replay_unadded(struct mailbox *mb)
{
    for (struct mailbox_peer *peer = mb->all; NULL != peer && 0 != mb->nreplay;
         peer = peer->next) {
        struct mailbox_unadded *u;

        if (!peer->replay) {
            continue;
        }
        peer->replay = false;
        --mb->nreplay;
        u = &mb->unadded[peer->id];
        if (u->overflow) {
            mailbox_peer_fail(mb, peer, -EPROTO,
                              "sent more than %d descriptors before this process added it",
                              MAILBOX_MAX_UNADDED);
        }
        for (uint32_t i = 0; i < u->n; ++i) {
            take_in(mb, peer, &u->descs[i]);
        }
        free(u->descs);
        memset(u, 0, sizeof(*u));
    }
}

/* Takes in what the ring holds, whatever is posted; bounded, as producers
 * refill it while it drains. */
static int drain(struct mailbox *mb)
{
    struct mailbox_desc d;
    int count = 0;

    if (0 != mb->nreplay) {
        replay_unadded(mb);
    }
    while (count < MAILBOX_DRAIN && mailbox_ring_pop(&mb->map, &mb->head, &d)) {
        struct mailbox_peer *peer;

        ++count;
        if (!mailbox_seal_valid(&mb->config.key, &d) || d.from >= mb->config.nprocs
            || d.from == mb->config.self) {
            ++mb->stats.refused; /* a stranger's */
        } else if (NULL == (peer = peer_of(mb, d.from))) {
            hold_unadded(mb, &d); /* it added us before we added it */
        } else {
            take_in(mb, peer, &d);
        }
    }
    return count;
}

static bool busy(const struct mailbox_peer *peer)
{
    return NULL != peer->sends.head || NULL != peer->recvs.head || NULL != peer->incoming
           || 0 != peer->nout;
}

int mailbox_progress(struct coll_async_transport *transport)
{
    struct mailbox *mb = (struct mailbox *) transport;
    size_t budget = MAILBOX_CMA_BUDGET;
    uint64_t now = 0;
    int did = drain(mb);

    for (struct mailbox_peer *peer = mb->all; NULL != peer; peer = peer->next) {
        if (0 != peer->failed || !peer->mapped || !busy(peer)) {
            continue;
        }
        did += send_advance(mb, peer);
        did += pull(mb, peer, &budget);
        if (0 == now) {
            now = coll_async_now_ns();
        }
        mailbox_peer_check_alive(mb, peer, now);
    }
    return did + coll_async_transfer_complete_all(&mb->done);
}
