/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the machine as the component sees it. Per node, the NUMA domains
 * and the NICs with their NUMA locality, read from an hwloc topology; per local
 * rank, the NUMA domain its binding lies in; per communicator, the hierarchy
 * node -> NUMA domain -> rank and its leaders, built from plain data.
 *
 * Pure C over hwloc with no Open MPI dependency, so the unit tests exercise it
 * against XML fixtures without MPI. The glue hands it Open MPI's loaded topology
 * or an XML file, and exchanges what other nodes need through the modex.
 */

#ifndef MCA_COLL_ASYNC_TOPOLOGY_H
#define MCA_COLL_ASYNC_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>

#include <hwloc.h>

/* A NUMA index that names no single domain of the node. */
#define COLL_ASYNC_TOPOLOGY_NUMA_NONE (-1)    /* in none: an empty or foreign binding */
#define COLL_ASYNC_TOPOLOGY_NUMA_SEVERAL (-2) /* several: unbound, or a NIC as near to many */

#define COLL_ASYNC_TOPOLOGY_NAME_MAX 64

struct coll_async_topology_numa {
    unsigned os_index;     /* the kernel's node number (numactl's) */
    hwloc_bitmap_t cpuset; /* owned */
};

enum coll_async_topology_nic_kind {
    COLL_ASYNC_TOPOLOGY_NIC_NETWORK,    /* a network interface only (Ethernet, IPoIB) */
    COLL_ASYNC_TOPOLOGY_NIC_OPENFABRICS /* an RDMA device (verbs), with its netdev if any */
};

/*
 * One NIC: the network and OpenFabrics OS devices of one PCI function count as
 * one NIC (a ConnectX port is both mlx5_0 and its netdev), each OS device with
 * no PCI parent as a NIC of its own.
 */
struct coll_async_topology_nic {
    char name[COLL_ASYNC_TOPOLOGY_NAME_MAX];   /* the OpenFabrics name if any, else the netdev */
    char netdev[COLL_ASYNC_TOPOLOGY_NAME_MAX]; /* the network interface, "" when none */
    enum coll_async_topology_nic_kind kind;
    int numa; /* index in the node's numa[] near it, or NUMA_SEVERAL / NUMA_NONE */
};

/* One node, as hwloc shows it. */
struct coll_async_topology {
    int numa_count; /* >= 1 */
    struct coll_async_topology_numa *numa; /* in hwloc's logical order */
    int nic_count;
    struct coll_async_topology_nic *nics;  /* in hwloc's order */
    bool io_known; /* false: the topology was loaded without OS devices, NICs unknown */
};

/*
 * Loads an hwloc topology with its network and OpenFabrics OS devices: from the
 * XML file at xml_path, or from this machine when xml_path is NULL. Returns 0 or
 * a negative errno; the caller destroys *out with hwloc_topology_destroy().
 */
int coll_async_topology_load(const char *xml_path, hwloc_topology_t *out);

/*
 * Reads the NUMA domains and NICs of a loaded topology (Open MPI's, or one from
 * coll_async_topology_load) into *out, which owns no reference to it. Returns 0
 * or a negative errno; free *out with coll_async_topology_free().
 */
int coll_async_topology_build(hwloc_topology_t topology, struct coll_async_topology **out);
void coll_async_topology_free(struct coll_async_topology *topo);

/*
 * The index in topo->numa[] of the one domain whose CPUs the binding touches;
 * NUMA_SEVERAL when it touches more than one (an unbound rank on a multi-socket
 * node), NUMA_NONE when it touches none. The _list form takes hwloc's list
 * syntax ("0-3,8"), as Open MPI's modex carries bindings, and returns -EINVAL
 * for text it cannot parse, else 0 with the index in *numa.
 */
int coll_async_topology_numa_of(const struct coll_async_topology *topo,
                                hwloc_const_cpuset_t binding);
int coll_async_topology_numa_of_list(const struct coll_async_topology *topo, const char *list,
                                     int *numa);

/* Hierarchy of a communicator */

/* What the glue knows of each rank of the communicator, indexed by rank. */
struct coll_async_topology_place {
    int node; /* index in the node descriptions */
    int numa; /* its domain on that node, or NUMA_SEVERAL / NUMA_NONE */
};

/* What the glue knows of each node of the communicator. */
struct coll_async_topology_node_desc {
    int numa_count;
    int nic_count;
    const int *nic_numa; /* nic_count entries: each NIC's domain, or NUMA_SEVERAL / NUMA_NONE */
};

/*
 * One node of the hierarchy. ranks[] holds its ranks grouped by domain, each
 * group ascending: domain d's are ranks[numa_first[d] .. numa_first[d + 1]), and
 * the last group, d == numa_count, holds the ranks of no single domain.
 */
struct coll_async_topology_node {
    int rank_count;
    int *ranks;
    int numa_count;
    int *numa_first;  /* numa_count + 2 offsets */
    int leader;       /* the lowest rank */
    int nic_count;
    int *nic_leaders; /* per NIC, the rank that drives it */
};

struct coll_async_topology_hierarchy {
    int node_count;
    struct coll_async_topology_node *nodes; /* parallel to the node descriptions */
};

/*
 * Builds the hierarchy of nranks ranks placed on node_count described nodes.
 * Every node must hold at least one rank. A NIC's leader is a rank of its
 * domain, else one of no single domain, else any, preferring ranks that lead no
 * other NIC of the node, then the lowest. Returns 0 or a negative errno (-EINVAL
 * for a placement out of range or an empty node); free *out with
 * coll_async_topology_hierarchy_free().
 */
int coll_async_topology_hierarchy_build(const struct coll_async_topology_place *places, int nranks,
                                        const struct coll_async_topology_node_desc *nodes,
                                        int node_count,
                                        struct coll_async_topology_hierarchy **out);
void coll_async_topology_hierarchy_free(struct coll_async_topology_hierarchy *hier);

/*
 * The one-line summary of the verbose output, this node's domains and NICs
 * standing for every node: "2 nodes, 2 NUMA/node, 4 NICs/node: eth0@numa0
 * mlx5_0/eth2@numa1 ..." (domains by os index). snprintf's contract: returns the
 * length the whole line needs; the line is cut to fit len.
 */
int coll_async_topology_summary(const struct coll_async_topology *topo, int node_count, char *buf,
                                size_t len);

#endif /* MCA_COLL_ASYNC_TOPOLOGY_H */
