/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the verbs RC transport: posting, addresses, registration, set-up
 * and teardown, counters. See coll_async_verbs.h, and
 * coll_async_verbs_internal.h for how it works inside.
 */

#define _GNU_SOURCE

#include "coll_async_verbs_internal.h"

/* Posting */

/* The peer an op may be posted to, or NULL with *rc set (and op->error when it failed). */
static struct coll_async_verbs_peer *peer_for_op(struct coll_async_verbs *verbs, uint32_t id,
                                                 struct coll_async_transfer *op, int *rc)
{
    struct coll_async_verbs_peer *peer = verbs_peer_get(verbs, id);

    if (NULL == peer) {
        *rc = id >= verbs->config.nprocs || id == verbs->config.self ? -EINVAL : -ENOMEM;
        return NULL;
    }
    if (0 != peer->error) {
        op->error = peer->message;
        *rc = peer->error;
        return NULL;
    }
    if (!peer->routable) {
        *rc = -EHOSTUNREACH;
        return NULL;
    }
    return peer;
}

/* A bulk send of at most eager_limit bytes: one SMALL message. */
static int post_small(struct coll_async_verbs *verbs, uint32_t id, uint64_t tag,
                      const void *data, size_t length, struct coll_async_transfer *op)
{
    struct coll_async_verbs_peer *peer;
    int rc;

    if (NULL == (peer = peer_for_op(verbs, id, op, &rc))) {
        return rc;
    }
    verbs_op_start(op, peer, tag, data, length, STAGE_SMALL);
    op_of(op)->queued = true;
    coll_async_transfer_push(&peer->outbox, op);
    verbs_kick(verbs, peer);
    return 0;
}

static int verbs_send(struct coll_async_transport *transport, uint32_t id, uint64_t tag,
                      const void *data, size_t length, struct coll_async_transfer *op)
{
    struct coll_async_verbs *verbs = (struct coll_async_verbs *) transport;
    struct coll_async_verbs_peer *peer;
    struct ready *ready;
    int rc;

    if (length <= verbs->config.eager_limit) {
        return post_small(verbs, id, tag, data, length, op);
    }
    if (NULL == (peer = peer_for_op(verbs, id, op, &rc))) {
        return rc;
    }
    verbs_op_start(op, peer, tag, data, length, STAGE_AWAIT);
    ready = verbs_take_ready(peer, tag);
    if (NULL != ready) {
        verbs_start_bulk(verbs, op, ready);
    } else {
        op_of(op)->queued = true;
        coll_async_transfer_push(&peer->awaiting, op);
    }
    verbs_kick(verbs, peer);
    return 0;
}

static struct unexpected **find_unexpected(struct coll_async_verbs_peer *peer, uint64_t tag)
{
    struct unexpected **p = &peer->unexpected;

    while (NULL != *p && (*p)->tag != tag) {
        p = &(*p)->next;
    }
    return p;
}

/* A receive posted after its SMALL came takes the staged copy; one too small
 * leaves it for a bigger one, as TCP's does. */
static int recv_staged(struct coll_async_verbs *verbs, struct coll_async_transfer *op,
                       struct unexpected **p)
{
    struct unexpected *u = *p;

    if (u->length > op_of(op)->length) {
        return -EMSGSIZE;
    }
    *p = u->next;
    if (u->length > 0) {
        memcpy(op_of(op)->buffer, u->data, u->length);
    }
    op->bytes = u->length;
    free(u);
    verbs_op_done(verbs, op);
    return 0;
}

static int verbs_recv(struct coll_async_transport *transport, uint32_t id, uint64_t tag,
                      void *buffer, size_t length, struct coll_async_transfer *op)
{
    struct coll_async_verbs *verbs = (struct coll_async_verbs *) transport;
    struct coll_async_verbs_peer *peer;
    struct unexpected **staged;
    int rc;

    if (NULL == (peer = peer_for_op(verbs, id, op, &rc))) {
        return rc;
    }
    if (NULL != verbs_receive_by_tag(peer, tag)) {
        return -EBUSY;
    }
    verbs_op_start(op, peer, tag, buffer, length, STAGE_READY);
    if (NULL != *(staged = find_unexpected(peer, tag))) {
        return recv_staged(verbs, op, staged);
    }
    if (length > verbs->config.eager_limit) {
        struct coll_async_verbs_cache_entry *entry;

        rc = coll_async_verbs_cache_acquire(verbs->cache, buffer, length, &entry);
        if (0 != rc) {
            return rc;
        }
        if (!((struct registration *) coll_async_verbs_cache_handle(entry))->writable) {
            coll_async_verbs_cache_release(verbs->cache, entry);
            return -EFAULT;
        }
        op_of(op)->registration = entry;
    }
    rc = verbs_receive_add(peer, op);
    if (0 != rc) {
        if (NULL != op_of(op)->registration) {
            coll_async_verbs_cache_release(verbs->cache, op_of(op)->registration);
        }
        return rc;
    }
    op_of(op)->queued = true;
    coll_async_transfer_push(&peer->outbox, op);
    verbs_kick(verbs, peer);
    return 0;
}

