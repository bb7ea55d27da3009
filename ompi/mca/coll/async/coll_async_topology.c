/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the topology layer (see coll_async_topology.h). Reads NUMA domains
 * and NICs from hwloc 2.x, where NUMA nodes are memory children and an OS device
 * hangs below its PCI device, local to its nearest non-I/O ancestor; and groups
 * a communicator's ranks into node -> NUMA domain -> rank with its leaders.
 *
 * No Open MPI calls and no global state: the unit tests drive it with XML files.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_async_topology.h"

#define NUMA_NONE COLL_ASYNC_TOPOLOGY_NUMA_NONE
#define NUMA_SEVERAL COLL_ASYNC_TOPOLOGY_NUMA_SEVERAL

/* The domain found so far after meeting domain i: the first, or several. */
static int one_more_domain(int found, int i)
{
    return NUMA_NONE == found ? i : NUMA_SEVERAL;
}

int coll_async_topology_load(const char *xml_path, hwloc_topology_t *out)
{
    hwloc_topology_t topology;
    int rc;

    if (0 != hwloc_topology_init(&topology)) {
        return -ENOMEM;
    }
    errno = 0;
    /* Important I/O only: NICs, GPUs, disks and the PCI path to them, not every bridge. */
    if ((NULL != xml_path && 0 != hwloc_topology_set_xml(topology, xml_path))
        || 0 != hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_IMPORTANT)
        || 0 != hwloc_topology_load(topology)) {
        rc = 0 != errno ? -errno : -EINVAL;
        goto fail;
    }
    *out = topology;
    return 0;

fail:
    hwloc_topology_destroy(topology);
    return rc;
}

/* NUMA domains */

static int read_numa(hwloc_topology_t topology, struct coll_async_topology *topo)
{
    int count = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);

    if (count <= 0) {
        return -EINVAL; /* hwloc 2 always shows at least one */
    }
    topo->numa = calloc(count, sizeof(*topo->numa));
    if (NULL == topo->numa) {
        return -ENOMEM;
    }
    for (int i = 0; i < count; ++i) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, i);

        topo->numa[i].os_index = obj->os_index;
        topo->numa[i].cpuset = hwloc_bitmap_dup(obj->cpuset);
        if (NULL == topo->numa[i].cpuset) {
            return -ENOMEM;
        }
        topo->numa_count = i + 1; /* what free() releases */
    }
    return 0;
}

int coll_async_topology_numa_of(const struct coll_async_topology *topo,
                                hwloc_const_cpuset_t binding)
{
    int found = NUMA_NONE;

    for (int i = 0; i < topo->numa_count; ++i) {
        if (hwloc_bitmap_intersects(topo->numa[i].cpuset, binding)) {
            found = one_more_domain(found, i);
        }
    }
    return found;
}

int coll_async_topology_numa_of_list(const struct coll_async_topology *topo, const char *list,
                                     int *numa)
{
    hwloc_bitmap_t binding = hwloc_bitmap_alloc();
    int rc = 0;

    if (NULL == binding) {
        return -ENOMEM;
    }
    if (0 != hwloc_bitmap_list_sscanf(binding, list)) {
        rc = -EINVAL;
        goto out;
    }
    *numa = coll_async_topology_numa_of(topo, binding);
out:
    hwloc_bitmap_free(binding);
    return rc;
}

/* NICs */

static bool is_nic(hwloc_obj_t dev)
{
    return HWLOC_OBJ_OSDEV_NETWORK == dev->attr->osdev.type
           || HWLOC_OBJ_OSDEV_OPENFABRICS == dev->attr->osdev.type;
}

/* The PCI function a device belongs to, which makes one NIC of its OS devices. */
static hwloc_obj_t pci_of(hwloc_obj_t dev)
{
    return NULL != dev->parent && HWLOC_OBJ_PCI_DEVICE == dev->parent->type ? dev->parent : NULL;
}

/* The domains of the nearest object that is not I/O: they see the NIC at the same cost. */
static int nic_numa(const struct coll_async_topology *topo, hwloc_topology_t topology,
                    hwloc_obj_t dev)
{
    hwloc_obj_t near = hwloc_get_non_io_ancestor_obj(topology, dev);
    int found = NUMA_NONE;

    if (NULL == near || NULL == near->nodeset) {
        return NUMA_NONE;
    }
    for (int i = 0; i < topo->numa_count; ++i) {
        if (hwloc_bitmap_isset(near->nodeset, topo->numa[i].os_index)) {
            found = one_more_domain(found, i);
        }
    }
    return found;
}

