#
# Copyright (c) 2026 The coll/async developers. All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# COLL_ASYNC_OMPI_LIBS
# --------------------
# The libraries the component calls into, for its link line (OMPI_COMPONENT_LIBS):
# libmpi, Open MPI's portability layer (libopen-pal), 4.1's run-time layer
# (libopen-rte), 6.0's libopen_mpi (the MPI layer's internals and, in Debian's
# build, Open MPI's own components, which libmpi's bindings call into) and, from
# 5.0, PMIx, whose functions the modex macros call. A plugin
# that names them loads wherever Open MPI loads, also where libmpi itself was
# opened with RTLD_LOCAL (Python, Julia, R, a host that dlopens MPI), where
# nothing global resolves them. Run after COLL_ASYNC_FIND_OMPI.
AC_DEFUN([COLL_ASYNC_OMPI_LIBS], [
    AC_MSG_CHECKING([for the Open MPI libraries the component links])
    OMPI_COMPONENT_LIBS=
    coll_async_found=
    for dir in `$MPICC --showme:libdirs`; do
        OMPI_COMPONENT_LIBS="$OMPI_COMPONENT_LIBS -L$dir"
        for lib in open_mpi open-rte open-pal pmix; do
            AS_IF([test -e "$dir/lib$lib.so" || test -e "$dir/lib$lib.dylib"],
                  [coll_async_found="$coll_async_found -l$lib"])
        done
    done
    # A PMIx of the system's (Debian 13's) lives outside Open MPI's directory.
    AS_CASE([$coll_async_found],
        [*-lpmix*], [],
        [AS_IF([test "$coll_async_ompi_series" != 4.1],
               [coll_async_found="$coll_async_found `pkg-config --libs pmix 2>/dev/null`"])])
    OMPI_COMPONENT_LIBS="$OMPI_COMPONENT_LIBS -lmpi$coll_async_found"
    AC_MSG_RESULT([$OMPI_COMPONENT_LIBS])
])