/* Addresses */

static int verbs_address(const struct coll_async_transport *transport, void *blob, size_t size)
{
    const struct coll_async_verbs *verbs = (const struct coll_async_verbs *) transport;
    uint8_t *p = blob;
    size_t length = ADDRESS_HEADER + ADDRESS_PORT * (size_t) verbs->nports;

    if (size < length) {
        return -ENOSPC;
    }
    memset(p, 0, length);
    p[0] = ADDRESS_MAGIC0;
    p[1] = ADDRESS_MAGIC1;
    p[2] = ADDRESS_VERSION;
    p[3] = (uint8_t) verbs->nports;
    p[4] = (uint8_t) verbs->config.max_ports;
    for (int i = 0; i < verbs->nports; ++i) {
        uint8_t *entry = p + ADDRESS_HEADER + ADDRESS_PORT * i;

        memcpy(entry, &verbs->ports[i].addr.s_addr, 4);
        entry[4] = (uint8_t) (verbs->ports[i].cm_port >> 8);
        entry[5] = (uint8_t) verbs->ports[i].cm_port;
        entry[6] = verbs->ports[i].prefix;
    }
    return (int) length;
}

static int decode_address(const void *blob, size_t length, struct endpoint *endpoints,
                          int *max_links)
{
    const uint8_t *p = blob;
    int count;

    if (length < ADDRESS_HEADER || ADDRESS_MAGIC0 != p[0] || ADDRESS_MAGIC1 != p[1]
        || ADDRESS_VERSION != p[2]) {
        return -EINVAL;
    }
    count = p[3];
    *max_links = p[4];
    if (0 == count || count > COLL_ASYNC_VERBS_MAX_PORTS
        || length != ADDRESS_HEADER + ADDRESS_PORT * (size_t) count || 0 == *max_links) {
        return -EINVAL;
    }
    for (int i = 0; i < count; ++i) {
        const uint8_t *entry = p + ADDRESS_HEADER + ADDRESS_PORT * i;

        memcpy(&endpoints[i].addr.s_addr, entry, 4);
        endpoints[i].cm_port = (uint16_t) (entry[4] << 8 | entry[5]);
        endpoints[i].prefix = entry[6];
        if (0 == endpoints[i].cm_port || endpoints[i].prefix > 32) {
            return -EINVAL;
        }
    }
    return count;
}

/* Pairs ports the way both sides do alike: each of the lower id's ports, in order,
 * takes the first unused port of the higher id's on its subnet. */
static int verbs_add_peer(struct coll_async_transport *transport, uint32_t id,
                          const struct coll_async_key *key, const void *blob, size_t length)
{
    struct coll_async_verbs *verbs = (struct coll_async_verbs *) transport;
    struct endpoint theirs[COLL_ASYNC_VERBS_MAX_PORTS];
    bool used[COLL_ASYNC_VERBS_MAX_PORTS] = {false};
    struct coll_async_verbs_peer *peer;
    int max_links, count = decode_address(blob, length, theirs, &max_links), n = 0;
    bool lower = verbs->config.self < id;
    int nlo, nhi, max;

    if (count <= 0 || id >= verbs->config.nprocs || id == verbs->config.self) {
        return -EINVAL;
    }
    peer = verbs_peer_get(verbs, id);
    if (NULL == peer) {
        return -ENOMEM;
    }
    if (peer->routable) {
        return -EEXIST;
    }
    peer->key = *key;
    nlo = lower ? verbs->nports : count;
    nhi = lower ? count : verbs->nports;
    max = verbs->config.max_ports < max_links ? verbs->config.max_ports : max_links;
    for (int i = 0; i < nlo && n < max; ++i) {
        for (int j = 0; j < nhi; ++j) {
            int mine = lower ? i : j, other = lower ? j : i;
            const struct port *port = &verbs->ports[mine];

            if (used[j]
                || !coll_async_ipv4_same_subnet(port->addr, port->prefix, theirs[other].addr,
                                                theirs[other].prefix)) {
                continue;
            }
            used[j] = true;
            peer->links[n].port = mine;
            peer->links[n].remote = theirs[other];
            ++n;
            break;
        }
    }
    if (0 == n) {
        return -ENETUNREACH;
    }
    peer->nlinks = n;
    peer->max_links = max_links;
    peer->routable = true;
    verbs_kick(verbs, peer); /* credits may be owed on QPs it opened already */
    return 0;
}

