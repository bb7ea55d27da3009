/*
 * coll/async: collectives on a communicator of a single process.
 *
 * The result of every collective is then a local copy from the send buffer to the
 * receive buffer (or nothing: barrier, bcast, exscan, and MPI_IN_PLACE).
 */

#ifndef MCA_COLL_ASYNC_SINGLE_H
#define MCA_COLL_ASYNC_SINGLE_H

#include "ompi_config.h"

#include "ompi/datatype/ompi_datatype.h"

/* Copies scount sdtype at sbuf into rcount rdtype at rbuf; nothing when either
 * buffer is MPI_IN_PLACE. */
int coll_async_single_copy(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                           void *rbuf, int rcount, struct ompi_datatype_t *rdtype);

/* buf moved by disp elements of dtype (a v-collective displacement); MPI_IN_PLACE
 * stays MPI_IN_PLACE. */
void *coll_async_single_at(const void *buf, int disp, struct ompi_datatype_t *dtype);

#endif /* MCA_COLL_ASYNC_SINGLE_H */
