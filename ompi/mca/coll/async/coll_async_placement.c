/*
 * coll/async: where the progress thread runs (coll_async_progress_cpus).
 *
 * "auto" looks, in Open MPI's hwloc topology, for the NUMA domain the rank is
 * bound in, and picks a core of it that the rank is not bound to, so the thread
 * advances collectives while the rank computes on its own cores. A rank bound to
 * nothing in particular (or to all of its domain) leaves the thread unpinned,
 * sharing its cpuset.
 */

#define _GNU_SOURCE

#include "ompi_config.h"

#include <sched.h>

#include "opal/mca/hwloc/base/base.h"
#include "opal/util/output.h"

#include "coll_async.h"

/* The last PU of domain that the rank is not bound to and the job may use. */
static int free_cpu_near(hwloc_topology_t topology, hwloc_const_cpuset_t domain,
                         const cpu_set_t *bound)
{
    hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topology);
    int chosen = -1, pu;

    hwloc_bitmap_foreach_begin(pu, domain)
    {
        if (pu < CPU_SETSIZE && !CPU_ISSET(pu, bound) && hwloc_bitmap_isset(allowed, pu)) {
            chosen = pu;
        }
    }
    hwloc_bitmap_foreach_end();
    return chosen;
}

static int auto_cpu(void)
{
    hwloc_topology_t topology;
    hwloc_obj_t numa = NULL;
    cpu_set_t bound;

    if (0 != sched_getaffinity(0, sizeof(bound), &bound)
        || OPAL_SUCCESS != opal_hwloc_base_get_topology() || NULL == opal_hwloc_topology) {
        return -1;
    }
    topology = opal_hwloc_topology;
    while (NULL != (numa = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, numa))) {
        int pu, first = -1;

        hwloc_bitmap_foreach_begin(pu, numa->cpuset)
        {
            if (first < 0 && pu < CPU_SETSIZE && CPU_ISSET(pu, &bound)) {
                first = pu;
            }
        }
        hwloc_bitmap_foreach_end();
        if (first >= 0) {
            return free_cpu_near(topology, numa->cpuset, &bound);
        }
    }
    return -1;
}

void mca_coll_async_place_progress_thread(void)
{
    static bool placed = false;
    struct coll_async_cpuset where = mca_coll_async_component.progress_cpus;

    if (placed) {
        return;
    }
    placed = true;
    if (COLL_ASYNC_CPUS_AUTO == where.mode) {
        int cpu = auto_cpu();

        memset(&where, 0, sizeof(where));
        where.mode = COLL_ASYNC_CPUS_NONE;
        if (cpu >= 0) {
            where.mode = COLL_ASYNC_CPUS_LIST;
            where.bits[cpu / (8 * sizeof(unsigned long))] |= 1UL << (cpu % (8 * sizeof(unsigned long)));
        }
        opal_output_verbose(2, mca_coll_async_component.output,
                            "coll:async: progress thread %s%d", cpu >= 0 ? "on cpu " : "unpinned ",
                            cpu);
    }
    coll_async_engine_configure(&where);
}