/* Registration, through the cache: every port's protection domain */

static void deregister_memory(void *context, void *handle)
{
    struct coll_async_verbs *verbs = context;
    struct registration *registration = handle;

    for (int p = 0; p < verbs->nports; ++p) {
        if (NULL != registration->mrs[p]) {
            ibv_dereg_mr(registration->mrs[p]);
        }
    }
    free(registration);
}

/* Registers for remote writes, or for reading only when the memory is read-only
 * (a send buffer in a constant). */
static int register_memory(void *context, void *address, size_t length, void **handle)
{
    struct coll_async_verbs *verbs = context;
    struct registration *registration = calloc(1, sizeof(*registration));
    int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

    if (NULL == registration) {
        return -ENOMEM;
    }
    registration->writable = true;
    for (int p = 0; p < verbs->nports; ++p) {
        registration->mrs[p] = ibv_reg_mr(verbs->ports[p].pd, address, length, access);
        if (NULL != registration->mrs[p]) {
            continue;
        }
        if (0 == access || (EFAULT != errno && EACCES != errno)) {
            int rc = -errno;

            deregister_memory(verbs, registration);
            return rc;
        }
        for (int q = 0; q < p; ++q) {
            ibv_dereg_mr(registration->mrs[q]);
            registration->mrs[q] = NULL;
        }
        access = 0;
        registration->writable = false;
        p = -1;
    }
    *handle = registration;
    return 0;
}

/*
 * The heap below the program break is never cached. glibc gives its top back
 * with sbrk(-n) and takes pages again with sbrk(+n), new pages at the same
 * addresses; Open MPI's memory hooks see that only in brk, which glibc's sbrk
 * calls. A library that overrides sbrk itself goes around them: UCX's UCM,
 * which Debian's Open MPI 5 links into every process (libopen-pal), replaces
 * sbrk with its own that makes the brk system call directly, so a trimmed heap
 * reached no release hook and cached registrations kept the old pages (the NIC
 * wrote where the program no longer reads). Nothing tells this transport when
 * heap pages change, so their registrations last only while transfers hold
 * them.
 */

/* Where the heap of the program break starts: start_brk, the 47th field of
 * /proc/self/stat (Linux 3.5); 0, so that everything below the break counts as
 * heap, when it cannot be read. */
static uintptr_t heap_start(void)
{
    char text[1024], *p;
    unsigned long long start = 0;
    FILE *f = fopen("/proc/self/stat", "re");
    size_t n = NULL != f ? fread(text, 1, sizeof(text) - 1, f) : 0;

    if (NULL != f) {
        fclose(f);
    }
    text[n] = '\0';
    p = strrchr(text, ')'); /* the command name may hold spaces and parentheses */
    for (int field = 2; NULL != p && field < 47; ++field) {
        p = strchr(p + 1, ' ');
    }
    if (NULL == p || 1 != sscanf(p + 1, "%llu", &start)) {
        return 0;
    }
    return (uintptr_t) start;
}

static int registration_lasting(void *context, uintptr_t start, uintptr_t end)
{
    struct coll_async_verbs *verbs = context;
    uintptr_t brk_now;

    if (end <= verbs->heap_start) {
        return 1; /* the program's own data */
    }
    brk_now = (uintptr_t) syscall(SYS_brk, 0); /* as the kernel has it, whoever moved it */
    return start >= brk_now;
}

static void verbs_release(struct coll_async_transport *transport, const void *address,
                          size_t length)
{
    coll_async_verbs_cache_invalidate(((struct coll_async_verbs *) transport)->cache, address,
                                      length);
}

