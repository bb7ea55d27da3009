/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: allgatherv and reduce_scatter(_block) across nodes by node, from
 * the MPI arguments to a hierarchical run (the run: coll_async_hier_v.c). The
 * choice rests on what every rank knows alike: the counts, the receive type's
 * size, the operation; elsewhere the calls stay exchanges over the mapper.
 */

#include "ompi_config.h"

#include <stdio.h>

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/op/op.h"

#include "coll_async_hier.h"
#include "coll_async_native.h"
#include "coll_async_tuning.h"

static size_t type_size(struct ompi_datatype_t *dtype)
{
    size_t size;

    ompi_datatype_type_size(dtype, &size);
    return size;
}

/* Whether the family's decision takes a call of total bytes across nodes, its
 * ranks' average block rounded up. A row of the tuning file for the family and
 * total takes it by node too, where the parameter leaves the leaders to auto:
 * the row's algorithm runs there alone (docs/tuning-file.md). */
static bool by_node(const struct coll_async_call *call, size_t total)
{
    struct coll_async_hier *hier = call->module->hier;
    enum coll_async_family family = coll_async_family_of(call->coll);

    if (NULL == hier || 0 == total) {
        return false;
    }
    if (NULL != hier->tuning
        && COLL_ASYNC_ALG_AUTO == coll_async_decision_leaders(hier->algorithm[family])
        && NULL != coll_async_tuning_lookup(hier->tuning, family, hier->node_count, total)) {
        return true;
    }
    return coll_async_decision_aggregated(family, hier->algorithm[family],
                                          (total + (size_t) hier->size - 1) / (size_t) hier->size,
                                          hier->size, hier->node_count);
}

static int run_by_node(const struct coll_async_call *call, struct coll_async_sched *work,
                       size_t total)
{
    char first[64];

    snprintf(first, sizeof(first), " (the first: %zu B in all)", total);
    coll_async_native_say_aggregated(call, "by node", first);
    return coll_async_native_run(call, work, true);
}

static struct coll_async_hier_v *new_run(const struct coll_async_call *call,
                                         struct coll_async_sched *work, bool with_recv)
{
    struct coll_async_hier_v *v;

    work->base.begin = coll_async_hier_begin;
    work->base.free_plan = coll_async_hier_run_free;
    work->base.plan = coll_async_hier_run_new(call->module->hier,
                                              coll_async_family_of(call->coll));
    if (NULL == work->base.plan) {
        return NULL;
    }
    v = coll_async_hier_run_v(work->base.plan, with_recv);
    if (NULL == v) {
        coll_async_hier_run_free(work->base.plan);
    }
    return v;
}

bool coll_async_native_allgatherv_by_node(const struct coll_async_call *call,
                                          const struct coll_async_side *send,
                                          const struct coll_async_side *recv, int *rc)
{
    int n = ompi_comm_size(call->comm), me = ompi_comm_rank(call->comm);
    size_t size = type_size(recv->dtype), total = 0;
    struct coll_async_sched work = {.root = -1};
    struct coll_async_hier_v *v;

    for (int rank = 0; rank < n; ++rank) {
        total += coll_async_count_at(recv->counts, rank) * size;
    }
    if (!by_node(call, total)) {
        return false;
    }
    v = new_run(call, &work, true);
    if (NULL == v) {
        *rc = OMPI_ERR_OUT_OF_RESOURCE;
        return true;
    }
    for (int rank = 0; rank < n; ++rank) {
        v->bytes[rank] = coll_async_count_at(recv->counts, rank) * size;
        coll_async_side_block(recv, rank, &v->recv[rank]);
    }
    coll_async_hier_v_by_node(call->module->hier, v);
    if (MPI_IN_PLACE == send->buf) {
        coll_async_side_block(recv, me, &v->mine);
    } else {
        coll_async_block_set(&v->mine, send->buf, send->count, send->dtype);
    }
    work.bytes = total;
    *rc = run_by_node(call, &work, total);
    return true;
}

bool coll_async_native_reduce_scatter_by_node(const struct coll_async_call *call,
                                              const void *sbuf, void *rbuf, size_t rcount,
                                              struct coll_async_values rcounts,
                                              struct ompi_datatype_t *dtype,
                                              struct ompi_op_t *op, int *rc)
{
    int n = ompi_comm_size(call->comm);
    size_t size = type_size(dtype), count = 0;
    struct coll_async_sched work = {.root = -1};
    struct coll_async_hier_v *v;

    for (int rank = 0; rank < n; ++rank) {
        count += coll_async_reduce_scatter_count(rcount, rcounts, rank);
    }
    if (!coll_async_reduction_supported(dtype, op) || !by_node(call, count * size)) {
        return false;
    }
    v = new_run(call, &work, false);
    if (NULL == v) {
        *rc = OMPI_ERR_OUT_OF_RESOURCE;
        return true;
    }
    for (int rank = 0; rank < n; ++rank) {
        v->bytes[rank] = coll_async_reduce_scatter_count(rcount, rcounts, rank) * size;
        v->offset[rank] = 0 == rank ? 0 : v->offset[rank - 1] + v->bytes[rank - 1];
    }
    coll_async_reduction_resolve(&work.reduction, dtype, op);
    work.sbuf = MPI_IN_PLACE == sbuf ? rbuf : sbuf;
    work.rbuf = rbuf;
    work.count = count;
    work.bytes = count * size;
    *rc = run_by_node(call, &work, work.bytes);
    return true;
}
