#!/usr/bin/python3
# Copyright (c) 2026 The coll/async developers. All rights reserved.
#
# coll/async from a host nobody here wrote: Python, through Debian's python3-mpi4py
# (3.1.4 on Debian 12, 4.0.3 on Debian 13), which loads libmpi as an extension
# module's dependency, with RTLD_LOCAL. Every collective family, blocking,
# nonblocking and (where mpi4py and Open MPI have them) persistent, on
# COMM_WORLD, a dup, two splits and an intercommunicator between the halves;
# each result is checked against what this rank computes itself, and each call
# against coll/async's MPI_T counter of its native path (read through
# pvar_shim.so, since mpi4py has no MPI_T).
#
#   mpirun -np N --mca coll async python3 coll_mpi4py.py PVAR_SHIM_SO
# Prints "coll_mpi4py: N checks passed" on rank 0; exits 1 on any failure.

import ctypes
import sys
from array import array

from mpi4py import MPI

world = MPI.COMM_WORLD
shim = ctypes.CDLL(sys.argv[1])
shim.pvar_open.argtypes = [ctypes.c_char_p]
shim.pvar_read.restype = ctypes.c_ulonglong
failures = []
checks = 0


def fail(what):
    failures.append(what)
    print("coll_mpi4py: rank %d: %s" % (world.Get_rank(), what), file=sys.stderr, flush=True)


class Counter:
    """The calls coll/async ran natively for one family and form since creation."""

    handles = {}

    def __init__(self, family, form):
        prefix = "i" if form == "nonblocking" else ""
        suffix = "_init" if form == "persistent" else ""
        self.name = "coll_async_%s%s%s_native" % (prefix, family, suffix)
        if self.name not in Counter.handles:
            handle = shim.pvar_open(self.name.encode())
            if handle < 0:
                fail("no MPI_T counter %s: is coll/async loaded?" % self.name)
            Counter.handles[self.name] = handle
        self.handle = Counter.handles[self.name]
        self.start = shim.pvar_read(self.handle)

    def moved(self):
        return shim.pvar_read(self.handle) - self.start


def ints(values):
    return array("i", values)


FORMS = ["blocking", "nonblocking"]
if hasattr(MPI.Comm, "Allreduce_init"):
    FORMS.append("persistent")


def call(comm, form, name, *args):
    """Runs collective name in form: Allreduce, Iallreduce or Allreduce_init."""
    if form == "blocking":
        getattr(comm, name)(*args)
    elif form == "nonblocking":
        getattr(comm, "I" + name[0].lower() + name[1:])(*args).Wait()
    else:
        request = getattr(comm, name + "_init")(*args)
        request.Start()
        request.Wait()
        request.Free()


def check(comm, label, family, name, args, result, expected, calls=1):
    """Runs family in every form on comm, checking result against expected and
    that coll/async ran it (calls: 0 where Open MPI's MPI layer answers itself)."""
    global checks
    for form in FORMS:
        for i in range(len(result)):
            result[i] = -7
        counter = Counter(family, form)
        call(comm, form, name, *args)
        checks += 1
        if list(result) != list(expected):
            fail("%s %s %s: got %s, expected %s" % (label, form, family, list(result)[:8],
                                                     list(expected)[:8]))
        if counter.moved() != calls:
            fail("%s %s %s: %s moved by %d, not %d" % (label, form, family, counter.name,
                                                       counter.moved(), calls))


