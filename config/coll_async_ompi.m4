#
# Copyright (c) 2026 The coll/async developers. All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# COLL_ASYNC_FIND_OMPI
# --------------------
# Finds Open MPI 4.1, 5.0 or 6.0 and its internal headers (ompi_config.h,
# ompi/mca/coll/coll.h), through --with-ompi=DIR or the mpicc wrapper on PATH; with
# --with-ompi-src=TREE, in the configured source tree the installation was built
# from (checked to be the same version and configuration by
# config/ompi-tree-check), for an installation without them. Sets
# CPPFLAGS, OMPI_LIBS, coll_async_ompi_version, coll_async_ompi_series (4.1, 5.0 or 6.0),
# coll_async_ompi_incdir and OMPI_INFO. Which series it is comes from the headers
# (OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION); the component's compatibility layer
# (coll_async_compat.h) reads the same macros, so nothing else is defined here.
AC_DEFUN([COLL_ASYNC_FIND_OMPI], [
    AC_ARG_WITH([ompi],
        [AS_HELP_STRING([--with-ompi=DIR],
            [prefix of the Open MPI 4.1, 5.0 or 6.0 installation to build against
             (default: the one whose mpicc is on PATH)])])
    AC_ARG_WITH([ompi-src],
        [AS_HELP_STRING([--with-ompi-src=TREE],
            [the configured source tree (or, for a build outside the source, the
             build directory) of the Open MPI installation found, for its internal
             headers, where the installation has none (not configured with
             --with-devel-headers); it must be the same version and configuration])])

    AS_IF([test -n "$with_ompi" && test "$with_ompi" != yes],
          [AC_PATH_PROG([MPICC], [mpicc], [], [$with_ompi/bin])],
          [AC_PATH_PROG([MPICC], [mpicc])])
    AS_IF([test -z "$MPICC"],
          [AC_MSG_ERROR([mpicc was not found. Install Open MPI 4.1, 5.0 or 6.0 with its development
files (Debian/Ubuntu: apt-get install libopenmpi-dev openmpi-bin) or pass
--with-ompi=PREFIX of an Open MPI installation.])])
    OMPI_INFO=`AS_DIRNAME(["$MPICC"])`/ompi_info
    AS_IF([test ! -x "$OMPI_INFO"],
          [AC_MSG_ERROR([ompi_info was not found next to $MPICC])])

    coll_async_ompi_cppflags=
    coll_async_ompi_incdir=
    for dir in `$MPICC --showme:incdirs`; do
        coll_async_ompi_cppflags="$coll_async_ompi_cppflags -I$dir"
        AS_IF([test -f "$dir/openmpi/ompi_config.h"],
              [coll_async_ompi_cppflags="$coll_async_ompi_cppflags -I$dir/openmpi"
               coll_async_ompi_incdir="$dir/openmpi"])
        AS_IF([test -f "$dir/ompi_config.h"], [coll_async_ompi_incdir="$dir"])
    done
    # An installation without internal headers: they come from its source tree,
    # after the installation's own (mpi.h, which must be the tree's).
    coll_async_ompi_tree_flags=
    AS_IF([test -n "$with_ompi_src" && test "$with_ompi_src" != no && test "$with_ompi_src" != yes], [
        AC_MSG_CHECKING([whether $with_ompi_src is the configured tree of this Open MPI])
        coll_async_tree_out=`sh "$srcdir/config/ompi-tree-check" "$OMPI_INFO" "$MPICC" "$with_ompi_src"`
        AS_IF([test $? -ne 0],
              [AC_MSG_RESULT([no])
               AC_MSG_ERROR([$coll_async_tree_out])])
        coll_async_ompi_tree_flags=`echo "$coll_async_tree_out" | sed -n 's/^cppflags=//p'`
        coll_async_tree_src=`echo "$coll_async_tree_out" | sed -n 's/^src=//p'`
        coll_async_tree_version=`echo "$coll_async_tree_out" | sed -n 's/^version=//p'`
        AC_MSG_RESULT([yes, $coll_async_tree_version, same configuration (source: $coll_async_tree_src)])
        coll_async_ompi_incdir="`cd "$with_ompi_src" && pwd` (source tree, checked)"
    ])
    OMPI_LIBS=
    for dir in `$MPICC --showme:libdirs`; do
        OMPI_LIBS="$OMPI_LIBS -L$dir"
    done
    # The libraries mpicc links: libmpi, and on 6.0 libopen_mpi too, which holds the
    # predefined handles (MPI_SUM, MPI_COMM_WORLD) that mpi.h names.
    coll_async_libs=`$MPICC --showme:libs 2>/dev/null`
    AS_IF([test -z "$coll_async_libs"], [coll_async_libs=mpi])
    for lib in $coll_async_libs; do
        OMPI_LIBS="$OMPI_LIBS -l$lib"
    done
    AC_SUBST([OMPI_LIBS])
    # Debian's packages lack a few headers that others they ship include (4.1:
    # ompi/mpi/fortran/base/fint_2_int.h, from ompi/op/op.h; 5.0: the pthreads
    # threads headers and the Linux timer's, from opal_config.h's implementation
    # names). config/compat has stand-ins; last on the path, so real ones win.
    coll_async_compat=`cd "$srcdir" && pwd`/config/compat
    CPPFLAGS="$CPPFLAGS $coll_async_ompi_cppflags $coll_async_ompi_tree_flags -I$coll_async_compat"

    # Open MPI 5.0 and 6.0's headers include PMIx's own (pmix.h), which a system PMIx
    # keeps in a directory of its own (Debian 13, unstable: /usr/lib/<arch>/pmix2/include), named
    # by its pkg-config file; Open MPI's wrapper does not list it.
    AC_MSG_CHECKING([for Open MPI's internal headers])
    coll_async_save_CPPFLAGS=$CPPFLAGS
    coll_async_pmix_cppflags=no
    for coll_async_try in "" "`pkg-config --cflags pmix 2>/dev/null`"; do
        CPPFLAGS="$coll_async_save_CPPFLAGS $coll_async_try"
        AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[
#include "ompi_config.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/communicator/communicator.h"
#include "ompi/op/op.h"
]], [[return (int) sizeof(mca_coll_base_component_t);]])],
            [coll_async_pmix_cppflags=$coll_async_try
             break])
    done
    AS_IF([test "$coll_async_pmix_cppflags" = no],
        [AC_MSG_RESULT([no])
         AC_MSG_ERROR([Open MPI's internal headers (ompi_config.h, ompi/mca/coll/coll.h) were
not found or do not compile with the include directories that
'$MPICC --showme:incdirs' reports. An Open MPI component is built against them.
Debian/Ubuntu: apt-get install libopenmpi-dev (5.0, 6.0: also libpmix-dev). For a
source-built Open MPI without them (not configured with --with-devel-headers), pass
its prefix with --with-ompi=PREFIX and the source tree it was configured and built
in with --with-ompi-src=TREE.])],
        [test -n "$coll_async_pmix_cppflags"],
        [AC_MSG_RESULT([yes, in $coll_async_ompi_incdir, with PMIx's $coll_async_pmix_cppflags])],
        [AC_MSG_RESULT([yes, in $coll_async_ompi_incdir])])

    # Open MPI's inline atomics (free lists, LIFOs) use 16-byte compare-and-swap where
    # its own build had it (-mcx16 on x86-64); without the same flag the compiler
    # emits a call to __sync_val_compare_and_swap_16, which nothing provides.
    OMPI_ABI_CFLAGS=
    AC_MSG_CHECKING([for the flags of Open MPI's 16-byte atomics])
    coll_async_save_CFLAGS=$CFLAGS
    coll_async_cas_flags=unknown
    for coll_async_flag in "" -mcx16; do
        CFLAGS="$coll_async_save_CFLAGS $coll_async_flag"
        AC_LINK_IFELSE([AC_LANG_PROGRAM([[
#include "ompi_config.h"
#if OPAL_HAVE_SYNC_BUILTIN_CSWAP_INT128
volatile __int128 word;
#endif
]], [[
#if OPAL_HAVE_SYNC_BUILTIN_CSWAP_INT128
return __sync_bool_compare_and_swap(&word, (__int128) 0, (__int128) 1);
#endif
]])],
            [coll_async_cas_flags=$coll_async_flag
             break])
    done
    CFLAGS=$coll_async_save_CFLAGS
    AS_CASE([$coll_async_cas_flags],
        [unknown], [AC_MSG_RESULT([unknown])
                    AC_MSG_ERROR([cannot compile the 16-byte atomics Open MPI's headers use])],
        [""], [AC_MSG_RESULT([none needed])],
        [OMPI_ABI_CFLAGS=$coll_async_cas_flags
         AC_MSG_RESULT([$coll_async_cas_flags])])

    # As in tree: only what Open MPI must find (OMPI_MODULE_DECLSPEC, the component
    # structure) is exported from the component.
    AC_MSG_CHECKING([whether $CC hides symbols with -fvisibility=hidden])
    coll_async_save_CFLAGS=$CFLAGS
    CFLAGS="$CFLAGS -fvisibility=hidden"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[
#include "ompi_config.h"
#if !OPAL_C_HAVE_VISIBILITY
#error Open MPI was built without symbol visibility
#endif
]], [[]])],
        [OMPI_ABI_CFLAGS="$OMPI_ABI_CFLAGS -fvisibility=hidden"
         AC_MSG_RESULT([yes])],
        [AC_MSG_RESULT([no])])
    CFLAGS=$coll_async_save_CFLAGS

    AC_MSG_CHECKING([which Open MPI series the headers are])
    coll_async_ompi_series=
    for coll_async_series in 4.1 5.0 6.0; do
        AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[
#include "ompi_config.h"
#if OMPI_MAJOR_VERSION != ${coll_async_series%.*} || OMPI_MINOR_VERSION != ${coll_async_series#*.}
#error another series
#endif
]], [[]])],
            [coll_async_ompi_series=$coll_async_series
             break])
    done
    AS_IF([test -z "$coll_async_ompi_series"],
          [AC_MSG_RESULT([neither])
           AC_MSG_ERROR([coll/async is written for Open MPI 4.1.x and 5.0.x; the headers found
are another version])])
    coll_async_ompi_version=`$OMPI_INFO --parsable | sed -n 's/^ompi:version:full://p'`
    AC_MSG_RESULT([$coll_async_ompi_series ($coll_async_ompi_version)])
    AC_SUBST([coll_async_ompi_series])
])
