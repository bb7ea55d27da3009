# -*- shell-script -*-
#
# Copyright (c) 2026 The coll/async developers. All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
#
# coll/async: configure checks, shared by the in-tree build (Open MPI's configure
# calls MCA_ompi_coll_async_CONFIG) and the out-of-tree build (the project's own
# configure.ac calls it too). Plain autoconf only, so it works in both.
#
# MCA_ompi_coll_async_CONFIG([action-if-can-compile], [action-if-cant-compile])
# ------------------------------------------------------------------------------
AC_DEFUN([MCA_ompi_coll_async_CONFIG], [
    AC_CONFIG_FILES([ompi/mca/coll/async/Makefile])

    coll_async_CFLAGS=
    coll_async_CPPFLAGS=
    coll_async_LDFLAGS=
    coll_async_LIBS=
    # The plugin links libmpi, as Open MPI's own do, so that it loads where libmpi
    # was opened with RTLD_LOCAL. In tree libmpi's libtool library brings the rest;
    # the out-of-tree configure names the installed libraries instead.
    coll_async_mpi_LIBADD='$(top_builddir)/ompi/lib$(OMPI_LIBMPI_NAME).la'

    # rdma-core: the verbs transport needs libibverbs and librdmacm.
    COLL_ASYNC_CHECK_VERBS

    # The progress thread and CMA are Linux facilities.
    AC_CHECK_HEADER([pthread.h], [coll_async_happy=yes], [coll_async_happy=no])

    AS_IF([test "$coll_async_happy" = yes], [$1], [$2])

    AC_SUBST([coll_async_CFLAGS])
    AC_SUBST([coll_async_CPPFLAGS])
    AC_SUBST([coll_async_LDFLAGS])
    AC_SUBST([coll_async_LIBS])
    AC_SUBST([coll_async_mpi_LIBADD])
])dnl

# MCA_ompi_coll_async_POST_CONFIG(should-build)
# ---------------------------------------------
# Automake conditionals, which must be set on every configure run: Open MPI calls
# this even when it does not build the component, the out-of-tree configure after
# MCA_ompi_coll_async_CONFIG.
AC_DEFUN([MCA_ompi_coll_async_POST_CONFIG], [
    AM_CONDITIONAL([COLL_ASYNC_HAVE_VERBS],
                   [test "$1" = 1 && test "$coll_async_have_verbs" = yes])
])dnl

# COLL_ASYNC_CHECK_VERBS
# ----------------------
# Sets coll_async_have_verbs (yes or no), coll_async_verbs_summary ("yes" or
# "no (why)"), coll_async_verbs_LIBS, and, when found, -DCOLL_ASYNC_HAVE_VERBS=1
# in coll_async_CPPFLAGS. --without-verbs turns the transport off; --with-verbs
# makes a missing rdma-core an error; --with-verbs=DIR looks in DIR first. In an
# Open MPI tree the option is Open MPI's own --with-verbs, with the same meaning.
AC_DEFUN([COLL_ASYNC_CHECK_VERBS], [
    m4_ifdef([OPAL_CHECK_VERBS_DIR],
        [AC_REQUIRE([OPAL_CHECK_VERBS_DIR])],
        [AC_ARG_WITH([verbs],
            [AS_HELP_STRING([--with-verbs(=DIR)],
                [build the verbs RDMA transport (needs libibverbs and librdmacm from
                 rdma-core; default: when found), looking in DIR/include and DIR/lib
                 first; --without-verbs: never])])])

    coll_async_have_verbs=no
    coll_async_verbs_summary=
    coll_async_verbs_LIBS=
    coll_async_verbs_save_CPPFLAGS=$CPPFLAGS
    coll_async_verbs_save_LDFLAGS=$LDFLAGS
    coll_async_verbs_CPPFLAGS=
    coll_async_verbs_LDFLAGS=
    AS_CASE(["$with_verbs"],
        [no], [coll_async_verbs_summary="no (--without-verbs)"],
        [yes|""], [],
        [coll_async_verbs_CPPFLAGS="-I$with_verbs/include"
         coll_async_verbs_LDFLAGS="-L$with_verbs/lib -L$with_verbs/lib64"])

    AS_IF([test -z "$coll_async_verbs_summary"], [
        CPPFLAGS="$CPPFLAGS $coll_async_verbs_CPPFLAGS"
        LDFLAGS="$LDFLAGS $coll_async_verbs_LDFLAGS"
        AC_CHECK_HEADER([infiniband/verbs.h], [:],
            [coll_async_verbs_summary="no (infiniband/verbs.h not found: libibverbs-dev)"])
        AS_IF([test -z "$coll_async_verbs_summary"],
            [AC_CHECK_LIB([ibverbs], [ibv_open_device], [:],
                [coll_async_verbs_summary="no (libibverbs not found)"])])
        AS_IF([test -z "$coll_async_verbs_summary"],
            [AC_CHECK_HEADER([rdma/rdma_cma.h], [:],
                [coll_async_verbs_summary="no (rdma/rdma_cma.h not found: librdmacm-dev)"])])
        AS_IF([test -z "$coll_async_verbs_summary"],
            [AC_CHECK_LIB([rdmacm], [rdma_create_id], [:],
                [coll_async_verbs_summary="no (librdmacm not found)"], [-libverbs])])
        CPPFLAGS=$coll_async_verbs_save_CPPFLAGS
        LDFLAGS=$coll_async_verbs_save_LDFLAGS
        AS_IF([test -z "$coll_async_verbs_summary"],
              [coll_async_have_verbs=yes
               coll_async_verbs_summary=yes
               coll_async_verbs_LIBS="$coll_async_verbs_LDFLAGS -lrdmacm -libverbs"
               coll_async_CPPFLAGS="$coll_async_CPPFLAGS $coll_async_verbs_CPPFLAGS -DCOLL_ASYNC_HAVE_VERBS=1"
               coll_async_LIBS="$coll_async_LIBS $coll_async_verbs_LIBS"])
    ])
    AS_IF([test "$with_verbs" = yes && test "$coll_async_have_verbs" != yes],
          [AC_MSG_ERROR([--with-verbs: $coll_async_verbs_summary])])
    AC_MSG_CHECKING([whether coll/async builds its verbs transport])
    AC_MSG_RESULT([$coll_async_verbs_summary])
    AC_SUBST([coll_async_verbs_LIBS])
])dnl
