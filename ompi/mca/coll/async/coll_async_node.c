/*
 * coll/async: which processes share this node.
 *
 * Normally the launcher's locality says it. With coll_async_virtual_nodes = N the
 * job's ranks are split into N pretend nodes of ceil(size / N) consecutive world
 * ranks each, so what runs between nodes can be tested on one machine: shared
 * memory is used only inside a pretend node. A pretend node never spans real
 * ones, and processes of other jobs (spawned, connected) are never on one of this
 * job's pretend nodes.
 */

#include "ompi_config.h"

#include "ompi/communicator/communicator.h"
#include "ompi/proc/proc.h"

#include "coll_async.h"

static int virtual_node_of(opal_vpid_t world_rank)
{
    int size = ompi_comm_size(&ompi_mpi_comm_world.comm);
    int per_node = (size + mca_coll_async_component.virtual_nodes - 1)
                   / mca_coll_async_component.virtual_nodes;

    return (int) world_rank / per_node;
}

bool mca_coll_async_on_this_node(struct ompi_proc_t *proc)
{
    if (!OPAL_PROC_ON_LOCAL_NODE(proc->super.proc_flags)) {
        return false;
    }
    if (0 == mca_coll_async_component.virtual_nodes) {
        return true;
    }
    return proc->super.proc_name.jobid == OMPI_PROC_MY_NAME->jobid
           && virtual_node_of(proc->super.proc_name.vpid)
                  == virtual_node_of(OMPI_PROC_MY_NAME->vpid);
}
