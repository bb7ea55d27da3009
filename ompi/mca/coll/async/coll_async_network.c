/*
 * coll/async: this process's endpoint between nodes.
 *
 * One TCP transport per process, opened when the job may span nodes (real or
 * virtual): at component open, which comes before Open MPI's modex, so the
 * address blob rides the modex like a BTL's. The process's place (its node's
 * name and its NUMA domain) rides along, so that a communicator's hierarchy is
 * computed from the modex alone: Open MPI creates communicators inside its
 * progress engine under MPI_THREAD_MULTIPLE, where no message can be awaited. Peers are added on first use, when
 * a communicator that needs them is created; connections open later still, on a
 * collective's first message. The engine's driver polls the transport
 * (coll_async_engine_watch), so every call into it is made under the driver's
 * exclusion: the progress thread's, or an application thread's holding it.
 */

#include "ompi_config.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "ompi/mca/rte/rte.h"
#include "ompi/proc/proc.h"
#include "opal/mca/pmix/pmix.h"
#include "opal/util/output.h"

#include "coll_async.h"
#include "coll_async_network.h"

static struct {
    struct coll_async_tcp *tcp;
    uint32_t nprocs;
    unsigned char *added; /* per world rank: add_peer done */
    char interfaces[256]; /* for the verbose line */
} network;

/* Whether any process of the job may be on another node. */
static bool job_spans_nodes(void)
{
    return mca_coll_async_component.virtual_nodes > 1
           || (uint32_t) ompi_process_info.num_local_peers + 1 < ompi_process_info.num_procs;
}

static int progress(void *tcp)
{
    return coll_async_tcp_progress(tcp);
}

/* The interfaces to listen on; with virtual nodes and no list given, loopback:
 * the pretend nodes share this machine. */