/* Set-up and teardown */

static struct port *port_of(struct coll_async_verbs *verbs, const struct rdma_cm_id *id)
{
    const char *name = ibv_get_device_name(id->verbs->device);

    for (int p = 0; p < verbs->nports; ++p) {
        if (0 == strcmp(verbs->ports[p].info.device, name)
            && verbs->ports[p].info.port == id->port_num) {
            return &verbs->ports[p];
        }
    }
    return NULL;
}

/*
 * Gives each port a listening id on an IPv4 address of its own: binding an id to
 * an address makes rdma_cm name the device and port behind it (for RoCE and
 * IPoIB alike). The first address found per port wins.
 */
static int listen_on_ports(struct coll_async_verbs *verbs)
{
    struct ifaddrs *ifs, *ifa;

    if (0 != getifaddrs(&ifs)) {
        return -errno;
    }
    for (ifa = ifs; NULL != ifa; ifa = ifa->ifa_next) {
        struct rdma_cm_id *id;
        struct port *port;

        if (NULL == ifa->ifa_addr || AF_INET != ifa->ifa_addr->sa_family
            || !(ifa->ifa_flags & IFF_UP) || (ifa->ifa_flags & IFF_LOOPBACK)
            || NULL == ifa->ifa_netmask) {
            continue;
        }
        if (0 != rdma_create_id(verbs->cm, &id, NULL, RDMA_PS_TCP)) {
            continue;
        }
        if (0 != rdma_bind_addr(id, ifa->ifa_addr) || NULL == id->verbs
            || NULL == (port = port_of(verbs, id)) || NULL != port->listener
            || 0 != rdma_listen(id, LISTEN_BACKLOG)) {
            rdma_destroy_id(id);
            continue;
        }
        id->context = port;
        port->listener = id;
        port->addr = ((const struct sockaddr_in *) ifa->ifa_addr)->sin_addr;
        port->prefix = coll_async_ipv4_prefix(ifa->ifa_netmask);
        port->cm_port = ntohs(rdma_get_src_port(id));
    }
    freeifaddrs(ifs);
    return 0;
}

/* Drops the ports that got no address, keeping the order. */
static void keep_listening_ports(struct coll_async_verbs *verbs)
{
    int kept = 0;

    for (int p = 0; p < verbs->nports; ++p) {
        if (NULL != verbs->ports[p].listener) {
            verbs->ports[kept] = verbs->ports[p];
            verbs->ports[kept].listener->context = &verbs->ports[kept];
            ++kept;
        }
    }
    verbs->nports = kept;
}

static struct device *device_of(struct coll_async_verbs *verbs, struct ibv_context *context)
{
    struct device *device;
    struct epoll_event ev = {.events = EPOLLIN};

    for (int d = 0; d < verbs->ndevices; ++d) {
        if (verbs->devices[d].context == context) {
            return &verbs->devices[d];
        }
    }
    device = &verbs->devices[verbs->ndevices];
    device->context = context;
    device->channel = ibv_create_comp_channel(context);
    if (NULL == device->channel) {
        return NULL;
    }
    ++verbs->ndevices;
    ev.data.u32 = POLL_DEVICE + (uint32_t) (device - verbs->devices);
    if (0 != fcntl(device->channel->fd, F_SETFL, O_NONBLOCK)
        || 0 != epoll_ctl(verbs->epfd, EPOLL_CTL_ADD, device->channel->fd, &ev)) {
        return NULL;
    }
    return device;
}

/* Protection domain, CQ and completion channel for each port. */
static int open_port(struct coll_async_verbs *verbs, struct port *port, char *why, size_t why_len)
{
    struct ibv_context *context = port->listener->verbs;
    struct ibv_port_attr attr;
    char name[80];

    port->device = device_of(verbs, context);
    if (NULL == port->device) {
        snprintf(why, why_len, "%s: cannot create a completion channel: %s",
                 verbs_port_name(port, name, sizeof(name)), strerror(errno));
        return -errno;
    }
    port->pd = ibv_alloc_pd(context);
    port->cq = NULL != port->pd
                   ? ibv_create_cq(context, CQ_INITIAL, port, port->device->channel, 0)
                   : NULL;
    if (NULL == port->cq || 0 != ibv_req_notify_cq(port->cq, 0)
        || 0 != ibv_query_port(context, (uint8_t) port->info.port, &attr)) {
        snprintf(why, why_len, "%s: cannot create a protection domain and a CQ: %s",
                 verbs_port_name(port, name, sizeof(name)), strerror(errno));
        return -errno;
    }
    port->armed = true;
    port->max_msg = attr.max_msg_sz;
    return 0;
}

