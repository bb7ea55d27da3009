# -*- shell-script -*-
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

    # rdma-core verbs: optional, for the RDMA transports.
    coll_async_have_verbs=no
    AC_CHECK_HEADER([infiniband/verbs.h],
        [AC_CHECK_LIB([ibverbs], [ibv_open_device], [coll_async_have_verbs=yes])])
    AS_IF([test "$coll_async_have_verbs" = yes],
          [coll_async_CPPFLAGS="$coll_async_CPPFLAGS -DCOLL_ASYNC_HAVE_VERBS=1"
           coll_async_LIBS="$coll_async_LIBS -libverbs"])

    # The progress thread and CMA are Linux facilities.
    AC_CHECK_HEADER([pthread.h], [coll_async_happy=yes], [coll_async_happy=no])

    AS_IF([test "$coll_async_happy" = yes], [$1], [$2])

    AC_SUBST([coll_async_CFLAGS])
    AC_SUBST([coll_async_CPPFLAGS])
    AC_SUBST([coll_async_LDFLAGS])
    AC_SUBST([coll_async_LIBS])
])dnl
