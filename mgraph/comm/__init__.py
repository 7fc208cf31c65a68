"""Stage: the exchange between devices.

Takes a primitive's frontier and the values it declared on each device's part
(:mod:`mgraph.parts`); gives each device the frontier vertices it owns or keeps
proxies of, with their values combined.  :class:`~mgraph.comm.exchange.Exchange`
runs a hop (split, package, push, combine); :mod:`~mgraph.comm.plan` decides
which hops a superstep needs; :mod:`~mgraph.comm.kernels` holds the split,
package and merge kernels; :mod:`~mgraph.comm.transport` and
:mod:`~mgraph.comm.mpi` move packages between threads, MPI ranks and NCCL.
"""