/* The first RDMA device names the NIC; the first network interface is its netdev. */
static void add_device(struct coll_async_topology_nic *nic, hwloc_obj_t dev)
{
    const char *name = NULL != dev->name ? dev->name : "?";

    if (HWLOC_OBJ_OSDEV_OPENFABRICS == dev->attr->osdev.type) {
        if (COLL_ASYNC_TOPOLOGY_NIC_OPENFABRICS != nic->kind) {
            nic->kind = COLL_ASYNC_TOPOLOGY_NIC_OPENFABRICS;
            snprintf(nic->name, sizeof(nic->name), "%s", name);
        }
        return;
    }
    if ('\0' != nic->netdev[0]) {
        return;
    }
    snprintf(nic->netdev, sizeof(nic->netdev), "%s", name);
    if (COLL_ASYNC_TOPOLOGY_NIC_NETWORK == nic->kind) {
        snprintf(nic->name, sizeof(nic->name), "%s", name);
    }
}

static int count_nic_devices(hwloc_topology_t topology)
{
    hwloc_obj_t dev = NULL;
    int count = 0;

    while (NULL != (dev = hwloc_get_next_osdev(topology, dev))) {
        count += is_nic(dev);
    }
    return count;
}

static int read_nics(hwloc_topology_t topology, struct coll_async_topology *topo)
{
    enum hwloc_type_filter_e filter = HWLOC_TYPE_FILTER_KEEP_NONE;
    int count = count_nic_devices(topology);
    hwloc_obj_t *pcis, dev = NULL;

    hwloc_topology_get_type_filter(topology, HWLOC_OBJ_OS_DEVICE, &filter);
    topo->io_known = HWLOC_TYPE_FILTER_KEEP_NONE != filter;
    if (0 == count) {
        return 0;
    }
    topo->nics = calloc(count, sizeof(*topo->nics));
    pcis = calloc(count, sizeof(*pcis)); /* parallel to nics: their PCI function */
    if (NULL == topo->nics || NULL == pcis) {
        free(pcis);
        return -ENOMEM;
    }
    while (NULL != (dev = hwloc_get_next_osdev(topology, dev))) {
        hwloc_obj_t pci = pci_of(dev);
        int i = 0;

        if (!is_nic(dev)) {
            continue;
        }
        while (i < topo->nic_count && (NULL == pci || pcis[i] != pci)) {
            ++i;
        }
        if (i == topo->nic_count) {
            pcis[topo->nic_count++] = pci;
            topo->nics[i].numa = nic_numa(topo, topology, dev);
        }
        add_device(&topo->nics[i], dev);
    }
    free(pcis);
    return 0;
}

int coll_async_topology_build(hwloc_topology_t topology, struct coll_async_topology **out)
{
    struct coll_async_topology *topo = calloc(1, sizeof(*topo));
    int rc;

    if (NULL == topo) {
        return -ENOMEM;
    }
    rc = read_numa(topology, topo);
    if (0 != rc) {
        goto fail;
    }
    rc = read_nics(topology, topo);
    if (0 != rc) {
        goto fail;
    }
    *out = topo;
    return 0;

fail:
    coll_async_topology_free(topo);
    return rc;
}

void coll_async_topology_free(struct coll_async_topology *topo)
{
    if (NULL == topo) {
        return;
    }
    for (int i = 0; i < topo->numa_count; ++i) {
        hwloc_bitmap_free(topo->numa[i].cpuset);
    }
    free(topo->numa);
    free(topo->nics);
    free(topo);
}

/* Hierarchy */

static bool valid_numa(int numa, int numa_count)
{
    return (numa >= 0 && numa < numa_count) || NUMA_NONE == numa || NUMA_SEVERAL == numa;
}

