#
# Copyright (c) 2026 The coll/async developers. All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# COLL_ASYNC_CHECK_CMOCKA
# -----------------------
# cmocka runs the unit tests of the code that needs no MPI ('make check').
AC_DEFUN([COLL_ASYNC_CHECK_CMOCKA], [
    coll_async_have_cmocka=no
    AC_CHECK_HEADER([cmocka.h],
        [AC_CHECK_LIB([cmocka], [_cmocka_run_group_tests], [coll_async_have_cmocka=yes])],
        [], [[#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>]])
    AM_CONDITIONAL([COLL_ASYNC_HAVE_CMOCKA], [test "$coll_async_have_cmocka" = yes])
])