def intra(comm, label):
    n, me = comm.Get_size(), comm.Get_rank()
    k = 3  # elements per rank
    mine = ints([100 * me + i for i in range(k)])
    out = ints([0] * k)
    sums = [sum(100 * r + i for r in range(n)) for i in range(k)]
    check(comm, label, "allreduce", "Allreduce", ([mine, MPI.INT], [out, MPI.INT], MPI.SUM),
          out, sums)
    root = n - 1
    check(comm, label, "reduce", "Reduce", ([mine, MPI.INT], [out, MPI.INT], MPI.SUM, root),
          out, sums if me == root else [-7] * k)
    buf = ints([0] * k)
    bcast_args = ([buf, MPI.INT], root)
    for form in FORMS:  # the input is the buffer: set before each form
        for i in range(k):
            buf[i] = 5 * i + 1 if me == root else -1
        counter = Counter("bcast", form)
        call(comm, form, "Bcast", *bcast_args)
        global checks
        checks += 1
        # On one rank Open MPI's MPI layer answers some forms of bcast and barrier
        # itself, which differ between versions: the counter is not checked there.
        if list(buf) != [5 * i + 1 for i in range(k)] or (n > 1 and counter.moved() != 1):
            fail("%s %s bcast: got %s, counter %d" % (label, form, list(buf), counter.moved()))
    for form in FORMS:
        counter = Counter("barrier", form)
        call(comm, form, "Barrier")
        checks += 1
        if n > 1 and counter.moved() != 1:
            fail("%s %s barrier: counter moved by %d" % (label, form, counter.moved()))
    every = [100 * r + i for r in range(n) for i in range(k)]
    allk = ints([0] * (n * k))
    check(comm, label, "allgather", "Allgather", ([mine, MPI.INT], [allk, MPI.INT]), allk, every)
    counts = [k] * n
    displs = [k * r for r in range(n)]
    check(comm, label, "allgatherv", "Allgatherv",
          ([mine, MPI.INT], [allk, (counts, displs), MPI.INT]), allk, every)
    check(comm, label, "gather", "Gather", ([mine, MPI.INT], [allk, MPI.INT], root), allk,
          every if me == root else [-7] * (n * k))
    check(comm, label, "gatherv", "Gatherv",
          ([mine, MPI.INT], [allk, (counts, displs), MPI.INT], root), allk,
          every if me == root else [-7] * (n * k))
    table = ints([1000 * me + j for j in range(n * k)])  # block r goes to rank r
    check(comm, label, "scatter", "Scatter", ([table, MPI.INT], [out, MPI.INT], 0),
          out, [j for j in range(me * k, me * k + k)])
    check(comm, label, "scatterv", "Scatterv",
          ([table, (counts, displs), MPI.INT], [out, MPI.INT], 0), out,
          [j for j in range(me * k, me * k + k)])
    swapped = [1000 * r + me * k + i for r in range(n) for i in range(k)]
    check(comm, label, "alltoall", "Alltoall", ([table, MPI.INT], [allk, MPI.INT]), allk,
          swapped)
    check(comm, label, "alltoallv", "Alltoallv",
          ([table, (counts, displs), MPI.INT], [allk, (counts, displs), MPI.INT]), allk, swapped)
    byte_displs = [4 * d for d in displs]
    check(comm, label, "alltoallw", "Alltoallw",
          ([table, (counts, byte_displs), [MPI.INT] * n],
           [allk, (counts, byte_displs), [MPI.INT] * n]), allk, swapped)
    folded = [sum(1000 * r + me * k + i for r in range(n)) for i in range(k)]
    check(comm, label, "reduce_scatter_block", "Reduce_scatter_block",
          ([table, MPI.INT], [out, MPI.INT], MPI.SUM), out, folded)
    check(comm, label, "reduce_scatter", "Reduce_scatter",
          ([table, MPI.INT], [out, MPI.INT], counts, MPI.SUM), out, folded)
    prefix = [sum(100 * r + i for r in range(me + 1)) for i in range(k)]
    check(comm, label, "scan", "Scan", ([mine, MPI.INT], [out, MPI.INT], MPI.SUM), out, prefix)
    if me > 0:
        exclusive = [sum(100 * r + i for r in range(me)) for i in range(k)]
        check(comm, label, "exscan", "Exscan", ([mine, MPI.INT], [out, MPI.INT], MPI.SUM), out,
              exclusive)
    else:  # rank 0's result is undefined: run the call, check the counter only
        for form in FORMS:
            counter = Counter("exscan", form)
            call(comm, form, "Exscan", [mine, MPI.INT], [out, MPI.INT], MPI.SUM)
            if counter.moved() != 1:
                fail("%s %s exscan: counter moved by %d" % (label, form, counter.moved()))


def inter(comm, label, low):
    """comm: an intercommunicator; low: whether this rank is in the low half."""
    n, me, m = comm.Get_size(), comm.Get_rank(), comm.Get_remote_size()
    k = 2
    mine = ints([10 * world.Get_rank() + i for i in range(k)])
    out = ints([0] * k)
    remote = range(n, n + m) if low else range(0, m)  # world ranks
    check(comm, label, "allreduce", "Allreduce", ([mine, MPI.INT], [out, MPI.INT], MPI.SUM),
          out, [sum(10 * r + i for r in remote) for i in range(k)])
    allk = ints([0] * (m * k))
    check(comm, label, "allgather", "Allgather", ([mine, MPI.INT], [allk, MPI.INT]), allk,
          [10 * r + i for r in remote for i in range(k)])
    # Rooted: the low group's rank 0 is the root, the high group receives.
    root = (MPI.ROOT if me == 0 else MPI.PROC_NULL) if low else 0
    check(comm, label, "reduce", "Reduce", ([mine, MPI.INT], [out, MPI.INT], MPI.SUM, root), out,
          [sum(10 * r + i for r in remote) for i in range(k)] if low and me == 0 else [-7] * k,
          calls=int(root != MPI.PROC_NULL))
    table = ints([7 * me + j for j in range(m * k)])
    check(comm, label, "alltoall", "Alltoall", ([table, MPI.INT], [allk, MPI.INT]), allk,
          [7 * r + me * k + i for r in range(m) for i in range(k)])
    for form in FORMS:
        counter = Counter("barrier", form)
        call(comm, form, "Barrier")
        if counter.moved() != 1:
            fail("%s %s barrier: counter moved by %d" % (label, form, counter.moved()))


size, rank = world.Get_size(), world.Get_rank()
intra(world, "COMM_WORLD")
dup = world.Dup()
intra(dup, "dup")
half = world.Split(rank % 2, rank)
intra(half, "split by parity")
backwards = world.Split(0, size - rank)
intra(backwards, "split in reverse order")
if size >= 2:
    low = rank < size // 2
    local = world.Split(0 if low else 1, rank)
    intercomm = local.Create_intercomm(0, world, size // 2 if low else 0, 77)
    inter(intercomm, "intercommunicator", low)
    for comm in (intercomm, local):
        comm.Free()
for comm in (dup, half, backwards):
    comm.Free()

failed = world.allreduce(len(failures), op=MPI.SUM)
if rank == 0:
    print("coll_mpi4py: mpi4py %s, %s, forms %s: %d checks on rank 0, %d failures in all"
          % (__import__("mpi4py").__version__, MPI.Get_library_version().split(",")[0],
             "/".join(FORMS), checks, failed), flush=True)
sys.exit(1 if failed else 0)