static bool valid_input(const struct coll_async_topology_place *places, int nranks,
                        const struct coll_async_topology_node_desc *nodes, int node_count)
{
    if (nranks <= 0 || node_count <= 0) {
        return false;
    }
    for (int n = 0; n < node_count; ++n) {
        if (nodes[n].numa_count < 1 || nodes[n].nic_count < 0
            || (nodes[n].nic_count > 0 && NULL == nodes[n].nic_numa)) {
            return false;
        }
        for (int i = 0; i < nodes[n].nic_count; ++i) {
            if (!valid_numa(nodes[n].nic_numa[i], nodes[n].numa_count)) {
                return false;
            }
        }
    }
    for (int r = 0; r < nranks; ++r) {
        int n = places[r].node;

        if (n < 0 || n >= node_count || !valid_numa(places[r].numa, nodes[n].numa_count)) {
            return false;
        }
    }
    return true;
}

/* The group of a rank inside its node: its domain, or the last one for no single domain. */
static int group_of(const struct coll_async_topology_place *place, int numa_count)
{
    return place->numa >= 0 ? place->numa : numa_count;
}

static int alloc_node(struct coll_async_topology_node *node,
                      const struct coll_async_topology_node_desc *desc)
{
    node->numa_count = desc->numa_count;
    node->nic_count = desc->nic_count;
    node->numa_first = calloc(desc->numa_count + 2, sizeof(int));
    node->nic_leaders = calloc(desc->nic_count > 0 ? desc->nic_count : 1, sizeof(int));
    return NULL == node->numa_first || NULL == node->nic_leaders ? -ENOMEM : 0;
}

/*
 * A counting sort of the ranks by group, stable so that each group stays
 * ascending: numa_first[g] counts group g, the prefix sums turn it into group g's
 * end, and placing the ranks from the highest down moves it back to group g's
 * start. The highest rank placed last is the lowest: the leader.
 */
static int group_ranks(struct coll_async_topology_hierarchy *hier,
                       const struct coll_async_topology_place *places, int nranks)
{
    for (int r = 0; r < nranks; ++r) {
        struct coll_async_topology_node *node = &hier->nodes[places[r].node];

        node->rank_count++;
        node->numa_first[group_of(&places[r], node->numa_count)]++;
    }
    for (int n = 0; n < hier->node_count; ++n) {
        struct coll_async_topology_node *node = &hier->nodes[n];

        if (0 == node->rank_count) {
            return -EINVAL;
        }
        node->ranks = malloc(node->rank_count * sizeof(int));
        if (NULL == node->ranks) {
            return -ENOMEM;
        }
        for (int g = 1; g <= node->numa_count; ++g) {
            node->numa_first[g] += node->numa_first[g - 1];
        }
        node->numa_first[node->numa_count + 1] = node->rank_count;
    }
    for (int r = nranks - 1; r >= 0; --r) {
        struct coll_async_topology_node *node = &hier->nodes[places[r].node];

        node->ranks[--node->numa_first[group_of(&places[r], node->numa_count)]] = r;
        node->leader = r;
    }
    return 0;
}

static bool leads_a_nic(const struct coll_async_topology_node *node, int rank)
{
    for (int i = 0; i < node->nic_count; ++i) {
        if (node->nic_leaders[i] == rank) {
            return true;
        }
    }
    return false;
}

/* Lower is better: a rank of the NIC's domain, then one of no single domain (or
 * any, for a NIC of no single domain), then another domain's; a rank already
 * leading a NIC only after all of those. */
static int leader_cost(const struct coll_async_topology_node *node, int nic_numa, int rank,
                       int rank_numa)
{
    int distance = 2;

    if (nic_numa < 0 || rank_numa < 0) {
        distance = 1;
    } else if (nic_numa == rank_numa) {
        distance = 0;
    }
    return distance + (leads_a_nic(node, rank) ? 3 : 0);
}

/* The best rank of the node to lead a NIC of domain nic_numa, and its cost. */
static int best_leader(const struct coll_async_topology_node *node,
                       const struct coll_async_topology_place *places, int nic_numa, int *cost)
{
    int best = -1;

    for (int i = 0; i < node->rank_count; ++i) {
        int rank = node->ranks[i];
        int c = leader_cost(node, nic_numa, rank, places[rank].numa);

        if (best < 0 || c < *cost || (c == *cost && rank < best)) {
            best = rank;
            *cost = c;
        }
    }
    return best;
}

/*
 * First every NIC that has a rank of its own domain not leading yet takes one,
 * so that a NIC of no single domain, or one whose domain has no rank left,
 * cannot take the rank a later NIC sits next to; then the others take the best
 * that remains.
 */
