/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the UD multicast transport's set-up: the port (through the
 * device:port filter), the queues and buffers, the join through rdma_cm and its
 * events, and destroy. See coll_async_mcast_internal.h.
 */

#define _GNU_SOURCE

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "coll_async_mcast_internal.h"

/* Small helpers */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static void say(char *why, size_t why_len, const char *format, ...)
{
    va_list ap;

    if (NULL == why || 0 == why_len) {
        return;
    }
    va_start(ap, format);
    vsnprintf(why, why_len, format, ap);
    va_end(ap);
}

/* rdma_cm events */

static void joined(struct coll_async_mcast *m, const struct rdma_cm_event *event)
{
    m->group_qpn = event->param.ud.qp_num;
    m->qkey = event->param.ud.qkey;
    m->ah_template = event->param.ud.ah_attr;
    m->group_ah = ibv_create_ah(m->pd, &m->ah_template);
    if (NULL == m->group_ah) {
        m->attached = -errno;
        say(m->attach_error, sizeof(m->attach_error), "%s: no address handle for the group: %s",
            m->name, strerror(-m->attached));
        mcast_set_fatal(m, m->attached, "%s", m->attach_error);
        return;
    }
    m->attached = 1;
}

int mcast_cm_events(struct coll_async_mcast *m)
{
    struct rdma_cm_event *event;
    int count = 0;

    while (0 == rdma_get_cm_event(m->cm_channel, &event)) {
        ++count;
        switch (event->event) {
        case RDMA_CM_EVENT_MULTICAST_JOIN:
            if (0 != event->status) {
                m->attached = event->status < 0 ? event->status : -EIO;
                say(m->attach_error, sizeof(m->attach_error), "%s: joining failed: %s", m->name,
                    strerror(-m->attached));
                mcast_set_fatal(m, m->attached, "%s", m->attach_error);
            } else {
                joined(m, event);
            }
            break;
        case RDMA_CM_EVENT_MULTICAST_ERROR:
        case RDMA_CM_EVENT_DEVICE_REMOVAL:
        case RDMA_CM_EVENT_ADDR_CHANGE:
            m->attached = -ENETDOWN;
            say(m->attach_error, sizeof(m->attach_error), "%s: %s", m->name,
                rdma_event_str(event->event));
            mcast_set_fatal(m, m->attached, "%s", m->attach_error);
            break;
        default:
            break;
        }
        rdma_ack_cm_event(event);
    }
    return count;
}

/* Finding the port */

static bool port_kept(const struct coll_async_mcast *m, struct rdma_cm_id *id)
{
    const char *device = ibv_get_device_name(id->verbs->device);
    struct ibv_port_attr attr;

    if (!coll_async_port_filter_keeps(&m->filter, device, id->port_num)) {
        return false;
    }
    return 0 == ibv_query_port(id->verbs, id->port_num, &attr) && IBV_PORT_ACTIVE == attr.state;
}

/* Binds m->id to address on a kept port; whether it did. */
static bool try_bind(struct coll_async_mcast *m, const struct sockaddr_in *address)
{
    if (0 != rdma_create_id(m->cm_channel, &m->id, m, RDMA_PS_UDP)) {
        return false;
    }
    if (0 == rdma_bind_addr(m->id, (struct sockaddr *) address) && NULL != m->id->verbs &&
        port_kept(m, m->id)) {
        m->local = *address;
        return true;
    }
    rdma_destroy_id(m->id);
    m->id = NULL;
    return false;
}

static int bind_port(struct coll_async_mcast *m, char *why, size_t why_len)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    struct ifaddrs *ifs;

    if (NULL != m->config.address && '\0' != m->config.address[0]) {
        if (1 != inet_pton(AF_INET, m->config.address, &sin.sin_addr)) {
            say(why, why_len, "mcast: %s is no IPv4 address", m->config.address);
            return -EINVAL;
        }
        if (try_bind(m, &sin)) {
            return 0;
        }
        say(why, why_len, "mcast: no active RDMA port the filter keeps has address %s",
            m->config.address);
        return -ENODEV;
    }
    if (0 != getifaddrs(&ifs)) {
        say(why, why_len, "mcast: getifaddrs: %s", strerror(errno));
        return -errno;
    }
    for (struct ifaddrs *ifa = ifs; NULL != ifa; ifa = ifa->ifa_next) {
        if (NULL != ifa->ifa_addr && AF_INET == ifa->ifa_addr->sa_family) {
            sin.sin_addr = ((const struct sockaddr_in *) ifa->ifa_addr)->sin_addr;
            if (try_bind(m, &sin)) {
                freeifaddrs(ifs);
                return 0;
            }
        }
    }
    freeifaddrs(ifs);
    say(why, why_len, "mcast: no active RDMA port%s has an IPv4 address",
        (NULL != m->config.include && '\0' != m->config.include[0]) ||
                (NULL != m->config.exclude && '\0' != m->config.exclude[0])
            ? " that the filter keeps"
            : "");
    return -ENODEV;
}

