#!/usr/bin/env python3
#
# Copyright (c) 2026 The coll/async developers. All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# The component's objects in link-level dependency cycles: object A depends on B
# when A uses a symbol B defines (nm). Prints the strongly connected components;
# with --edges, also each cycle's edges (what each member uses of the others).
#
# Usage: tools/linkcycles.py [--edges] <build>/ompi/mca/coll/async/.libs \
#            <build>/ompi/mca/coll/async/transport/.libs
import subprocess, sys, os, glob, collections
show_edges = "--edges" in sys.argv
sys.argv = [a for a in sys.argv if a != "--edges"]
objs = sorted(sum((glob.glob(os.path.join(d, "*.o")) for d in sys.argv[1:]), []))
defs, uses = {}, collections.defaultdict(set)
for o in objs:
    name = os.path.basename(o)[:-2]
    for line in subprocess.run(['nm', o], capture_output=True, text=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in 'TDBRCVW':
            defs[parts[2]] = name
        elif len(parts) == 2 and parts[0] == 'U':
            uses[name].add(parts[1])
g = {n: set() for n in (os.path.basename(o)[:-2] for o in objs)}
for n, syms in uses.items():
    for s in syms:
        d = defs.get(s)
        if d and d != n:
            g[n].add(d)
# Tarjan
idx, low, st, on, out, c = {}, {}, [], set(), [], [0]
def sc(v):
    idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
    for w in g[v]:
        if w not in idx: sc(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        comp = []
        while True:
            w = st.pop(); on.discard(w); comp.append(w)
            if w == v: break
        out.append(comp)
sys.setrecursionlimit(10000)
for v in g:
    if v not in idx: sc(v)
cyc = [sorted(x) for x in out if len(x) > 1]
print("objects:", len(g), " in cycles:", sum(len(x) for x in cyc))
for x in cyc: print(len(x), " ".join(x))
if show_edges:
    for x in cyc:
        for n in x:
            for s in sorted(uses[n]):
                d = defs.get(s)
                if d in x and d != n:
                    print("  %s -> %s (%s)" % (n, d, s))