static void pick_nic_leaders(struct coll_async_topology_node *node,
                             const struct coll_async_topology_place *places, const int *nic_numa)
{
    int cost;

    for (int i = 0; i < node->nic_count; ++i) {
        node->nic_leaders[i] = -1;
    }
    for (int i = 0; i < node->nic_count; ++i) {
        int rank = best_leader(node, places, nic_numa[i], &cost);

        if (0 == cost) {
            node->nic_leaders[i] = rank;
        }
    }
    for (int i = 0; i < node->nic_count; ++i) {
        if (node->nic_leaders[i] < 0) {
            node->nic_leaders[i] = best_leader(node, places, nic_numa[i], &cost);
        }
    }
}

int coll_async_topology_hierarchy_build(const struct coll_async_topology_place *places, int nranks,
                                        const struct coll_async_topology_node_desc *nodes,
                                        int node_count,
                                        struct coll_async_topology_hierarchy **out)
{
    struct coll_async_topology_hierarchy *hier;
    int rc = -ENOMEM;

    if (!valid_input(places, nranks, nodes, node_count)) {
        return -EINVAL;
    }
    hier = calloc(1, sizeof(*hier));
    if (NULL == hier) {
        return -ENOMEM;
    }
    hier->nodes = calloc(node_count, sizeof(*hier->nodes));
    if (NULL == hier->nodes) {
        goto fail;
    }
    hier->node_count = node_count;
    for (int n = 0; n < node_count; ++n) {
        rc = alloc_node(&hier->nodes[n], &nodes[n]);
        if (0 != rc) {
            goto fail;
        }
    }
    rc = group_ranks(hier, places, nranks);
    if (0 != rc) {
        goto fail;
    }
    for (int n = 0; n < node_count; ++n) {
        pick_nic_leaders(&hier->nodes[n], places, nodes[n].nic_numa);
    }
    *out = hier;
    return 0;

fail:
    coll_async_topology_hierarchy_free(hier);
    return rc;
}

void coll_async_topology_hierarchy_free(struct coll_async_topology_hierarchy *hier)
{
    if (NULL == hier) {
        return;
    }
    for (int n = 0; n < hier->node_count; ++n) {
        free(hier->nodes[n].ranks);
        free(hier->nodes[n].numa_first);
        free(hier->nodes[n].nic_leaders);
    }
    free(hier->nodes);
    free(hier);
}

/* Summary */

struct line {
    char *buf;
    size_t len;
    size_t used; /* what the whole line needs so far, maybe more than len */
};

static void put(struct line *line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct line *line, const char *fmt, ...)
{
    size_t room = line->used < line->len ? line->len - line->used : 0;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(0 != room ? line->buf + line->used : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0) {
        line->used += n;
    }
}

static void put_nic(struct line *line, const struct coll_async_topology *topo,
                    const struct coll_async_topology_nic *nic)
{
    put(line, " %s", nic->name);
    if (COLL_ASYNC_TOPOLOGY_NIC_OPENFABRICS == nic->kind && '\0' != nic->netdev[0]) {
        put(line, "/%s", nic->netdev);
    }
    if (nic->numa >= 0) {
        put(line, "@numa%u", topo->numa[nic->numa].os_index);
    } else {
        put(line, "@%s", NUMA_SEVERAL == nic->numa ? "several" : "none");
    }
}

int coll_async_topology_summary(const struct coll_async_topology *topo, int node_count, char *buf,
                                size_t len)
{
    struct line line = {.buf = buf, .len = len, .used = 0};

    if (0 != len) {
        buf[0] = '\0';
    }
    put(&line, "%d node%s, %d NUMA/node", node_count, 1 == node_count ? "" : "s",
        topo->numa_count);
    if (!topo->io_known) {
        put(&line, ", NICs unknown");
        return (int) line.used;
    }
    put(&line, ", %d NIC%s/node", topo->nic_count, 1 == topo->nic_count ? "" : "s");
    if (topo->nic_count > 0) {
        put(&line, ":");
    }
    for (int i = 0; i < topo->nic_count; ++i) {
        put_nic(&line, topo, &topo->nics[i]);
    }
    return (int) line.used;
}