static void config_defaults(struct coll_async_verbs_config *config)
{
    if (0 == config->eager_limit) {
        config->eager_limit = DEFAULT_EAGER_LIMIT;
    }
    if (0 == config->chunk_size) {
        config->chunk_size = DEFAULT_CHUNK;
    }
    if (config->max_ports <= 0 || config->max_ports > COLL_ASYNC_VERBS_MAX_PORTS) {
        config->max_ports = COLL_ASYNC_VERBS_MAX_PORTS;
    }
    if (config->connect_timeout_ms <= 0) {
        config->connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
    }
    if (0 == config->cache_bytes) {
        config->cache_bytes = DEFAULT_CACHE_BYTES;
    }
    if (config->max_unproven <= 0) {
        config->max_unproven = DEFAULT_MAX_UNPROVEN;
    }
    config->include = config->exclude = NULL; /* the caller's strings: only create reads them */
}

static int create_channels(struct coll_async_verbs *verbs)
{
    struct epoll_event cm = {.events = EPOLLIN, .data.u32 = POLL_CM};
    struct epoll_event timer = {.events = EPOLLIN, .data.u32 = POLL_TIMER};

    verbs->epfd = epoll_create1(EPOLL_CLOEXEC);
    verbs->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    verbs->cm = rdma_create_event_channel();
    if (verbs->epfd < 0 || verbs->timerfd < 0 || NULL == verbs->cm
        || 0 != fcntl(verbs->cm->fd, F_SETFL, O_NONBLOCK)
        || 0 != epoll_ctl(verbs->epfd, EPOLL_CTL_ADD, verbs->cm->fd, &cm)
        || 0 != epoll_ctl(verbs->epfd, EPOLL_CTL_ADD, verbs->timerfd, &timer)) {
        return -errno;
    }
    return 0;
}

