"""Stage: a graph split into parts, each built where it runs.

Takes an edge source (:mod:`mgraph.io`) and an owner for every vertex
(:mod:`mgraph.partitioners`); gives each worker its
:class:`~mgraph.parts.subgraph.SubGraph`: its own vertices, proxies of the
others (duplicate-1-hop or duplicate-all) and the id maps both ways.
:mod:`~mgraph.parts.build` builds a part without any worker holding the whole
graph; :mod:`~mgraph.parts.partitioned` is a graph nobody holds whole (MPI);
:mod:`~mgraph.parts.loading` is ``mgraph.load``; :mod:`~mgraph.parts.proxyarcs`
fetches proxies' arcs for primitives that read them (triangles).
"""
