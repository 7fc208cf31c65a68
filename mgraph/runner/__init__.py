"""Stage: a run, from options to results.

Takes a primitive, a graph and the run options; places the run on its devices
(one, several worker threads, or MPI ranks), builds or reuses the parts,
drives the supersteps and collects the results in the caller's ids.
:mod:`~mgraph.runner.launch` is the run path, :mod:`~mgraph.runner.enactor` the
superstep loop and the primitive contract's checks.  (Named ``runner`` rather
than ``run`` because ``mgraph.run`` is the public function that runs a user's
primitive.)
"""
