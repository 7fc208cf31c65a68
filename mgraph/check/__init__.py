"""Stage: checking results against references nobody here wrote.

Takes a graph (whole, or this rank's part) and a result; gives a verdict.
:mod:`~mgraph.check.validate` holds Graph500's rules and the CPU references
(scipy, a sparse peeling, Brandes) on one process; :mod:`~mgraph.check.parts`
the same rules checked by every rank on its own part, where no rank holds the
graph; :mod:`~mgraph.check.runs` the one entry point for a run's result
(``checker(name, graph)``), which picks between them.
"""