static int open_all(struct coll_async_verbs *verbs, char *why, size_t why_len)
{
    static const struct coll_async_verbs_cache_ops cache_ops = {
        register_memory, deregister_memory, registration_lasting};
    int rc = create_channels(verbs);

    if (0 != rc) {
        snprintf(why, why_len, "cannot create the event channels: %s", strerror(-rc));
        return rc;
    }
    rc = listen_on_ports(verbs);
    keep_listening_ports(verbs);
    if (0 == verbs->nports) {
        snprintf(why, why_len, 0 != rc ? "getifaddrs failed"
                                        : "no active RDMA port has an IPv4 address rdma_cm can "
                                          "listen on");
        return -ENODEV;
    }
    for (int p = 0; p < verbs->nports; ++p) {
        if (0 != (rc = open_port(verbs, &verbs->ports[p], why, why_len))) {
            return rc;
        }
        if (verbs->config.chunk_size > verbs->ports[p].max_msg) {
            verbs->config.chunk_size = verbs->ports[p].max_msg;
        }
    }
    verbs->heap_start = heap_start();
    rc = coll_async_verbs_cache_create(&verbs->cache, &cache_ops, verbs,
                                       verbs->config.uncached ? 0 : verbs->config.cache_bytes);
    verbs->peers = calloc(verbs->config.nprocs, sizeof(*verbs->peers));
    if (0 != rc || NULL == verbs->peers) {
        snprintf(why, why_len, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

static void verbs_destroy(struct coll_async_transport *transport);

static const struct coll_async_transport_ops verbs_ops = {
    .name = "verbs",
    .destroy = verbs_destroy,
    .progress = verbs_progress,
    .fd = verbs_fd,
    .address = verbs_address,
    .add_peer = verbs_add_peer,
    .send = verbs_send,
    .recv = verbs_recv,
    .release = verbs_release,
};

int coll_async_verbs_create(struct coll_async_verbs **out,
                            const struct coll_async_verbs_config *config, char *why,
                            size_t why_len)
{
    struct coll_async_verbs_port_info ports[COLL_ASYNC_VERBS_MAX_PORTS];
    struct coll_async_verbs *verbs;
    int count, rc;

    *out = NULL;
    if (config->self >= config->nprocs || config->eager_limit > UINT32_MAX / 2) {
        snprintf(why, why_len, "bad configuration (self %u of %u, eager_limit %zu)", config->self,
                 config->nprocs, config->eager_limit);
        return -EINVAL;
    }
    count = coll_async_verbs_discover(config->include, config->exclude, ports,
                                      COLL_ASYNC_VERBS_MAX_PORTS, why, why_len);
    if (count <= 0) {
        return count < 0 ? count : -ENODEV;
    }
    verbs = calloc(1, sizeof(*verbs));
    if (NULL == verbs) {
        snprintf(why, why_len, "out of memory");
        return -ENOMEM;
    }
    verbs->transport.ops = &verbs_ops;
    verbs->config = *config;
    config_defaults(&verbs->config);
    verbs->refusals.say = config->on_refused;
    verbs->refusals.context = config->context;
    verbs->slot_size = (HEADER + (verbs->config.eager_limit > READY_BODY
                                      ? verbs->config.eager_limit
                                      : READY_BODY) + 63) & ~(size_t) 63;
    verbs->nports = count;
    for (int p = 0; p < count; ++p) {
        verbs->ports[p].info = ports[p];
    }
    rc = open_all(verbs, why, why_len);
    if (0 != rc) {
        verbs_destroy(&verbs->transport);
        return rc;
    }
    *out = verbs;
    return 0;
}

static void close_ports(struct coll_async_verbs *verbs)
{
    for (int p = 0; p < verbs->nports; ++p) {
        struct port *port = &verbs->ports[p];

        if (NULL != port->cq) {
            ibv_destroy_cq(port->cq);
        }
        if (NULL != port->pd) {
            ibv_dealloc_pd(port->pd);
        }
    }
    for (int d = 0; d < verbs->ndevices; ++d) {
        ibv_destroy_comp_channel(verbs->devices[d].channel);
    }
    /* Last: the listening ids keep librdmacm's device contexts open. */
    for (int p = 0; p < verbs->nports; ++p) {
        if (NULL != verbs->ports[p].listener) {
            rdma_destroy_id(verbs->ports[p].listener);
        }
    }
}

static void verbs_destroy(struct coll_async_transport *transport)
{
    struct coll_async_verbs *verbs = (struct coll_async_verbs *) transport;

    for (struct coll_async_verbs_peer *peer = verbs->all_peers; NULL != peer; peer = peer->next) {
        verbs_peer_fail(verbs, peer, NULL, "transport closed", -ECANCELED);
    }
    coll_async_transfer_complete_all(&verbs->done);
    while (NULL != verbs->conns) {
        struct conn *conn = verbs->conns;

        verbs->conns = conn->next;
        verbs_conn_close(verbs, conn); /* those no peer owns: not proven yet */
        verbs_conn_free(conn);
    }
    while (NULL != verbs->all_peers) {
        struct coll_async_verbs_peer *peer = verbs->all_peers;

        verbs->all_peers = peer->next;
        free(peer->receives);
        free(peer);
    }
    coll_async_verbs_cache_destroy(verbs->cache);
    close_ports(verbs);
    if (NULL != verbs->cm) {
        rdma_destroy_event_channel(verbs->cm);
    }
    if (verbs->timerfd >= 0) {
        close(verbs->timerfd);
    }
    if (verbs->epfd >= 0) {
        close(verbs->epfd);
    }
    free(verbs->peers);
    free(verbs);
}

/* Counters */

int coll_async_verbs_ports(const struct coll_async_verbs *verbs,
                           struct coll_async_verbs_port_info *ports, int max)
{
    int count = verbs->nports < max ? verbs->nports : max;

    for (int p = 0; p < count; ++p) {
        ports[p] = verbs->ports[p].info;
    }
    return count;
}

int coll_async_verbs_port_bytes(const struct coll_async_verbs *verbs, uint32_t id,
                                uint64_t *bytes, int max)
{
    const struct coll_async_verbs_peer *peer = id < verbs->config.nprocs ? verbs->peers[id] : NULL;
    int count = verbs->nports < max ? verbs->nports : max;

    for (int p = 0; p < count; ++p) {
        bytes[p] = 0;
    }
    for (int l = 0; NULL != peer && l < peer->nlinks; ++l) {
        if (peer->links[l].port < count) {
            bytes[peer->links[l].port] += peer->links[l].bytes;
        }
    }
    return count;
}
