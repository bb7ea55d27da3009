#!/usr/bin/python3
# Copyright (c) 2026 The coll/async developers. All rights reserved.
#
# ULFM's agreement and shrink from Python (mpi4py 4's Comm.Agree, Iagree, Shrink
# and Ishrink, Debian 13's python3-mpi4py), as mpi4py's own tests call them and in
# the interleaving that once broke them: even ranks start an Iagree before a
# barrier that odd ranks call before theirs (an agreement is not one of the
# communicator's collectives). Every result is checked; with --counted, so is
# coll/async's counter of the agreements it ran (read through pvar_shim.so), and
# that a collective on each shrunk communicator ran natively.
#
#   mpirun -np N [--with-ft ulfm] --mca coll async python3 coll_mpi4py_ulfm.py \
#       PVAR_SHIM_SO [--counted]
# Prints "coll_mpi4py_ulfm: N checks passed" on rank 0 (or why nothing was
# checked: an mpi4py or Open MPI without ULFM); exits 1 on any failure.

import ctypes
import sys
from array import array

from mpi4py import MPI

world = MPI.COMM_WORLD
me, size = world.Get_rank(), world.Get_size()
counted = "--counted" in sys.argv[2:]
shim = ctypes.CDLL(sys.argv[1])
shim.pvar_open.argtypes = [ctypes.c_char_p]
shim.pvar_read.restype = ctypes.c_ulonglong
failures = []
checks = 0


def check(ok, what):
    global checks
    checks += 1
    if not ok:
        failures.append(what)
        print("coll_mpi4py_ulfm: rank %d: %s" % (me, what), file=sys.stderr, flush=True)


def flag_of(rank, k):
    """Every bit but one of rank's own: the AND is exact only with every flag in."""
    return ~(1 << ((rank + 3 * k) % 31)) & 0x7FFFFFFF


def want_of(k):
    want = 0x7FFFFFFF
    for rank in range(size):
        want &= flag_of(rank, k)
    return want


def counter(name):
    handle = shim.pvar_open(name.encode())
    check(handle >= 0, "no MPI_T counter %s: is coll/async loaded?" % name)
    return handle


def agree_tests(k):
    """mpi4py's own: Agree and Iagree on world and a dup, one after the other."""
    agreements = 0
    for comm in (world, world.Dup()):
        got = comm.Agree(flag_of(comm.Get_rank(), k))
        check(got == want_of(k), "Agree: %#x, expected %#x" % (got, want_of(k)))
        flag = array("i", [flag_of(comm.Get_rank(), k + 1)])
        comm.Iagree(flag).Wait()
        check(flag[0] == want_of(k + 1), "Iagree: %#x, expected %#x" % (flag[0], want_of(k + 1)))
        agreements += 2
        if comm != world:
            comm.Free()
    return agreements


def interleaved(k):
    """Even ranks start an Iagree before a barrier that odd ranks call first."""
    flag = array("i", [flag_of(me, k)])
    if me % 2 == 0:
        request = world.Iagree(flag)
        check(size == 1 or not request.Test(), "Iagree complete before the others joined")
        world.Barrier()
        request.Wait()
    else:
        world.Barrier()
        world.Iagree(flag).Wait()
    check(flag[0] == want_of(k), "interleaved Iagree: %#x, expected %#x" % (flag[0], want_of(k)))
    return 1


def shrink_tests(allreduce_native):
    """Shrink and Ishrink with no failure: the same ranks, whose collectives run."""
    for nonblocking in (False, True):
        if nonblocking:
            shrunk, request = world.Ishrink()
            request.Wait()
        else:
            shrunk = world.Shrink()
        check(shrunk.Get_size() == size, "%s: size %d" % ("Ishrink" if nonblocking else "Shrink",
                                                           shrunk.Get_size()))
        before = shim.pvar_read(allreduce_native) if counted else 0
        total = array("i", [0])
        shrunk.Allreduce(array("i", [shrunk.Get_rank()]), total, op=MPI.SUM)
        check(total[0] == size * (size - 1) // 2,
              "Allreduce on the shrunk communicator: %d" % total[0])
        if counted:
            check(shim.pvar_read(allreduce_native) > before,
                  "the shrunk communicator's allreduce did not run natively")
        shrunk.Free()


def main():
    if not hasattr(MPI.Comm, "Iagree"):
        if me == 0:
            print("coll_mpi4py_ulfm: mpi4py %s has no ULFM: nothing to check"
                  % __import__("mpi4py").__version__)
        return 0
    try:
        world.Agree(1)
    except (MPI.Exception, NotImplementedError) as error:
        if me == 0:
            print("coll_mpi4py_ulfm: this MPI has no agreement (%s): nothing to check" % error)
        return 0
    agreements = 1
    handle = counter("coll_async_agree_native") if counted else None
    start = shim.pvar_read(handle) if counted else 0
    allreduce_native = counter("coll_async_allreduce_native") if counted else None
    for k in range(10):
        agreements += agree_tests(2 * k)
        agreements += interleaved(2 * k + 1)
    shrink_tests(allreduce_native)
    if counted:
        # The agreements above, and those the shrinks made themselves.
        moved = shim.pvar_read(handle) - start
        check(moved >= agreements - 1, "coll_async_agree_native moved by %d, expected at least %d"
              % (moved, agreements - 1))
    bad = world.allreduce(len(failures), op=MPI.SUM)
    if me == 0:
        print("coll_mpi4py_ulfm: %d checks passed" % checks if bad == 0 else
              "coll_mpi4py_ulfm: %d failures" % bad)
    return 0 if bad == 0 else 1


sys.exit(main())
