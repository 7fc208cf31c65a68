"""Bounded runs: devices beyond what can exist fail before any thread or allocation, every run has a superstep
bound, devices that disagree on convergence stop where they first disagree, and what is not a primitive (or a
combine function that returns the wrong values) is a ValueError naming it, the same on 1 device and on 3 threads
(tests/test_mpi.py runs the same cases on 3 MPI ranks)."""
from __future__ import annotations

import functools
import threading
import time

import numpy as np
import pytest

import broken_primitives as B
import mgraph
from mgraph.primitives.bc import BC
from mgraph.primitives.bfs import BFS
from mgraph.primitives.contract import ContractError
from mgraph.runner import options


@pytest.fixture(scope="module")
def grid():
    return mgraph.load("grid:6x6")  # 36 vertices, diameter 10


def fails_fast(call, match):
    """``call()`` raises a ValueError matching ``match`` within a second, starting no thread."""
    before, t = threading.active_count(), time.monotonic()
    with pytest.raises(ValueError, match=match) as info:
        call()
    assert time.monotonic() - t < 1.0
    assert threading.active_count() == before
    assert type(info.value) is ValueError and "\n" not in str(info.value)
    return str(info.value)


# -- devices ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("devices", [10**6, 1000, 37, 2**63, np.int64(10**6), np.uint64(2**63), [0] * 1000],
                         ids=["1e6", "1000", "37", "2^63", "np.int64", "np.uint64", "list-of-1000"])
def test_more_devices_than_vertices_fail_fast(grid, devices):
    count = devices if not isinstance(devices, list) else len(devices)
    for call in (lambda: mgraph.bfs(grid, 0, devices=devices), lambda: mgraph.pagerank(grid, devices=devices),
                 lambda: mgraph.run(B.Spin, grid, devices=devices)):
        message = fails_fast(call, rf"^devices={count} for a graph of 36 vertices: ")
        assert message.endswith("so this one runs on at most 36")


def test_as_many_devices_as_vertices_run(grid):
    r = mgraph.bfs(grid, 0, devices=36)
    np.testing.assert_array_equal(r.depth, mgraph.bfs(grid, 0).depth)
    assert r.stats["owned_vertices"] and sum(r.stats["owned_vertices"]) == 36


def test_threads_beyond_the_limit_fail_fast(grid, monkeypatch):
    monkeypatch.setattr(options, "THREADS_MAX", 4)
    message = fails_fast(lambda: mgraph.bfs(grid, 0, devices=5), r"^devices=5: one process runs each device in a "
                                                                  r"worker thread and starts at most 4; ")
    assert "mpiexec" in message
    assert mgraph.bfs(grid, 0, devices=4).depth.tolist() == mgraph.bfs(grid, 0).depth.tolist()


def test_the_thread_limit_follows_the_process_limit(monkeypatch):
    running = threading.active_count()
    monkeypatch.setattr(options.resource, "getrlimit", lambda what: (running + 10, running + 10))
    assert options.thread_limit() == 10
    monkeypatch.setattr(options.resource, "getrlimit", lambda what: (options.resource.RLIM_INFINITY,) * 2)
    assert options.thread_limit() == options.THREADS_MAX


# -- the superstep bound -----------------------------------------------------------------------------

@pytest.mark.parametrize("value", [0, -1, 1.5, True, "10", np.float64(3)])
def test_max_supersteps_must_be_a_positive_integer(grid, value):
    fails_fast(lambda: mgraph.bfs(grid, 0, max_supersteps=value), r"^max_supersteps must be a positive integer")


def test_the_default_bound_is_a_function_of_the_vertex_count():
    assert options.default_max_supersteps(36) == 4 * 36 + 1000
    assert options.default_max_supersteps(0) == 1000
    assert options.default_max_supersteps(10**9) == 4 * 10**9 + 1000


@pytest.mark.parametrize("devices", [1, 3])
def test_a_primitive_that_never_converges_ends_at_the_default_bound(grid, devices):
    with pytest.raises(ContractError, match=r"^Spin\.iterate on device \d, superstep 1143, phase 0: no end after "
                                            r"max_supersteps=1144 supersteps of one run \(36 vertices in the last "
                                            r"frontier\)"):
        mgraph.run(B.Spin, grid, devices=devices)


@pytest.mark.parametrize("devices", [1, 3])
def test_the_bound_is_a_run_option(grid, devices):
    with pytest.raises(ContractError, match=r"^Spin\.iterate on device \d, superstep 29, phase 0: no end after "
                                            r"max_supersteps=30 supersteps"):
        mgraph.run(B.Spin, grid, devices=devices, max_supersteps=30)
    # the phase is named, with the primitive's own name for it where it has one
    with pytest.raises(ContractError, match=r"^Phases\.iterate on device \d, superstep 29, phase 29 \('again'\): no "
                                            r"end after max_supersteps=30"):
        mgraph.run(B.Phases, grid, devices=devices, max_supersteps=30)


@pytest.mark.parametrize("devices", [1, 3])
def test_the_bound_counts_the_supersteps_of_each_source(grid, devices):
    need = mgraph.bfs(grid, 0, devices=devices).stats["supersteps"]
    r = mgraph.bfs(grid, 0, devices=devices, max_supersteps=need)
    assert r.depth.max() == 10 and r.stats["supersteps"] == need
    with pytest.raises(ContractError, match=rf"^BFS\.iterate on device \d, superstep {need - 2}, phase 0: no end "
                                            rf"after max_supersteps={need - 1} supersteps of one run from source 0"):
        mgraph.bfs(grid, 0, devices=devices, max_supersteps=need - 1)
    one = mgraph.betweenness_centrality(grid, sources=[0], devices=devices).stats["supersteps"]
    two = mgraph.betweenness_centrality(grid, sources=[0, 0], devices=devices, max_supersteps=one)
    assert two.stats["supersteps"] == 2 * one  # each source's run is bounded, not their sum
    with pytest.raises(ContractError, match=r"^BC\.iterate .*, phase 1 \('backward'\): no end after"):
        mgraph.run(BC, grid, sources=[0], devices=devices, max_supersteps=one - 1)