static int choose_interfaces(struct coll_async_tcp_if *ifs)
{
    mca_coll_async_component_t *c = &mca_coll_async_component;
    const char *include = c->tcp_if_include, *exclude = c->tcp_if_exclude;
    struct coll_async_tcp_if_filter filter;
    char why[256];
    int count;

    if (c->virtual_nodes > 1 && '\0' == include[0] && '\0' == exclude[0]) {
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

#define PLACE_KEY "coll_async_place"

/* What the modex carries of a process's place. */
struct place {
    int32_t numa; /* network byte order */
    char node[COLL_ASYNC_NODE_NAME_MAX];
};

static int publish_place(void)
{
    struct place mine = {.numa = (int32_t) htonl((uint32_t) mca_coll_async_node_numa())};
    int rc;

    mca_coll_async_node_name(mine.node, sizeof(mine.node));
    OPAL_MODEX_SEND_STRING(rc, OPAL_PMIX_GLOBAL, PLACE_KEY, &mine, sizeof(mine));
    return rc;
}

int mca_coll_async_network_place(struct ompi_proc_t *proc, char *node, size_t len, int *numa)
{
    struct place *place = NULL;
    size_t size = 0;
    int rc;

    OPAL_MODEX_RECV_STRING(rc, PLACE_KEY, &proc->super.proc_name, (void **) &place, &size);
    if (OPAL_SUCCESS != rc || sizeof(*place) != size) {
        free(place);
        return OMPI_ERR_NOT_FOUND;
    }
    snprintf(node, len, "%.*s", (int) sizeof(place->node), place->node);
    *numa = (int) (int32_t) ntohl((uint32_t) place->numa);
    free(place);
    return OMPI_SUCCESS;
}

/* Publishes the address blob in the modex. */
static int publish(void)
{
    unsigned char blob[COLL_ASYNC_TCP_ADDRESS_MAX];
    int length = coll_async_tcp_address(network.tcp, blob, sizeof(blob));
    int rc;

    if (length < 0) {
        return OMPI_ERROR;
    }
    OPAL_MODEX_SEND(rc, OPAL_PMIX_GLOBAL, &mca_coll_async_component.super.collm_version, blob,
                    (size_t) length);
    return rc;
}

static void describe(const struct coll_async_tcp_if *ifs, int count)
{
    size_t used = 0;

    network.interfaces[0] = '\0';
    for (int i = 0; i < count && used < sizeof(network.interfaces); ++i) {
        char address[INET_ADDRSTRLEN];

        inet_ntop(AF_INET, &ifs[i].addr, address, sizeof(address));
        used += (size_t) snprintf(network.interfaces + used, sizeof(network.interfaces) - used,
                                  "%s%s %s/%u", 0 == i ? "" : ", ", ifs[i].name, address,
                                  ifs[i].prefix);
    }
}

int mca_coll_async_network_open(void)
{
    mca_coll_async_component_t *c = &mca_coll_async_component;
    struct coll_async_tcp_if ifs[COLL_ASYNC_TCP_MAX_IFS];
    struct coll_async_tcp_config config = {.ifs = ifs,
                                           .max_links = c->tcp_links,
                                           .connect_timeout_ms = c->tcp_connect_timeout * 1000};
    struct coll_async_engine_watch watch = {.progress = progress};
    int count, rc;

    if (!job_spans_nodes()) {
        return OMPI_SUCCESS;
    }
    if (OPAL_SUCCESS != publish_place()) {
        return OMPI_SUCCESS; /* no hierarchy can be built: communicators across nodes delegate */
    }
    count = choose_interfaces(ifs);
    if (OMPI_ERR_BAD_PARAM == count) {
        return count;
    }
    if (count <= 0) {
        mca_coll_async_show_help(mca_coll_async_first_process(), "no network",
                                 count < 0 ? strerror(-count) : "no usable IPv4 interface");
        return OMPI_SUCCESS;
    }
    config.nifs = count;
    config.self = OMPI_PROC_MY_NAME->vpid;
    config.nprocs = ompi_process_info.num_procs;
    network.nprocs = config.nprocs;
    network.added = calloc(network.nprocs, 1);
    rc = NULL == network.added ? -ENOMEM : coll_async_tcp_create(&network.tcp, &config);
    if (0 == rc) {
        watch.fd = coll_async_tcp_fd(network.tcp);
        watch.context = network.tcp;
        rc = coll_async_engine_watch(&watch);
    }
    if (0 != rc || OPAL_SUCCESS != publish()) {
        mca_coll_async_show_help(mca_coll_async_first_process(), "no network",
                                 strerror(0 != rc ? -rc : EIO));
        mca_coll_async_network_close();
        return OMPI_SUCCESS;
    }
    describe(ifs, count);
    return OMPI_SUCCESS;
}

void mca_coll_async_network_close(void)
{
    if (NULL != network.tcp) {
        coll_async_tcp_destroy(network.tcp);
        network.tcp = NULL;
    }
    free(network.added);
    network.added = NULL;
}

struct coll_async_tcp *mca_coll_async_network(void)
{
    return network.tcp;
}

const char *mca_coll_async_network_interfaces(void)
{
    return network.interfaces;
}

/* Reads proc's address blob from the modex and hands it to the transport. The
 * caller holds the driver's exclusion. */
static int add_peer(struct ompi_proc_t *proc)
{
    uint32_t id = proc->super.proc_name.vpid;
    size_t length = 0;
    uint8_t *blob = NULL;
    int rc;

    if (network.added[id]) {
        return OMPI_SUCCESS;
    }
    OPAL_MODEX_RECV(rc, &mca_coll_async_component.super.collm_version, &proc->super.proc_name,
                    (void **) &blob, &length);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = coll_async_tcp_add_peer(network.tcp, id, blob, length);
    free(blob);
    if (0 != rc && -EEXIST != rc) {
        return OMPI_ERROR;
    }
    network.added[id] = 1;
    return OMPI_SUCCESS;
}

int mca_coll_async_network_add(struct ompi_proc_t *const *procs, int count, uint32_t *ids)
{
    int rc = OMPI_SUCCESS;

    if (NULL == network.tcp) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    coll_async_engine_hold();
    for (int i = 0; i < count && OMPI_SUCCESS == rc; ++i) {
        struct ompi_proc_t *proc = procs[i];

        if (proc->super.proc_name.jobid != OMPI_PROC_MY_NAME->jobid
            || proc->super.proc_name.vpid >= network.nprocs) {
            rc = OMPI_ERR_NOT_SUPPORTED; /* another job's process: no id here */
        } else {
            ids[i] = proc->super.proc_name.vpid;
            rc = proc == ompi_proc_local() ? OMPI_SUCCESS : add_peer(proc);
        }
    }
    coll_async_engine_release();
    return rc;
}
