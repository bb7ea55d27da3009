/*
 * coll/async: single-process collectives. See coll_async_single.h.
 */

#include "ompi_config.h"

#include "coll_async_single.h"

int coll_async_single_copy(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                           void *rbuf, int rcount, struct ompi_datatype_t *rdtype)
{
    if (MPI_IN_PLACE == sbuf || MPI_IN_PLACE == rbuf) {
        return OMPI_SUCCESS;
    }
    return ompi_datatype_sndrcv(sbuf, scount, sdtype, rbuf, rcount, rdtype);
}

void *coll_async_single_at(const void *buf, int disp, struct ompi_datatype_t *dtype)
{
    ptrdiff_t lb, extent;

    if (MPI_IN_PLACE == buf) {
        return (void *) buf;
    }
    ompi_datatype_get_extent(dtype, &lb, &extent);
    return (char *) buf + (ptrdiff_t) disp * extent;
}
