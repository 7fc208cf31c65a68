"""Stage: a run, from options to results.

Takes a primitive, a graph and the run options; places the run on its devices
(one, several worker threads, or MPI ranks), builds or reuses the parts,
drives the supersteps and collects the results in the caller's ids.
:mod:`~mgraph.runner.options` checks the options once,
:mod:`~mgraph.runner.launch` is the one run path, :mod:`~mgraph.runner.workers`
what differs between one device, threads and ranks,
:mod:`~mgraph.runner.owners` who owns each vertex, and
:mod:`~mgraph.runner.enactor` the superstep loop and the primitive contract's
checks.  (Named ``runner`` rather than ``run`` because ``mgraph.run`` is the
public function that runs a user's primitive.)
"""