/* Creation and destruction */

static int config_check(struct coll_async_mcast_config *config, char *why, size_t why_len)
{
    if (NULL != config->include && '\0' != config->include[0] && NULL != config->exclude &&
        '\0' != config->exclude[0]) {
        say(why, why_len, "mcast: include and exclude are mutually exclusive");
        return -EINVAL;
    }
    if (0 == config->nranks || config->self >= config->nranks || config->drop_fraction < 0 ||
        config->drop_fraction > 1 || config->window < 0 || config->window > MAX_WINDOW ||
        config->resend_timeout_ms < 0 || config->failure_timeout_ms < 0) {
        say(why, why_len, "mcast: bad configuration");
        return -EINVAL;
    }
    if (0 == config->window) {
        config->window = DEFAULT_WINDOW;
    }
    if (0 == config->resend_timeout_ms) {
        config->resend_timeout_ms = DEFAULT_RESEND_MS;
    }
    if (0 == config->failure_timeout_ms) {
        config->failure_timeout_ms = DEFAULT_FAILURE_MS;
    }
    return 0;
}

/* The port filter, parsed once (include and exclude are not both given). */
static int parse_filter(struct coll_async_mcast *m, char *why, size_t why_len)
{
    char reason[160];
    int rc = coll_async_port_filter_parse(m->config.include, m->config.exclude, &m->filter,
                                          reason, sizeof(reason));

    if (0 != rc) {
        say(why, why_len, "mcast: %s", reason);
    }
    return rc;
}

/* The packet size: the port's active MTU, or less when asked. */
static int choose_mtu(struct coll_async_mcast *m, char *why, size_t why_len)
{
    struct ibv_port_attr attr;
    size_t active;

    if (0 != ibv_query_port(m->id->verbs, m->id->port_num, &attr)) {
        say(why, why_len, "mcast: ibv_query_port: %s", strerror(errno));
        return -errno;
    }
    active = (size_t) 128 << attr.active_mtu; /* IBV_MTU_256 is 1 */
    m->mtu = 0 == m->config.mtu || m->config.mtu > active ? active : m->config.mtu;
    if (m->mtu < MIN_MTU) {
        say(why, why_len, "mcast: packets of %zu bytes are too small", m->mtu);
        return -EINVAL;
    }
    m->ethernet = IBV_LINK_LAYER_ETHERNET == attr.link_layer;
    m->lid = attr.lid;
    m->payload = m->mtu - DATA_HEADER;
    m->max_ranges = (uint32_t) ((m->mtu - REPORT_HEADER) / 8);
    if (m->max_ranges > MAX_RANGES) {
        m->max_ranges = MAX_RANGES;
    }
    return 0;
}

static int alloc_state(struct coll_async_mcast *m)
{
    size_t words = (m->window + 63) / 64, n = m->config.nranks;
    size_t bytes = (size_t) m->recv_depth * (GRH_BYTES + m->mtu) + (size_t) m->send_depth * m->mtu;

    m->members = calloc(n, sizeof(*m->members));
    m->staged = calloc(m->window, sizeof(*m->staged));
    m->staging = malloc((size_t) m->window * m->payload);
    m->free_sends = malloc(sizeof(int) * (size_t) m->send_depth);
    m->recv_wrs = calloc((size_t) m->recv_depth, sizeof(*m->recv_wrs));
    m->recv_sges = calloc((size_t) m->recv_depth, sizeof(*m->recv_sges));
    if (NULL == m->members || NULL == m->staged || NULL == m->staging || NULL == m->free_sends ||
        NULL == m->recv_wrs || NULL == m->recv_sges ||
        0 != posix_memalign((void **) &m->memory, 4096, bytes)) {
        return -ENOMEM;
    }
    for (int i = 0; i < COLL_ASYNC_MCAST_MAX_ACTIVE; ++i) {
        struct slot *slot = &m->slots[i];

        slot->bits = calloc(words, sizeof(uint64_t));
        slot->acked = calloc(n, sizeof(uint32_t));
        slot->state = calloc(n, 1);
        slot->member_heard_us = calloc(n, sizeof(uint64_t));
        slot->sent_stamp = calloc(m->window, sizeof(uint32_t));
        if (NULL == slot->bits || NULL == slot->acked || NULL == slot->state ||
            NULL == slot->member_heard_us || NULL == slot->sent_stamp) {
            return -ENOMEM;
        }
    }
    for (int i = 0; i < m->send_depth; ++i) {
        m->free_sends[i] = m->send_depth - 1 - i;
    }
    m->nfree_sends = m->send_depth;
    m->mr = ibv_reg_mr(m->pd, m->memory, bytes, IBV_ACCESS_LOCAL_WRITE);
    return NULL == m->mr ? -errno : 0;
}

