#!/usr/bin/python3
# Copyright (c) 2026 The coll/async developers. All rights reserved.
#
# MPI_THREAD_MULTIPLE from Python threads (Debian's python3-mpi4py, which releases
# the interpreter's lock inside MPI calls): four threads, each with a parent
# communicator of its own, create communicators from it (Dup, Split, Create_group,
# Idup where mpi4py has it) and free them, running blocking and nonblocking
# allreduces on each and on their parent at once. Every result is checked, and
# coll/async's MPI_T counters (read through pvar_shim.so) must count every
# allreduce as native and none as delegated.
#
#   mpirun -np N --mca coll async python3 coll_mpi4py_threads.py PVAR_SHIM_SO [ROUNDS]
# Prints "coll_mpi4py_threads: N checks passed" on rank 0; exits 1 on any failure.

import ctypes
import sys
import threading
from array import array

import mpi4py

mpi4py.rc.thread_level = "multiple"
from mpi4py import MPI  # noqa: E402  (after choosing the thread level)

world = MPI.COMM_WORLD
me, size = world.Get_rank(), world.Get_size()
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 40
shim = ctypes.CDLL(sys.argv[1])
shim.pvar_open.argtypes = [ctypes.c_char_p]
shim.pvar_read.restype = ctypes.c_ulonglong
THREADS = 4
lock = threading.Lock()
failures = []
counts = {"checks": 0, "allreduce": 0, "iallreduce": 0}


def check(ok, what):
    with lock:
        counts["checks"] += 1
        if not ok:
            failures.append(what)
            print("coll_mpi4py_threads: rank %d: %s" % (me, what), file=sys.stderr, flush=True)


def allreduce(comm, value, nonblocking):
    # The input kept until the request is done: mpi4py 3 does not hold it.
    mine, out = array("i", [value]), array("i", [0])
    if nonblocking:
        comm.Iallreduce(mine, out, op=MPI.SUM).Wait()
    else:
        comm.Allreduce(mine, out, op=MPI.SUM)
    with lock:
        counts["iallreduce" if nonblocking else "allreduce"] += 1
    return out[0]


def make(parent, how):
    if how == 0:
        return parent.Dup()
    if how == 1:
        return parent.Split(0, size - parent.Get_rank())
    if how == 2 and hasattr(parent, "Idup"):
        comm, request = parent.Idup()
        request.Wait()
        return comm
    return parent.Create_group(parent.Get_group())


def work(tid, parent):
    for k in range(rounds):
        comm = make(parent, (k + tid) % 4)
        n, r = comm.Get_size(), comm.Get_rank()
        got = allreduce(comm, (r + 1) * (tid + 1) + k, k % 2 == 1)
        want = (tid + 1) * n * (n + 1) // 2 + n * k
        check(got == want, "thread %d round %d: allreduce %d, expected %d" % (tid, k, got, want))
        got = allreduce(parent, tid + k, k % 2 == 0)
        check(got == size * (tid + k), "thread %d round %d: parent's allreduce %d" % (tid, k, got))
        comm.Free()


def main():
    check(MPI.Query_thread() == MPI.THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided")
    parents = [world.Dup() for _ in range(THREADS)]
    handles = {}
    for name in ("allreduce", "iallreduce"):
        for path in ("native", "delegated"):
            counter = "coll_async_%s_%s" % (name, path)
            handles[counter] = shim.pvar_open(counter.encode())
            check(handles[counter] >= 0, "no MPI_T counter %s: is coll/async loaded?" % counter)
    before = {name: shim.pvar_read(h) for name, h in handles.items()}
    threads = [threading.Thread(target=work, args=(t, parents[t])) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    moved = {name: shim.pvar_read(h) - before[name] for name, h in handles.items()}
    check(moved["coll_async_allreduce_native"] == counts["allreduce"]
          and moved["coll_async_allreduce_delegated"] == 0,
          "allreduce counters moved %s for %d calls" % (moved, counts["allreduce"]))
    # Open MPI's communicator creation adds iallreduces of its own on the parents.
    check(moved["coll_async_iallreduce_native"] >= counts["iallreduce"]
          and moved["coll_async_iallreduce_delegated"] == 0,
          "iallreduce counters moved %s for %d calls" % (moved, counts["iallreduce"]))
    for parent in parents:
        parent.Free()
    bad = world.allreduce(len(failures), op=MPI.SUM)
    if me == 0:
        print("coll_mpi4py_threads: %d checks passed" % counts["checks"] if bad == 0 else
              "coll_mpi4py_threads: %d failures" % bad)
    return 0 if bad == 0 else 1


sys.exit(main())