def test_pageranks_own_limit_raises_the_default_bound(grid):
    with pytest.warns(RuntimeWarning, match="did not converge in 2000 iterations"):
        r = mgraph.pagerank(grid, tol=1e-300, max_iter=2000)  # more than the default bound of 36 vertices, 1144
    assert r.stats["iterations"] == 2000 and r.stats["supersteps"] == 2002
    with pytest.raises(ContractError, match=r"^PageRank\.iterate on device 0, superstep 99, phase 0: no end after "
                                            r"max_supersteps=100"):
        mgraph.pagerank(grid, tol=1e-300, max_iter=2000, max_supersteps=100)  # but a bound given wins


# -- devices that disagree -------------------------------------------------------------------------------

def test_devices_that_disagree_on_finishing_stop_where_they_first_disagree(grid):
    assert mgraph.run(B.Finishing, grid).stats["supersteps"] == 2  # one device: nothing to disagree with
    before = threading.active_count()
    with pytest.raises(ContractError, match=r"^Finishing\.next_phase on device \d, superstep 0, phase 0: the devices "
                                            r"disagree on convergence: devices \[0\] finished \(next_phase returned "
                                            r"None\) and devices \[1, 2\] began another phase"):
        mgraph.run(B.Finishing, grid, devices=3)
    assert threading.active_count() == before


def test_devices_that_share_different_totals_disagree(grid):
    assert mgraph.run(B.Totals, grid).stats["supersteps"] == 2
    with pytest.raises(ContractError, match=r"^Totals\.converged on device \d, superstep 0, phase 0: the devices "
                                            r"disagree on convergence: devices \[1\] shared global_sums/global_mins "
                                            r"\(\{1: 1\} values\) and devices \[0, 2\] other totals or none"):
        mgraph.run(B.Totals, grid, devices=3)


# -- what a run gets from the user -------------------------------------------------------------------------

@pytest.mark.parametrize("devices", [1, 3])
@pytest.mark.parametrize("make, message", [
    (lambda g: None, r"^primitive <lambda> returned NoneType, not a Primitive: pass a Primitive subclass or a "
                     r"function graph -> Primitive"),
    (lambda g: object(), r"^primitive <lambda> returned object, not a Primitive"),
    (int, r"^primitive must be a Primitive subclass or a function graph -> Primitive, got the class int, which is "
          r"not a Primitive"),
    (functools.partial(dict), r"^primitive must be a Primitive subclass .* got the class dict"),
    ("bfs", r"^primitive must be a Primitive subclass or a function graph -> Primitive, got 'bfs'"),
], ids=["returns-None", "returns-object", "class-int", "partial-dict", "string"])
def test_run_refuses_what_is_not_a_primitive(grid, make, message, devices):
    fails_fast(lambda: mgraph.run(make, grid, devices=devices), message)


def test_a_factory_that_returns_a_primitive_runs(grid):
    r = mgraph.run(lambda g: BFS(g, direction="pull"), grid, 0, devices=3)
    np.testing.assert_array_equal(r.depth, mgraph.bfs(grid, 0).depth)


@pytest.mark.parametrize("devices", [1, 3])
@pytest.mark.parametrize("prim, message", [
    (B.FirstValueOnly, r"^FirstValueOnly\.combine on device \d, superstep 0: 'hops''s combine function "
                       r"first_value_only returned shape \(1,\) for 2 local values; it returns one combined value per "
                       r"local value$"),
    (B.AsFloats, r"^AsFloats\.combine on device \d, superstep 0: 'hops''s combine function as_floats returned "
                 r"float64 values for a int32 array; it returns values of the array's kind$"),
    (B.AsList, r"^AsList\.combine on device \d, superstep 0: 'hops''s combine function as_list returned list; it "
               r"returns a numpy array of the combined values, one per local value$"),
], ids=["shape", "dtype", "list"])
def test_a_combine_function_that_returns_wrong_values_is_named(grid, prim, message, devices):
    """Checked when its phase begins, on two of the array's own values: the same error on one device, where
    nothing is ever received, as on several."""
    assert mgraph.run(B.Reach, grid, 0, devices=devices).hops.tolist() == mgraph.bfs(grid, 0).depth.tolist()
    with pytest.raises(ContractError, match=message):
        mgraph.run(prim, grid, 0, devices=devices)


def test_a_combine_function_wrong_only_for_what_arrives_is_named_where_it_arrives(grid):
    """Right for the phase-start check, one value short for a longer package: on one device nothing arrives and
    the run is right; on three the first package of three values is the error, not an IndexError."""
    assert mgraph.run(B.ShrinksPastTwo, grid, 0).hops.tolist() == mgraph.bfs(grid, 0).depth.tolist()
    with pytest.raises(ContractError, match=r"^ShrinksPastTwo\.combine on device \d, superstep \d+: 'hops''s combine "
                                            r"function shrinks_past_two returned shape \(\d+,\) for \d+ local values"):
        mgraph.run(B.ShrinksPastTwo, grid, 0, devices=3)