static int set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);

    return flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ? -errno : 0;
}

static int watch(struct coll_async_mcast *m, int fd)
{
    struct epoll_event ev = {.events = EPOLLIN};

    ev.data.fd = fd;
    return 0 != epoll_ctl(m->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int open_queues(struct coll_async_mcast *m, char *why, size_t why_len)
{
    struct ibv_qp_init_attr init = {.qp_type = IBV_QPT_UD, .sq_sig_all = 0};
    int rc;

    m->pd = ibv_alloc_pd(m->id->verbs);
    m->comp_channel = ibv_create_comp_channel(m->id->verbs);
    if (NULL == m->pd || NULL == m->comp_channel) {
        say(why, why_len, "%s: protection domain or completion channel: %s", m->name,
            strerror(errno));
        return -errno;
    }
    m->cq = ibv_create_cq(m->id->verbs, m->recv_depth + m->send_depth, m, m->comp_channel, 0);
    if (NULL == m->cq) {
        say(why, why_len, "%s: ibv_create_cq: %s", m->name, strerror(errno));
        return -errno;
    }
    init.send_cq = init.recv_cq = m->cq;
    init.cap.max_send_wr = (uint32_t) m->send_depth;
    init.cap.max_recv_wr = (uint32_t) m->recv_depth;
    init.cap.max_send_sge = init.cap.max_recv_sge = 1;
    if (0 != rdma_create_qp(m->id, m->pd, &init)) {
        say(why, why_len, "%s: rdma_create_qp: %s", m->name, strerror(errno));
        return -errno;
    }
    rc = alloc_state(m);
    if (0 != rc) {
        say(why, why_len, "%s: buffers: %s", m->name, strerror(-rc));
        return rc;
    }
    for (int i = 0; i < m->recv_depth; ++i) {
        mcast_repost_receive(m, i);
    }
    mcast_flush_reposts(m);
    if (0 != m->fatal) {
        say(why, why_len, "%s", m->fatal_message);
        return m->fatal;
    }
    return 0;
}

static int open_fds(struct coll_async_mcast *m, char *why, size_t why_len)
{
    int rc;

    m->epfd = epoll_create1(EPOLL_CLOEXEC);
    m->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (m->epfd < 0 || m->timerfd < 0) {
        say(why, why_len, "mcast: epoll or timerfd: %s", strerror(errno));
        return -errno;
    }
    rc = set_nonblocking(m->cm_channel->fd);
    if (0 == rc) {
        rc = watch(m, m->cm_channel->fd);
    }
    if (0 == rc) {
        rc = watch(m, m->timerfd);
    }
    if (0 != rc) {
        say(why, why_len, "mcast: %s", strerror(-rc));
    }
    return rc;
}

static int open_cq_fd(struct coll_async_mcast *m, char *why, size_t why_len)
{
    int rc = set_nonblocking(m->comp_channel->fd);

    if (0 == rc) {
        rc = watch(m, m->comp_channel->fd);
    }
    if (0 != rc) {
        say(why, why_len, "mcast: completion channel: %s", strerror(-rc));
    }
    return rc;
}

/* The group's address: 239.192.0.0/14 (organization-local scope, RFC 2365),
 * the low 18 bits from the group id. */
static void group_address(struct coll_async_mcast *m)
{
    uint32_t low = (uint32_t) (mix64(m->config.group_id) & 0x3ffff);

    m->group.sin_family = AF_INET;
    m->group.sin_addr.s_addr = htonl((239u << 24) | (192u << 16) | low);
}

static void name_it(struct coll_async_mcast *m)
{
    char group[INET_ADDRSTRLEN], local[INET_ADDRSTRLEN];

    inet_ntop(AF_INET, &m->group.sin_addr, group, sizeof(group));
    inet_ntop(AF_INET, &m->local.sin_addr, local, sizeof(local));
    snprintf(m->name, sizeof(m->name), "mcast %s on %s:%u (%s)", group,
             ibv_get_device_name(m->id->verbs->device), m->id->port_num, local);
}

int coll_async_mcast_create(struct coll_async_mcast **out,
                            const struct coll_async_mcast_config *config, char *why,
                            size_t why_len)
{
    struct coll_async_mcast *m = calloc(1, sizeof(*m));
    int rc;

    *out = NULL;
    if (NULL == m) {
        return -ENOMEM;
    }
    m->base.ops = &mcast_ops;
    m->config = *config;
    m->epfd = m->timerfd = -1;
    rc = config_check(&m->config, why, why_len);
    if (0 == rc) {
        rc = parse_filter(m, why, why_len);
    }
    if (0 != rc) {
        free(m);
        return rc;
    }
    m->window = (uint32_t) m->config.window;
    m->ack_every = m->window / 4 > 0 ? m->window / 4 : 1;
    m->resend_us = (uint64_t) m->config.resend_timeout_ms * 1000;
    m->failure_us = (uint64_t) m->config.failure_timeout_ms * 1000;
    m->gap_interval_us = m->resend_us / 4;
    m->recv_depth = 2 * (int) m->window + 64;
    m->send_depth = ((int) m->window < 128 ? (int) m->window : 128) + REPORT_SLOTS;
    m->rng = mix64(m->config.drop_seed ^ mix64(m->config.self + 1)) | 1;
    group_address(m);

    m->cm_channel = rdma_create_event_channel();
    if (NULL == m->cm_channel) {
        say(why, why_len, "mcast: no rdma_cm (%s): no RDMA device here?", strerror(errno));
        rc = ENOENT == errno || ENODEV == errno ? -ENODEV : -errno;
        goto fail;
    }
    rc = open_fds(m, why, why_len);
    if (0 == rc) {
        rc = bind_port(m, why, why_len);
    }
    if (0 != rc) {
        goto fail;
    }
    name_it(m);
    memcpy(m->gid.raw, &m->id->route.addr.addr.ibaddr.sgid, 16);
    rc = choose_mtu(m, why, why_len);
    if (0 == rc) {
        rc = open_queues(m, why, why_len);
    }
    if (0 == rc) {
        rc = open_cq_fd(m, why, why_len);
    }
    if (0 != rc) {
        goto fail;
    }
    if (0 != rdma_join_multicast(m->id, (struct sockaddr *) &m->group, m)) {
        rc = -errno;
        say(why, why_len, "%s: rdma_join_multicast: %s", m->name, strerror(errno));
        goto fail;
    }
    m->joined = 1;
    *out = m;
    return 0;

fail:
    mcast_destroy(&m->base);
    return rc;
}

void mcast_destroy(struct coll_async_transport *transport)
{
    struct coll_async_mcast *m = mcast_of(transport);

    if (NULL == m) {
        return;
    }
    mcast_set_fatal(m, -ECANCELED, "%s: destroyed", '\0' != m->name[0] ? m->name : "mcast");
    mcast_fail_all(m);
    coll_async_transfer_complete_all(&m->done);
    for (uint32_t r = 0; NULL != m->members && r < m->config.nranks; ++r) {
        if (NULL != m->members[r].ah) {
            ibv_destroy_ah(m->members[r].ah);
        }
    }
    if (NULL != m->group_ah) {
        ibv_destroy_ah(m->group_ah);
    }
    if (m->joined) {
        rdma_leave_multicast(m->id, (struct sockaddr *) &m->group);
    }
    if (NULL != m->id && NULL != m->id->qp) {
        rdma_destroy_qp(m->id);
    }
    if (NULL != m->mr) {
        ibv_dereg_mr(m->mr);
    }
    if (NULL != m->cq) {
        ibv_destroy_cq(m->cq);
    }
    if (NULL != m->comp_channel) {
        ibv_destroy_comp_channel(m->comp_channel);
    }
    if (NULL != m->pd) {
        ibv_dealloc_pd(m->pd);
    }
    if (NULL != m->id) {
        rdma_destroy_id(m->id);
    }
    if (NULL != m->cm_channel) {
        rdma_destroy_event_channel(m->cm_channel);
    }
    if (m->epfd >= 0) {
        close(m->epfd);
    }
    if (m->timerfd >= 0) {
        close(m->timerfd);
    }
    for (int i = 0; i < COLL_ASYNC_MCAST_MAX_ACTIVE; ++i) {
        free(m->slots[i].bits);
        free(m->slots[i].acked);
        free(m->slots[i].state);
        free(m->slots[i].member_heard_us);
        free(m->slots[i].sent_stamp);
    }
    free(m->members);
    free(m->staged);
    free(m->staging);
    free(m->free_sends);
    free(m->recv_wrs);
    free(m->recv_sges);
    free(m->memory);
    free(m);
}
