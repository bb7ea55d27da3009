/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: which processes share this node.
 *
 * Normally the launcher's locality says it. With coll_async_virtual_nodes = N the
 * job's ranks are split into N pretend nodes of ceil(size / N) consecutive world
 * ranks each, so what runs between nodes can be tested on one machine: shared
 * memory is used only inside a pretend node. A pretend node never spans real
 * ones, and processes of other jobs (spawned, connected) are never on one of this
 * job's pretend nodes.
 *
 * The node's topology (NUMA domains, NICs and their locality) is read once per
 * process, from Open MPI's hwloc topology or from coll_async_topology_xml. With
 * coll_async_virtual_numa = N each node's ranks are split likewise into N pretend
 * NUMA domains of consecutive ranks, the domain each process's card carries.
 */

#define _GNU_SOURCE
#include "ompi_config.h"

#include <sched.h>
#include <string.h>

#include "ompi/communicator/communicator.h"
#include "ompi/proc/proc.h"
#include "opal/mca/hwloc/base/base.h"
#include "opal/util/output.h"

#include "coll_async.h"
#include "coll_async_topology.h"

/* coll_async_virtual_nodes, coll_async_virtual_numa and coll_async_topology_xml,
 * handed at open. */
static int virtual_nodes, virtual_numa;
static const char *topology_xml = "";

/* World ranks per virtual node. */
static int ranks_per_virtual_node(void)
{
    int size = (int) ompi_process_info.num_procs;
    int nodes = virtual_nodes;

    return (size + nodes - 1) / nodes;
}

static int virtual_node_of(opal_vpid_t world_rank)
{
    return (int) world_rank / ranks_per_virtual_node();
}

bool mca_coll_async_on_this_node(struct ompi_proc_t *proc)
{
    if (!OPAL_PROC_ON_LOCAL_NODE(proc->super.proc_flags)) {
        return false;
    }
    if (0 == virtual_nodes) {
        return true;
    }
    return proc->super.proc_name.jobid == OMPI_PROC_MY_NAME->jobid
           && virtual_node_of(proc->super.proc_name.vpid)
                  == virtual_node_of(OMPI_PROC_MY_NAME->vpid);
}

/* This node's name for the other processes: the host's, and the virtual node's
 * number with coll_async_virtual_nodes. Known at component open (the world's
 * size and this rank come from the launcher), before any communicator exists. */
void mca_coll_async_node_name(char *buf, size_t len)
{
    if (virtual_nodes > 0) {
        snprintf(buf, len, "%s#%d", ompi_process_info.nodename,
                 virtual_node_of(OMPI_PROC_MY_NAME->vpid));
    } else {
        snprintf(buf, len, "%s", ompi_process_info.nodename);
    }
}

/* This node's topology */

static struct coll_async_topology *topology;

/* Reads coll_async_topology_xml; a file that cannot be read turns the component
 * off with a message, like any bad value. */
static int topology_from_file(const char *path)
{
    hwloc_topology_t loaded;
    char why[320];
    int rc = coll_async_topology_load(path, &loaded);

    if (0 == rc) {
        rc = coll_async_topology_build(loaded, &topology);
        hwloc_topology_destroy(loaded);
    }
    if (0 != rc) {
        snprintf(why, sizeof(why), "an hwloc XML file that can be read (this one: %s)",
                 strerror(-rc));
        mca_coll_async_show_help(mca_coll_async_first_process(), "bad value", "topology_xml",
                                 path, why);
        return OMPI_ERR_BAD_PARAM;
    }
    return OMPI_SUCCESS;
}

int mca_coll_async_node_topology_init(const struct coll_async_config *config)
{
    const char *path = config->topology_xml;

    virtual_nodes = config->virtual_nodes;
    virtual_numa = config->virtual_numa;
    topology_xml = NULL != path ? path : "";

    if (NULL != topology) {
        return OMPI_SUCCESS;
    }
    if (NULL != path && '\0' != path[0]) {
        return topology_from_file(path);
    }
    /* Without Open MPI's topology the component still runs; it knows less. */
    if (OPAL_SUCCESS == opal_hwloc_base_get_topology() && NULL != opal_hwloc_topology) {
        (void) coll_async_topology_build(opal_hwloc_topology, &topology);
    }
    return OMPI_SUCCESS;
}

const struct coll_async_topology *mca_coll_async_node_topology(void)
{
    return topology;
}

/* With coll_async_virtual_numa = N: this process's pretend domain, i * N / n
 * for the i-th of the n ranks of its node (virtual or real) by world rank. */
static int virtual_numa_domain(void)
{
    int index = (int) ompi_process_info.my_local_rank;
    int count = (int) ompi_process_info.num_local_peers + 1;

    if (virtual_nodes > 0) {
        int per = ranks_per_virtual_node(), node = virtual_node_of(OMPI_PROC_MY_NAME->vpid);
        int left = (int) ompi_process_info.num_procs - node * per;

        index = (int) OMPI_PROC_MY_NAME->vpid - node * per;
        count = left < per ? left : per;
    }
    return (int) ((long) index * virtual_numa / (count > 0 ? count : 1));
}

int mca_coll_async_node_numa(void)
{
    hwloc_bitmap_t binding;
    cpu_set_t cpus;
    int numa = COLL_ASYNC_TOPOLOGY_NUMA_SEVERAL;

    if (virtual_numa > 0) {
        return virtual_numa_domain();
    }
    if (NULL == topology || 0 != sched_getaffinity(0, sizeof(cpus), &cpus)
        || NULL == (binding = hwloc_bitmap_alloc())) {
        return numa;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &cpus)) {
            hwloc_bitmap_set(binding, (unsigned) cpu);
        }
    }
    numa = coll_async_topology_numa_of(topology, binding);
    hwloc_bitmap_free(binding);
    return numa;
}

void mca_coll_async_node_topology_fini(void)
{
    coll_async_topology_free(topology);
    topology = NULL;
}

static int node_count(void)
{
    if (0 == virtual_nodes) {
        return coll_async_job_nodes();
    }
    /* Fewer than asked when the ranks run out first (4 ranks on 3 nodes: 2 + 2). */
    return virtual_node_of(ompi_process_info.num_procs - 1) + 1;
}

/* One verbose line, on MPI_COMM_WORLD: what the component knows of the machine. */
void mca_coll_async_node_report(struct ompi_communicator_t *comm)
{
    char summary[512] = "unknown";

    if (comm != &ompi_mpi_comm_world.comm
        || opal_output_get_verbosity(mca_coll_async_output) < 1) {
        return;
    }
    if (NULL != topology) {
        coll_async_topology_summary(topology, node_count(), summary, sizeof(summary));
    }
    opal_output_verbose(0 == ompi_comm_rank(comm) ? 1 : 2, mca_coll_async_output,
                        "coll:async: topology (%s): %s",
                        '\0' != topology_xml[0] ? topology_xml : "this machine",
                        summary);
}
