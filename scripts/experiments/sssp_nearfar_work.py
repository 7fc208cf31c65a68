"""SSSP work on the CPU: arcs relaxed by frontier Bellman-Ford vs a near/far split for several deltas.

Counts work, not time, with the NumPy operators: PYTHONPATH=$PWD python3 scripts/experiments/sssp_nearfar_work.py
"""
import numpy as np
from mgraph import generators
from mgraph.ops import numpy_ops as K
g = generators.rmat(17, seed=0, weights=(1, 64))
deg = np.diff(g.indptr); s = int(np.argmax(deg > 0))
def bf():
    n=g.num_vertices; d=np.full(n,np.inf); d[s]=0; marks=np.zeros(n,np.int32); f=np.array([s],g.indices.dtype); work=0; steps=0
    while len(f):
        work += int(deg[f].sum()); steps+=1; f=K.advance_relax(g,f,d,marks,steps)
    return d, work, steps
def nearfar(delta):
    n=g.num_vertices; d=np.full(n,np.inf); d[s]=0; marks=np.zeros(n,np.int32); f=np.array([s],g.indices.dtype); far=np.empty(0,f.dtype)
    bound=delta; work=0; steps=0
    while True:
        while len(f):
            work += int(deg[f].sum()); steps+=1
            new=K.advance_relax(g,f,d,marks,steps)
            near = d[new] < bound
            f=new[near]; far=np.concatenate([far,new[~near]])
        if not len(far): break
        far = np.unique(far); 
        while len(far) and not len(f):
            bound += delta
            m = d[far] < bound
            f, far = far[m], far[~m]
    return d, work, steps
d0,w,st=bf(); print("BF work", w, "arcs", g.num_arcs, "ratio", w/g.num_arcs, "steps", st)
for delta in (8, 16, 32, 64, 128):
    d1,w1,st1=nearfar(delta); assert np.array_equal(d0,d1); print("NF delta",delta,"work",w1,"ratio",round(w1/g.num_arcs,2),"steps",st1)
