/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: where the progress thread runs (coll_async_progress_cpus).
 *
 * "auto" looks, in Open MPI's hwloc topology, for the NUMA domain the rank is
 * bound in, and picks a core of it that neither this rank nor any other rank of
 * the job on this node is bound to (their bindings come from the launcher's
 * modex), so the thread advances collectives while the ranks compute on their
 * own cores instead of taking turns with a neighbour. When there is no such core
 * the thread is left unpinned, sharing the rank's cpuset.
 *
 * It also tells the engine when this node runs more ranks than it has CPUs, so
 * that waiting ranks yield their CPU at once.
 */

#define _GNU_SOURCE

#include "ompi_config.h"

#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "ompi/communicator/communicator.h"
#include "ompi/proc/proc.h"
#include "opal/mca/hwloc/base/base.h"
#include "opal/util/output.h"

#include "coll_async.h"

/* Adds to taken the CPUs the other ranks of the job on this node are bound to.
 * The job's processes, not MPI_COMM_WORLD's: a program of MPI-4 Sessions has
 * no MPI_COMM_WORLD. */
static void add_neighbours(hwloc_bitmap_t taken)
{
    size_t nprocs = 0;
    ompi_proc_t **procs = ompi_proc_world(&nprocs);

    for (size_t i = 0; NULL != procs && i < nprocs; ++i) {
        ompi_proc_t *proc = procs[i];
        hwloc_bitmap_t theirs;
        char *cpuset = NULL;
        int rc;

        if (NULL == proc || proc == ompi_proc_local()
            || !OPAL_PROC_ON_LOCAL_NODE(proc->super.proc_flags)) {
            continue;
        }
        COLL_ASYNC_MODEX_RECV_CPUSET(rc, &proc->super.proc_name, &cpuset);
        if (OPAL_SUCCESS != rc || NULL == cpuset) {
            continue; /* not bound: it may run anywhere, and so may we */
        }
        theirs = hwloc_bitmap_alloc();
        if (NULL != theirs && 0 == hwloc_bitmap_list_sscanf(theirs, cpuset)) {
            hwloc_bitmap_or(taken, taken, theirs);
        }
        hwloc_bitmap_free(theirs);
        free(cpuset);
    }
    free(procs);
}

/* The last PU of domain that no rank here is bound to and the job may use. */
static int free_cpu_near(hwloc_topology_t topology, hwloc_const_cpuset_t domain,
                         const cpu_set_t *bound)
{
    hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topology);
    hwloc_bitmap_t taken = hwloc_bitmap_alloc();
    int chosen = -1, pu;

    if (NULL == taken) {
        return -1;
    }
    add_neighbours(taken);
    hwloc_bitmap_foreach_begin(pu, domain)
    {
        if (pu < CPU_SETSIZE && !CPU_ISSET(pu, bound) && !hwloc_bitmap_isset(taken, pu)
            && hwloc_bitmap_isset(allowed, pu)) {
            chosen = pu;
        }
    }
    hwloc_bitmap_foreach_end();
    hwloc_bitmap_free(taken);
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

/* The CPUs the job may use on this node; NULL when hwloc cannot say. */
static hwloc_const_cpuset_t allowed_cpus(void)
{
    if (OPAL_SUCCESS != opal_hwloc_base_get_topology() || NULL == opal_hwloc_topology) {
        return NULL;
    }
    return hwloc_topology_get_allowed_cpuset(opal_hwloc_topology);
}

/*
 * Keeps of a CPU list those the job may use here; the kernel would refuse the
 * others when the thread pins itself, which it cannot report. The node's first
 * rank says which ones are dropped: nodes may differ, so this is a warning,
 * and the component runs on every node alike.
 */
static void keep_cpus_here(struct coll_async_cpuset *where, const char *given)
{
    hwloc_const_cpuset_t allowed = allowed_cpus();
    hwloc_bitmap_t missing;
    char *missing_text = NULL, *allowed_text = NULL;
    bool any_left = false;

    if (NULL == allowed || NULL == (missing = hwloc_bitmap_alloc())) {
        return;
    }
    for (int cpu = 0; cpu < COLL_ASYNC_MAX_CPUS; ++cpu) {
        if (!coll_async_cpuset_has(where, cpu)) {
            continue;
        }
        if (hwloc_bitmap_isset(allowed, (unsigned) cpu)) {
            any_left = true;
        } else {
            hwloc_bitmap_set(missing, (unsigned) cpu);
            where->bits[cpu / (8 * sizeof(unsigned long))] &=
                ~(1UL << (cpu % (8 * sizeof(unsigned long))));
        }
    }
    if (!any_left) {
        where->mode = COLL_ASYNC_CPUS_NONE;
    }
    if (!hwloc_bitmap_iszero(missing) && 0 <= hwloc_bitmap_list_asprintf(&missing_text, missing)
        && 0 <= hwloc_bitmap_list_asprintf(&allowed_text, allowed)) {
        mca_coll_async_show_help(0 == ompi_process_info.my_local_rank, "cpus not here",
                                 given, missing_text,
                                 ompi_process_info.nodename, allowed_text,
                                 any_left ? "The progress thread runs on the others."
                                          : "The progress thread is not pinned.");
    }
    free(missing_text);
    free(allowed_text);
    hwloc_bitmap_free(missing);
}

bool mca_coll_async_node_oversubscribed(void)
{
    hwloc_const_cpuset_t allowed = allowed_cpus();
    int cpus = NULL != allowed ? hwloc_bitmap_weight(allowed) : 0;

    if (cpus <= 0) {
        cpus = (int) sysconf(_SC_NPROCESSORS_ONLN);
    }
    return cpus > 0 && (int) ompi_process_info.num_local_peers + 1 > cpus;
}

void mca_coll_async_place_progress_thread(const struct coll_async_config *config)
{
    static bool placed = false;
    struct coll_async_cpuset where = config->progress_cpus;

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
        opal_output_verbose(2, mca_coll_async_output,
                            "coll:async: progress thread %s%d", cpu >= 0 ? "on cpu " : "unpinned ",
                            cpu);
    } else if (COLL_ASYNC_CPUS_LIST == where.mode) {
        keep_cpus_here(&where, config->progress_cpus_value);
    }
    coll_async_engine_configure(&where);
    if (mca_coll_async_node_oversubscribed()) {
        opal_output_verbose(2, mca_coll_async_output,
                            "coll:async: more ranks than CPUs here: waiting ranks yield at once");
        coll_async_engine_oversubscribed(true);
    }
}
