#
# Copyright (c) 2026 The coll/async developers. All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# COLL_ASYNC_INSTALL_DIR
# ----------------------
# Chooses where 'make install' puts mca_coll_async.so (ompilibdir) and its help text
# (ompidatadir, the same directory: the component adds its own directory to Open MPI's
# help search path at run time):
#   --with-component-dir=DIR   exactly there;
#   --prefix=PREFIX            PREFIX/lib/openmpi (then add it to mca_component_path);
#   neither                    Open MPI's pkglibdir when writable, else
#                              ~/.openmpi/components, both on Open MPI's default path.
AC_DEFUN([COLL_ASYNC_INSTALL_DIR], [
    AC_ARG_WITH([component-dir],
        [AS_HELP_STRING([--with-component-dir=DIR],
            [install mca_coll_async.so into DIR (default: Open MPI's pkglibdir when
             writable, else ~/.openmpi/components; with --prefix, PREFIX/lib/openmpi)])])

    coll_async_ompi_pkglibdir=`$OMPI_INFO --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p'`
    AC_MSG_CHECKING([where to install the component])
    AS_IF([test -n "$with_component_dir" && test "$with_component_dir" != yes],
              [ompilibdir=$with_component_dir],
          [test "$prefix" != NONE],
              [ompilibdir='${libdir}/openmpi'],
          [test -w "$coll_async_ompi_pkglibdir"],
              [ompilibdir=$coll_async_ompi_pkglibdir],
              [ompilibdir='${HOME}/.openmpi/components'])
    AC_MSG_RESULT([$ompilibdir])
    ompidatadir=$ompilibdir
    AC_SUBST([ompilibdir])
    AC_SUBST([ompidatadir])
])
