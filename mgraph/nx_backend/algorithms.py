"""The networkx functions the backend runs, gathered from their modules, and the test ``can_run`` applies.

Each answers exactly as networkx does: the same return types (dicts in
networkx's node order, generators, sets, networkx graphs, ints, bools,
Python numbers: never NumPy scalars), the same exceptions for the same
mistakes, the same numbers within networkx's own tolerances.  Where mgraph
cannot give networkx's answer, the function raises NotImplementedError (after
:func:`declines` has said so where it can tell from the arguments), and
networkx runs the call itself when ``nx.config.fallback_to_nx`` is set.
docs/networkx.md lists them, with what each does on several devices.
"""
from __future__ import annotations

import inspect

from mgraph.nx_backend import centrality, paths, structure, traversal

FUNCTIONS = {f.__name__: f for module in (traversal, paths, centrality, structure) for f in module.FUNCTIONS}
"""name -> backend function: what ``backend_interface`` exposes to networkx."""


def declines(name: str, args, kwargs):
    """Why the backend cannot run networkx's ``name`` with these arguments (a string), or None where it can.

    The arguments are bound to the function's signature (defaults applied)
    and handed to its ``declines`` test; a call networkx itself will refuse
    (a wrong signature) is declined with the binding's message.
    """
    fn = FUNCTIONS.get(name)
    if fn is None:
        return f"mgraph does not implement {name}"
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:  # networkx will raise its own error for the call
        return str(e)
    bound.apply_defaults()
    test = getattr(fn, "declines", None)
    return None if test is None else test(bound.arguments)
