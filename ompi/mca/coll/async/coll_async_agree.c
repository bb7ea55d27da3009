/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: MPIX_Comm_agree and MPIX_Comm_iagree (Open MPI 5 and later) where
 * no fault-tolerant agreement (coll/ftagree) is selected below: every rank's
 * flag folded with the operation (a bitwise AND), in an order of their own.
 *
 * Open MPI's own components keep an agreement apart from the communicator's
 * collectives (coll/basic's runs as a libnbc iallreduce, whose tags a blocking
 * collective of tuned does not share), and programs rely on it: one rank may
 * start an iagree before a barrier that another calls before its own iagree.
 * So an agreement here is none of the communicator's collectives: it runs on a
 * stream of its own, which the engine orders against nothing else, as an
 * exchange over the mapper with tags of its own (each rank sends its flag to
 * every other and folds them all in rank order), on one node as across nodes.
 * Agreements are rare and small: n - 1 messages a rank cost less than keeping a
 * second sequence in every channel. This agreement is not fault tolerant: where a
 * process has failed it returns the exchange's error.
 */

#include "ompi_config.h"

#include <string.h>

#include "opal/util/output.h"

#include "coll_async.h"
#include "coll_async_native.h"
#include "coll_async_peers.h"

/* The communicator's ranks on the mapper with the agreements' own tags; NULL
 * where the mapper does not reach them. */
static struct coll_async_peers *agreement_peers(mca_coll_async_module_t *module,
                                                struct ompi_communicator_t *comm)
{
    struct coll_async_peers *peers = &module->agree_peers, *own;
    int size = ompi_comm_size(comm);

    if (NULL != peers->id) {
        return peers;
    }
    own = mca_coll_async_module_peers(module, comm);
    if (NULL == own || 0 != coll_async_peers_alloc(peers, size)) {
        return NULL;
    }
    memcpy(peers->id, own->id, (size_t) size * sizeof(*peers->id));
    peers->net = own->net;
    peers->tag_base = own->tag_base | COLL_ASYNC_PEERS_AGREEMENT_TAG;
    return peers;
}

int mca_coll_async_agree(void *flag, coll_async_count_t count, struct ompi_datatype_t *dtype,
                         struct ompi_op_t *op, struct ompi_communicator_t *comm,
                         ompi_request_t **request, mca_coll_async_module_t *module)
{
    struct coll_async_call call = {.module = module,
                                   .comm = comm,
                                   .coll = NULL == request ? COLL_ASYNC_ALLREDUCE
                                                           : COLL_ASYNC_IALLREDUCE,
                                   .request = request,
                                   .stream = &module->agree_stream};

    if (OMPI_COMM_IS_INTER(comm)
        || (ompi_comm_size(comm) > 1 && NULL == (call.peers = agreement_peers(module, comm)))) {
        /* Without the mapper to every rank: the communicator's allreduce in
         * place, in the communicator's order. */
        opal_output_verbose(2, mca_coll_async_output,
                            "coll:async: %s (cid %u): agreement as the communicator's allreduce",
                            comm->c_name, coll_async_comm_cid(comm));
        return NULL == request
                   ? module->super.coll_allreduce(MPI_IN_PLACE, flag, count, dtype, op, comm,
                                                  &module->super)
                   : module->super.coll_iallreduce(MPI_IN_PLACE, flag, count, dtype, op, comm,
                                                   request, &module->super);
    }
    OPAL_THREAD_ADD_FETCH64(&mca_coll_async_agree_calls, 1);
    return coll_async_native_agree(&call, flag, (size_t) count, dtype, op);
}
