#
# Copyright (c) 2026 The coll/async developers. All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# COLL_ASYNC_CHECK_HWLOC
# ----------------------
# Out of tree, hwloc comes from the system (Debian's Open MPI uses the same external
# hwloc); in tree, Open MPI's own hwloc is always there. Sets coll_async_have_hwloc,
# and COLL_ASYNC_HWLOC_LIBS for what links with hwloc outside the component (the
# topology unit test).
AC_DEFUN([COLL_ASYNC_CHECK_HWLOC], [
    coll_async_have_hwloc=no
    COLL_ASYNC_HWLOC_LIBS=
    AC_CHECK_HEADER([hwloc.h],
        [AC_CHECK_LIB([hwloc], [hwloc_topology_init],
            [coll_async_have_hwloc=yes
             COLL_ASYNC_HWLOC_LIBS=-lhwloc])])
    AC_SUBST([COLL_ASYNC_HWLOC_LIBS])
])
