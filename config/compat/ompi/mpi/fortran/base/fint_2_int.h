/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Stand-in for an Open MPI header that Debian's libopenmpi-dev does not ship
 * although ompi/op/op.h includes it. op.h only needs the int -> MPI_Fint
 * conversion (for Fortran user-defined operations). configure adds this
 * directory to the include path only when the real header is missing.
 */
#ifndef COLL_ASYNC_COMPAT_FINT_2_INT_H
#define COLL_ASYNC_COMPAT_FINT_2_INT_H

#define OMPI_INT_2_FINT(a) ((MPI_Fint) (a))

#endif
