/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: a communicator's MPI_Info hints.
 *
 * The key coll_async_<family>_algorithm (the MCA parameter's own name) with any
 * value that parameter accepts overrides the job's parameter for that family on
 * that communicator alone (MPI_Comm_dup_with_info, MPI_Comm_split_with_info,
 * MPI_Comm_idup_with_info: Open MPI copies the info into the new communicator
 * before it selects and enables its coll modules). coll_async_<family>_alg is the
 * same hint: MPI_MAX_INFO_KEY (36 with the NUL) is too short for
 * coll_async_reduce_scatter_block_algorithm and the neighbor families' names. Read once, when the module is
 * enabled, so MPI_Comm_set_info later changes nothing here. MPI_Comm_get_info
 * returns the hints taken.
 *
 * Like MPI's own collective hints they must be the same on every rank: the
 * leaders of different ranks would otherwise run different algorithms. That is
 * not checked: the module is enabled without any message between the ranks
 * (see open_channel() in coll_async_module.c).
 */

#include "ompi_config.h"

#include <stdio.h>
#include <string.h>

#include "opal/util/output.h"

#include "coll_async.h"

#define HINT_PREFIX "coll_async_"
#define HINT_SUFFIX "_algorithm"
#define SHORT_SUFFIX "_alg"

/* The family whose hint key is key (either suffix), or -1. */
static int family_of_key(const char *key)
{
    char name[96], short_name[96];

    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES; ++family) {
        snprintf(name, sizeof(name), HINT_PREFIX "%s" HINT_SUFFIX,
                 coll_async_family_name(family));
        snprintf(short_name, sizeof(short_name), HINT_PREFIX "%s" SHORT_SUFFIX,
                 coll_async_family_name(family));
        if (0 == strcmp(name, key) || 0 == strcmp(short_name, key)) {
            return family;
        }
    }
    return -1;
}

/* "allgather, allgatherv, ...": the families a key may name, for the message. */
static void family_names(char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES && used < len; ++family) {
        used += (size_t) snprintf(buf + used, len - used, "%s%s", 0 == family ? "" : ", ",
                                  coll_async_family_name(family));
    }
}

/* One key of the info: taken into algorithm[], or said and ignored. */
static void read_hint(struct ompi_communicator_t *comm, opal_info_t *info, const char *key,
                      enum coll_async_alg algorithm[COLL_ASYNC_NUM_FAMILIES])
{
    bool speaker = 0 == ompi_comm_rank(comm);
    char value[128], accepted[512];
    int family = family_of_key(key), alg;

    if (family < 0) {
        family_names(accepted, sizeof(accepted));
        mca_coll_async_show_help(speaker, "unknown hint", key, comm->c_name,
                                 coll_async_comm_cid(comm), accepted);
        return;
    }
    if (!coll_async_info_value(info, key, value, sizeof(value))) {
        return;
    }
    alg = coll_async_decision_parse(family, value);
    if (alg < 0) {
        coll_async_decision_values(family, accepted, sizeof(accepted));
        mca_coll_async_show_help(speaker, "bad hint", key, value, comm->c_name,
                                 coll_async_comm_cid(comm), accepted, key);
        return;
    }
    algorithm[family] = (enum coll_async_alg) alg;
    /* Set again, as taken: Open MPI 5.0 keeps the keys no component subscribed to
     * out of MPI_Comm_get_info until one sets them (4.1 returns them anyway). */
    (void) opal_info_set(info, key, value);
    opal_output_verbose(speaker ? 1 : 2, mca_coll_async_output,
                        "coll:async: %s (cid %u, size %d): hint %s=%s", comm->c_name,
                        coll_async_comm_cid(comm), ompi_comm_size(comm), key,
                        coll_async_alg_names[alg]);
}

void mca_coll_async_hints_read(struct ompi_communicator_t *comm,
                               enum coll_async_alg algorithm[COLL_ASYNC_NUM_FAMILIES])
{
    opal_info_t *info = comm->super.s_info;
    char key[128];
    int nkeys = 0;

    if (NULL == info || OPAL_SUCCESS != opal_info_get_nkeys(info, &nkeys)) {
        return;
    }
    for (int n = 0; n < nkeys; ++n) {
        if (coll_async_info_key(info, n, key, sizeof(key))
            && 0 == strncmp(key, HINT_PREFIX, strlen(HINT_PREFIX))) {
            read_hint(comm, info, key, algorithm);
        }
    }
}
