/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: this process's endpoint on the mapper.
 *
 * One mapper per process (transport/coll_async_net.h), opened at component
 * open, which comes before Open MPI's modex, so the address blobs ride the
 * modex on this process's card (coll_async_card.h) like a BTL's. Its
 * transports, in the order it prefers them: shared memory to the peers of this
 * node (the mailbox, always), then, when the job may span nodes (real or
 * virtual), verbs where rdma-core found an active port, and TCP, always:
 * processes of other jobs (MPI_Comm_spawn, connect/accept) may appear in any
 * job, and TCP is what reaches them. Peers are
 * added on first use, when a communicator that needs them is created, and the
 * mapper then picks each one's transport; connections open later still, on a
 * collective's first message. The engine's driver polls the mapper
 * (coll_async_engine_watch), so every call into it is made under the driver's
 * exclusion: the progress thread's, or an application thread's holding it. A
 * connection the verbs transport refuses (one that did not prove it belongs to
 * the job) is said at verbose level 1, one line each, as many as the transport
 * lets through.
 *
 * The mapper's ids: this job's processes are their vpids, 0 .. nprocs-1; a
 * process of another job gets the next free id from nprocs on, up to
 * FOREIGN_MAX of them, when it is first added or first connects (having
 * proved it holds this process's key). On the wire TCP names every process by
 * its 64-bit Open MPI name (jobid << 32 | vpid), which both jobs agree on.
 * Only TCP carries another job's process: the mailbox keeps to this job's
 * (its slots are the job's), and verbs, whose handshake names a vpid, is not
 * offered one.
 */

#include "ompi_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ompi/proc/proc.h"
#include "opal/mca/memory/base/base.h"
#include "opal/memoryhooks/memory.h"
#include "opal/util/output.h"

#include "coll_async.h"
#include "coll_async_card.h"
#include "coll_async_network.h"
#include "transport/coll_async_mailbox.h"
#include "transport/coll_async_tcp.h"
#include "transport/coll_async_verbs.h"

/* What this process knows of each process of the job (network.peers). */
enum { PEER_ADDED = 1, PEER_HAS_VERBS = 2 /* published a verbs address */ };

/* Processes of other jobs one process can reach: a bound on the tables sized
 * by ids (a byte in the mapper's, a pointer in TCP's, each). */
#define FOREIGN_MAX 4096

static struct {
    struct coll_async_net *net;
    /* The transports given to the mapper, in its order: where each one's address
     * rides the cards. */
    enum coll_async_card_blob card_blob[COLL_ASYNC_NET_MAX_TRANSPORTS];
    int ntransports;
    uint32_t self, nprocs; /* this process's id, and the job's processes */
    uint32_t ids;          /* nprocs + FOREIGN_MAX: the mapper's id space */
    unsigned char *peers;  /* per id: PEER_ flags */
    uint64_t *foreign;     /* [FOREIGN_MAX]: the name of id nprocs + i */
    uint32_t nforeign;
    bool memory_hooks;     /* Open MPI's memory framework opened for us */
    bool release_hook;     /* invalidating verbs registrations on free */
    struct coll_async_transport *mailbox; /* the mapper's, while it is open */
    char interfaces[512];  /* for the verbose line */
} network;

/* Whether any process of the job may be on another node. */
static bool job_spans_nodes(const struct coll_async_config *config)
{
    return config->virtual_nodes > 1
           || (uint32_t) ompi_process_info.num_local_peers + 1 < ompi_process_info.num_procs;
}

static uint64_t name_of_proc(const struct ompi_proc_t *proc)
{
    return (uint64_t) proc->super.proc_name.jobid << 32 | proc->super.proc_name.vpid;
}

/* The wire's name of a mapper id (coll_async_tcp.h's names). */
static uint64_t name_of_id(void *context, uint32_t id)
{
    (void) context;
    return id < network.nprocs ? (uint64_t) OMPI_PROC_MY_NAME->jobid << 32 | id
                               : network.foreign[id - network.nprocs];
}

/* The mapper id of a process name: its vpid in this job; another job's
 * process gets the next free id the first time. */
static int id_of_name(void *context, uint64_t name, uint32_t *id)
{
    (void) context;
    if ((uint32_t) (name >> 32) == OMPI_PROC_MY_NAME->jobid) {
        *id = (uint32_t) name;
        return *id < network.nprocs ? 0 : -ENOENT;
    }
    for (uint32_t i = 0; i < network.nforeign; ++i) {
        if (network.foreign[i] == name) {
            *id = network.nprocs + i;
            return 0;
        }
    }
    if (FOREIGN_MAX == network.nforeign) {
        return -ENOSPC;
    }
    network.foreign[network.nforeign] = name;
    *id = network.nprocs + network.nforeign++;
    return 0;
}

static int progress(void *net)
{
    return coll_async_net_progress(net);
}

/* The interfaces to listen on; with virtual nodes and no list given, loopback:
 * the pretend nodes share this machine. A job on one node takes the same as a
 * job across nodes (its address's interfaces, loopback only when nothing else
 * is up): the processes of another job that meet it may be on other nodes, and
 * a link pairs only endpoints on one subnet, so loopback would pair with theirs. */
static int choose_interfaces(struct coll_async_tcp_if *ifs, const struct coll_async_config *config)
{
    const char *include = config->tcp.include, *exclude = config->tcp.exclude;
    struct coll_async_tcp_if_filter filter;
    char why[256];
    int count;

    if (config->virtual_nodes > 1 && '\0' == include[0] && '\0' == exclude[0]) {
        include = "127.0.0.1/8";
    }
    if (0 != coll_async_tcp_if_parse(include, exclude, &filter, why, sizeof(why))) {
        mca_coll_async_show_help(mca_coll_async_first_process(), "bad value",
                                 '\0' != include[0] ? "tcp_if_include" : "tcp_if_exclude",
                                 '\0' != include[0] ? include : exclude, why);
        return OMPI_ERR_BAD_PARAM;
    }
    count = coll_async_tcp_if_discover(ifs, COLL_ASYNC_TCP_MAX_IFS);
    return count < 0 ? count : coll_async_tcp_if_apply(&filter, ifs, count);
}

/* What every process would say alike, the job's first one says at level 1. */
static int say_level(void)
{
    return mca_coll_async_first_process() ? 1 : 2;
}

/* Appends to the verbose line's description of the interfaces. */
static void describe(const char *format, ...) __opal_attribute_format__(__printf__, 1, 2);
static void describe(const char *format, ...)
{
    size_t used = strlen(network.interfaces);
    va_list args;

    va_start(args, format);
    vsnprintf(network.interfaces + used, sizeof(network.interfaces) - used, format, args);
    va_end(args);
}

/* A connection a transport refused; it says how many went unsaid. The
 * progress thread meets most of them: said later, by an application thread. */
static void say_refused(void *context, const char *line)
{
    (void) context;
    mca_coll_async_say_later(1, "coll:async: %s", line);
}

_Static_assert(COLL_ASYNC_MAILBOX_ADDRESS_MAX <= COLL_ASYNC_CARD_BLOB_MAX
                   && COLL_ASYNC_TCP_ADDRESS_MAX <= COLL_ASYNC_CARD_BLOB_MAX
                   && COLL_ASYNC_VERBS_ADDRESS_MAX <= COLL_ASYNC_CARD_BLOB_MAX,
               "every transport's address fits a card's blob");

/* Puts t's address on this process's card at which: 0, or -EIO. */
static int publish_address(struct coll_async_transport *t, enum coll_async_card_blob which)
{
    unsigned char blob[COLL_ASYNC_CARD_BLOB_MAX];
    int length = t->ops->address(t, blob, sizeof(blob));

    return length < 0 || OMPI_SUCCESS != mca_coll_async_card_set_blob(which, blob, (size_t) length)
               ? -EIO
               : 0;
}

/* This node's token for the mailbox: a digest of its name, which names the
 * virtual node too, so that pretend nodes still meet over TCP. */
static uint64_t node_token(void)
{
    static const struct coll_async_key anyone; /* a digest, not a secret */
    char name[COLL_ASYNC_NODE_NAME_MAX];

    mca_coll_async_node_name(name, sizeof(name));
    return coll_async_mac(&anyone, name, strlen(name));
}

/* The shared-memory transport to the peers of this node, with its address blob
 * in the modex; NULL when it cannot open (said at verbose level 1: the peers
 * of this node are then reached as the others are). With more ranks than CPUs
 * its large transfers are pulled with CMA whatever coll_async_shm_cma says: a
 * staged transfer advances only while both processes have a CPU, and the 16 MiB
 * alltoall at 4 ranks on 2 cores over 2 virtual nodes had calls of several
 * times its median that way (docs/performance.md). */
static struct coll_async_transport *open_mailbox(const struct coll_async_config *settings)
{
    bool oversubscribed = mca_coll_async_node_oversubscribed();
    struct coll_async_mailbox_config config = {.self = network.self,
                                               .nprocs = network.nprocs,
                                               .key = mca_coll_async_card_mine()->key,
                                               .node = node_token(),
                                               .try_cma = settings->channel.cma || oversubscribed};
    struct coll_async_transport *transport = NULL;
    int rc;

    if (oversubscribed && !settings->channel.cma) {
        opal_output_verbose(2, mca_coll_async_output,
                            "coll:async: more ranks than CPUs here: the node's mailbox pulls "
                            "large transfers with CMA");
    }

    rc = coll_async_mailbox_create(&config, &transport);
    if (0 == rc) {
        rc = publish_address(transport, COLL_ASYNC_CARD_SHM);
    }
    if (0 != rc) {
        opal_output_verbose(say_level(), mca_coll_async_output,
                            "coll:async: no shared-memory mailbox (%s): the peers of this "
                            "node are reached as the others are", strerror(-rc));
        if (NULL != transport) {
            transport->ops->destroy(transport);
        }
        return NULL;
    }
    return transport;
}

/* TCP could not open: a message where the job spans nodes, which then
 * delegate; in a job on one node, only processes of other jobs miss it (their
 * intercommunicators are handed below): said at verbose level 1. */
static void no_tcp(const struct coll_async_config *config, const char *why)
{
    if (job_spans_nodes(config)) {
        mca_coll_async_show_help(mca_coll_async_first_process(), "no network", why);
    } else {
        opal_output_verbose(say_level(), mca_coll_async_output,
                            "coll:async: no TCP (%s): processes of other jobs are not reached",
                            why);
    }
}

/* The TCP transport, with its address blob in the modex; NULL when it cannot
 * open (a message says why). */
static struct coll_async_transport *open_tcp(const struct coll_async_tcp_if *ifs, int count,
                                             const struct coll_async_config *settings)
{
    struct coll_async_tcp_config config = {.ifs = ifs,
                                           .nifs = count,
                                           .self = network.self,
                                           .nprocs = network.ids,
                                           .key = mca_coll_async_card_mine()->key,
                                           .max_links = settings->tcp.links,
                                           .connect_timeout_ms =
                                               settings->tcp.connect_timeout_s * 1000,
                                           .staging_limit = settings->tcp.staging_limit,
                                           .rendezvous_bytes = settings->tcp.rendezvous_bytes,
                                           .chunk_size = settings->tcp.chunk_bytes,
                                           .on_refused = say_refused,
                                           .names = {.name_of = name_of_id,
                                                     .id_of = id_of_name}};
    struct coll_async_transport *transport = NULL;
    struct coll_async_tcp *tcp = NULL;
    int rc;

    rc = coll_async_tcp_create(&tcp, &config);
    if (0 == rc) {
        transport = coll_async_tcp_transport(tcp);
        rc = publish_address(transport, COLL_ASYNC_CARD_TCP);
    }
    if (0 != rc) {
        no_tcp(settings, strerror(-rc));
        if (NULL != transport) {
            transport->ops->destroy(transport);
        }
        return NULL;
    }
    describe("TCP over ");
    for (int i = 0; i < count; ++i) {
        char address[INET_ADDRSTRLEN];

        inet_ntop(AF_INET, &ifs[i].addr, address, sizeof(address));
        describe("%s%s %s/%u", 0 == i ? "" : ", ", ifs[i].name, address, ifs[i].prefix);
    }
    return transport;
}

static void release_memory(void *buffer, size_t length, void *cbdata, bool from_alloc)
{
    struct coll_async_net *net = network.net;

    (void) cbdata;
    (void) from_alloc;
    if (NULL != net) {
        coll_async_net_release(net, buffer, length);
    }
}

/* Cached registrations must hear of freed memory: a buffer freed and allocated
 * again at the same address is other pages, which an old registration would
 * still point the NIC at. Open MPI's memory framework (its patcher hooks free
 * and munmap) opens only for the components that ask. False when it cannot
 * tell: then nothing is cached. */
static bool watch_freed_memory(void)
{
    network.memory_hooks = OPAL_SUCCESS == mca_base_framework_open(&opal_memory_base_framework, 0);
    network.release_hook = network.memory_hooks
                           && (opal_mem_hooks_support_level() & OPAL_MEMORY_FREE_SUPPORT)
                           && OPAL_SUCCESS == opal_mem_hooks_register_release(release_memory,
                                                                              NULL);
    if (!network.release_hook) {
        opal_output_verbose(say_level(), mca_coll_async_output,
                            "coll:async: no memory release hooks: verbs registers each "
                            "transfer's buffers anew");
    } else {
        /* See coll_async_verbs.c: an sbrk override (UCX's, in every process of
         * Debian's Open MPI 5) trims the heap without calling brk, where the hooks are. */
        opal_output_verbose(say_level(), mca_coll_async_output,
                            "coll:async: verbs caches registrations, but of the heap below "
                            "the program break only while a transfer holds them (its trims "
                            "can bypass the memory hooks)");
    }
    return network.release_hook;
}

static void unwatch_freed_memory(void)
{
    if (network.release_hook) {
        opal_mem_hooks_unregister_release(release_memory);
        network.release_hook = false;
    }
    if (network.memory_hooks) {
        (void) mca_base_framework_close(&opal_memory_base_framework);
        network.memory_hooks = false;
    }
}

/* The verbs transport, with its address blob in the modex; NULL when this
 * machine has no usable port (said at verbose level 1) or it cannot open (a
 * message says why). */
static struct coll_async_transport *open_verbs(const struct coll_async_config *settings)
{
    const char *include = settings->verbs.include, *exclude = settings->verbs.exclude;
    struct coll_async_verbs_config config = {.include = include,
                                             .exclude = exclude,
                                             .self = network.self,
                                             .nprocs = network.nprocs,
                                             .key = mca_coll_async_card_mine()->key,
                                             .max_ports = settings->verbs.ports,
                                             .connect_timeout_ms =
                                                 settings->tcp.connect_timeout_s * 1000,
                                             .on_refused = say_refused};
    struct coll_async_verbs_port_info ports[COLL_ASYNC_VERBS_MAX_PORTS];
    struct coll_async_transport *transport = NULL;
    struct coll_async_verbs *verbs = NULL;
    char why[256] = "";
    int count, rc;

    if (0 == strcmp(exclude, "all")) {
        opal_output_verbose(say_level(), mca_coll_async_output,
                            "coll:async: verbs off (coll_async_verbs_if_exclude)");
        return NULL;
    }
    count = coll_async_verbs_discover(include, exclude, ports,
                                      COLL_ASYNC_VERBS_MAX_PORTS, why, sizeof(why));
    if (-ENODEV == count) {
        opal_output_verbose(say_level(), mca_coll_async_output, "coll:async: verbs off: %s; TCP between nodes",
                            why);
        return NULL;
    }
    if (count < 0) {
        mca_coll_async_show_help(mca_coll_async_first_process(), "bad value",
                                 '\0' != include[0] ? "verbs_if_include" : "verbs_if_exclude",
                                 '\0' != include[0] ? include : exclude,
                                 why);
        return NULL;
    }
    if (0 == count) {
        opal_output_verbose(say_level(), mca_coll_async_output,
                            "coll:async: verbs off: no active RDMA port%s; TCP between nodes",
                            '\0' != include[0] || '\0' != exclude[0]
                                ? " left by coll_async_verbs_if_include/exclude"
                                : " on this machine");
        return NULL;
    }
    config.uncached = !watch_freed_memory();
    rc = coll_async_verbs_create(&verbs, &config, why, sizeof(why));
    if (0 == rc) {
        transport = coll_async_verbs_transport(verbs);
        rc = publish_address(transport, COLL_ASYNC_CARD_VERBS);
        if (0 != rc) {
            snprintf(why, sizeof(why), "its address could not be published");
        }
    }
    if (0 != rc) {
        mca_coll_async_show_help(mca_coll_async_first_process(), "verbs failed", why);
        if (NULL != transport) {
            transport->ops->destroy(transport);
        }
        unwatch_freed_memory();
        return NULL;
    }
    count = coll_async_verbs_ports(verbs, ports, COLL_ASYNC_VERBS_MAX_PORTS);
    describe("verbs over ");
    for (int i = 0; i < count; ++i) {
        describe("%s%s:%d", 0 == i ? "" : ", ", ports[i].device, ports[i].port);
    }
    describe("; ");
    return transport;
}

/* Hands t to the mapper's list, its address riding the cards at blob. */
static void offer(struct coll_async_transport **transports, struct coll_async_transport *t,
                  enum coll_async_card_blob blob)
{
    if (NULL != t) {
        network.card_blob[network.ntransports] = blob;
        transports[network.ntransports++] = t;
    }
}

int mca_coll_async_network_open(const struct coll_async_config *config)
{
    struct coll_async_tcp_if ifs[COLL_ASYNC_TCP_MAX_IFS];
    struct coll_async_engine_watch watch = {.progress = progress};
    struct coll_async_transport *transports[COLL_ASYNC_NET_MAX_TRANSPORTS], *verbs;
    int count, rc;

    count = choose_interfaces(ifs, config);
    if (OMPI_ERR_BAD_PARAM == count) {
        return count;
    }
    network.self = OMPI_PROC_MY_NAME->vpid;
    network.nprocs = ompi_process_info.num_procs;
    network.ids = network.nprocs + FOREIGN_MAX;
    network.nforeign = 0;
    network.peers = calloc(network.ids, 1);
    network.foreign = calloc(FOREIGN_MAX, sizeof(*network.foreign));
    if (NULL == network.peers || NULL == network.foreign) {
        mca_coll_async_network_close();
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    network.interfaces[0] = '\0';
    network.ntransports = 0;
    /* Shared memory first, for the peers on this node; then verbs, which the
     * mapper prefers wherever it reaches a peer; then TCP. */
    network.mailbox = open_mailbox(config);
    offer(transports, network.mailbox, COLL_ASYNC_CARD_SHM);
    if (job_spans_nodes(config)) {
        verbs = open_verbs(config);
        network.peers[network.self] = NULL != verbs ? PEER_HAS_VERBS : 0;
        offer(transports, verbs, COLL_ASYNC_CARD_VERBS);
    }
    if (count <= 0) {
        no_tcp(config, count < 0 ? strerror(-count) : "no usable IPv4 interface");
    } else {
        offer(transports, open_tcp(ifs, count, config), COLL_ASYNC_CARD_TCP);
    }
    if (0 == network.ntransports) {
        mca_coll_async_network_close();
        return OMPI_SUCCESS; /* communicators across nodes delegate */
    }
    rc = coll_async_net_create(&network.net, network.ids, transports,
                               network.ntransports); /* owns them */
    if (0 == rc) {
        watch.fd = coll_async_net_fd(network.net);
        watch.context = network.net;
        rc = coll_async_engine_watch(&watch);
    }
    if (0 != rc) {
        mca_coll_async_show_help(mca_coll_async_first_process(), "no network", strerror(-rc));
        mca_coll_async_network_close();
    }
    return OMPI_SUCCESS;
}

void mca_coll_async_network_close(void)
{
    unwatch_freed_memory(); /* first: the hook reads network.net */
    coll_async_net_destroy(network.net);
    network.net = NULL;
    network.mailbox = NULL;
    free(network.peers);
    network.peers = NULL;
    free(network.foreign);
    network.foreign = NULL;
}

struct coll_async_net *mca_coll_async_network(void)
{
    return network.net;
}

const char *mca_coll_async_network_interfaces(void)
{
    return network.interfaces;
}

uint64_t mca_coll_async_network_mailbox_cma_sends(void)
{
    struct coll_async_mailbox_stats stats = {0};

    if (NULL != network.net && NULL != network.mailbox) {
        coll_async_engine_hold(); /* the driver's thread updates them */
        coll_async_mailbox_stats(network.mailbox, &stats);
        coll_async_engine_release();
    }
    return stats.cma_sends;
}

/* Hands proc's address blobs, from its card, to the mapper, which picks its
 * transport: for another job's process, TCP's only. The caller holds the
 * driver's exclusion. */
static int add_peer(struct ompi_proc_t *proc, uint32_t id)
{
    const struct coll_async_card *card = mca_coll_async_card_of(proc);
    struct coll_async_net_blob blobs[COLL_ASYNC_NET_MAX_TRANSPORTS];
    bool foreign = id >= network.nprocs;
    int rc;

    if (network.peers[id] & PEER_ADDED) {
        return OMPI_SUCCESS;
    }
    if (NULL == card) {
        return OMPI_ERR_NOT_FOUND;
    }
    for (int i = 0; i < network.ntransports; ++i) {
        bool offered = !foreign || COLL_ASYNC_CARD_TCP == network.card_blob[i];

        blobs[i].data = offered ? card->blob[network.card_blob[i]] : NULL;
        blobs[i].length = offered ? card->blob_length[network.card_blob[i]] : 0;
    }
    rc = coll_async_net_add_peer(network.net, id, &card->key, blobs);
    if (0 != rc && -EEXIST != rc) {
        return OMPI_ERROR;
    }
    network.peers[id] = PEER_ADDED | (!foreign && 0 != card->blob_length[COLL_ASYNC_CARD_VERBS]
                                          ? PEER_HAS_VERBS : 0);
    return OMPI_SUCCESS;
}

bool mca_coll_async_network_tcp_with(struct ompi_proc_t *proc)
{
    const struct coll_async_card *card;
    bool open = false;

    for (int i = 0; NULL != network.net && i < network.ntransports; ++i) {
        open = open || COLL_ASYNC_CARD_TCP == network.card_blob[i];
    }
    card = open ? mca_coll_async_card_of(proc) : NULL;
    return NULL != card && 0 != card->blob_length[COLL_ASYNC_CARD_TCP];
}

bool mca_coll_async_network_has_verbs(uint32_t id)
{
    return NULL != network.peers && id < network.ids && (network.peers[id] & PEER_HAS_VERBS);
}

int mca_coll_async_network_add(struct ompi_proc_t *const *procs, int count, uint32_t *ids)
{
    int rc = OMPI_SUCCESS;

    if (NULL == network.net) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    coll_async_engine_hold();
    for (int i = 0; i < count && OMPI_SUCCESS == rc; ++i) {
        struct ompi_proc_t *proc = procs[i];

        if (0 != id_of_name(NULL, name_of_proc(proc), &ids[i])) {
            rc = OMPI_ERR_OUT_OF_RESOURCE; /* past FOREIGN_MAX processes of other jobs */
        } else {
            rc = proc == ompi_proc_local() ? OMPI_SUCCESS : add_peer(proc, ids[i]);
        }
    }
    coll_async_engine_release();
    return rc;
}
