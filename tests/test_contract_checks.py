"""A user primitive that breaks the contract gets one ContractError naming the primitive, the device and the
superstep, the same on one device and on several (never a numpy error from inside the exchange, nor a run that
stops early)."""
import numpy as np
import pytest

import mgraph
from mgraph import ops
from mgraph.primitives.contract import ContractError, Primitive


class Reach(Primitive):
    """Plain reachability: a correct primitive that the tests below break one way at a time."""

    name = "reach"
    combine = {"hops": "min"}
    needs_source = True

    def reset(self, source=None):
        self.hops = self.xp.full(self.num_vertices, ops.UNVISITED, dtype=np.int32)
        self.via = self.xp.full(self.num_vertices, ops.UNVISITED, dtype=self.graph.indices.dtype)
        if source is not None:
            self.hops[source] = 0
        return self.frontier_of(source)

    def iterate(self, frontier):
        return ops.advance_visit(self.graph, frontier, self.hops, self.via, self.step + 1)

    def result(self):
        return {"hops": self.hops}


def graph():
    return mgraph.io.generators.grid(12, 12)


def broken(**methods):
    return type("Broken", (Reach,), methods)


@pytest.mark.parametrize("devices", [1, 3])
def test_the_correct_primitive_reaches_every_vertex(devices):
    r = mgraph.run(Reach, graph(), source=0, devices=devices)
    assert (r.hops >= 0).all() and r.hops.max() == 22


def late(step, value):
    """iterate that behaves until superstep ``step``, then returns ``value(self, frontier)``."""
    def iterate(self, frontier):
        out = Reach.iterate(self, frontier)
        return value(self, out) if self.step >= step else out
    return iterate


CASES = {
    "None": (late(2, lambda self, f: None), r"Broken\.iterate on device \d, superstep \d+: returned None"),
    "list": (late(2, lambda self, f: [int(v) for v in f]), r"Broken\.iterate on device \d, superstep \d+: returned list"),
    "float": (late(2, lambda self, f: f.astype(np.float64)), r"returned a 1-D float64 array"),
    "2-D": (late(2, lambda self, f: f.reshape(1, -1)), r"returned a 2-D"),
    "too large": (late(2, lambda self, f: f + self.num_vertices), r"returned vertex id \d+, outside this graph's ids"),
    "negative": (late(2, lambda self, f: f - 10**6), r"returned vertex id -\d+, outside this graph's ids"),
}


@pytest.mark.parametrize("devices", [1, 3])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_frontier_is_named_where_it_was_returned(case, devices):
    iterate, message = CASES[case]
    with pytest.raises(ContractError, match=message):
        mgraph.run(broken(iterate=iterate), graph(), source=0, devices=devices)


@pytest.mark.parametrize("devices", [1, 3])
def test_reset_must_return_a_frontier(devices):
    with pytest.raises(ContractError, match=r"Broken\.reset on device \d, superstep 0: returned None"):
        mgraph.run(broken(reset=lambda self, source=None: (Reach.reset(self, source), None)[1]), graph(),
                   source=0, devices=devices)


@pytest.mark.parametrize("devices", [1, 3])
@pytest.mark.parametrize("value, message", [
    (None, r"Broken\.result on device \d, superstep \d+: returned NoneType"),
    ([1, 2], r"returned list"),
    ("hops-list", r"'hops' is list; each result is a 1-D"),
    ("short", r"'hops' is ndarray of shape \(3,\); each result"),
])
def test_result_must_be_per_vertex_arrays(value, message, devices):
    def result(self):
        if value == "hops-list":
            return {"hops": self.hops.tolist()}
        if value == "short":
            return {"hops": self.hops[:3]}
        return value
    with pytest.raises(ContractError, match=message):
        mgraph.run(broken(result=result), graph(), source=0, devices=devices)


@pytest.mark.parametrize("devices", [1, 3])
def test_combine_must_name_a_known_op_and_an_array(devices):
    with pytest.raises(ContractError, match=r"'hops' combines by 'avg'; expected one of min, max, sum"):
        mgraph.run(broken(combine={"hops": "avg"}), graph(), source=0, devices=devices)
    with pytest.raises(ContractError, match=r"combine on device \d, superstep 0: 'hop' names no per-vertex array"):
        mgraph.run(broken(combine={"hop": "min"}), graph(), source=0, devices=devices)
    with pytest.raises(ContractError, match=r"carry on device \d, superstep 0: 'pred' names no per-vertex array"):
        mgraph.run(broken(carry=("pred",)), graph(), source=0, devices=devices)


def test_a_contract_error_is_a_value_error():
    assert issubclass(ContractError, ValueError)


class FloatHops(Reach):
    """Keeps hops as floats with -1 for unreached: a min combine would let -1 win over every real value."""

    def reset(self, source=None):
        frontier = super().reset(source)
        self.hops = self.hops.astype(np.float64)
        return frontier

    def iterate(self, frontier):
        hops = self.hops.astype(np.int32)
        out = ops.advance_visit(self.graph, frontier, hops, self.via, self.step + 1)
        self.hops = hops.astype(np.float64)
        return out


@pytest.mark.parametrize("devices", [1, 3])
def test_a_float_combine_that_uses_minus_one_for_unreached_is_refused(devices):
    with pytest.raises(ContractError, match=r"FloatHops.combine on device \d, superstep 0: 'hops' is a float array "
                                            r"combined by 'min' and holds -1"):
        mgraph.run(FloatHops, graph(), 0, devices=devices)


def _frontier_values_from(step):
    def frontier_values(self):
        return {"hops": self.step} if self.step < step else {}
    return frontier_values


@pytest.mark.parametrize("devices", [1, 3])
def test_frontier_values_names_may_not_change_within_a_phase(devices):
    """The exchange plans a phase from the names frontier_values() gives when it begins."""
    with pytest.raises(ContractError, match=r"Broken\.iterate on device \d, superstep \d+: frontier_values\(\) names "
                                            r"\[\], but \['hops'\] when the phase began"):
        mgraph.run(broken(frontier_values=_frontier_values_from(2)), graph(), source=0, devices=devices)


@pytest.mark.parametrize("devices", [1, 3])
def test_every_own_vertex_must_return_the_own_vertices(devices):
    """A primitive that declares every_own_vertex but returns another frontier would have the exchange skip the
    owners of vertices it sends: refused, the same on one device and on several."""
    with pytest.raises(ContractError, match=r"Broken\.reset on device \d, superstep 0: declares every_own_vertex but "
                                            r"returned a frontier of 1 vertices that is not graph.own_vertices"):
        mgraph.run(broken(every_own_vertex=True), graph(), source=0, devices=devices)


def test_every_own_vertex_is_checked_once_per_run_not_per_superstep(monkeypatch):
    """A whole graph builds its own_vertices anew at each access (an n-entry arange): PageRank returns the same
    array every iteration, so the contract compares it once instead of paying two such builds per iteration."""
    built = []
    plain = mgraph.Graph.own_vertices.fget
    monkeypatch.setattr(mgraph.Graph, "own_vertices", property(lambda g: built.append(1) or plain(g)))
    result = mgraph.pagerank(graph(), tol=1e-12, max_iter=40)
    assert result.stats["iterations"] == 40
    assert len(built) <= 3  # PageRank's own copy, the contract's one check, and nothing per iteration
