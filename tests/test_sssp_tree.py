"""SSSP's predecessor tree: one pull over in-arcs where every weight is positive, the walk over tight arcs where a
weight is zero; both valid shortest-path trees (checked against scipy's distances), on one device and on parts."""
import numpy as np
import pytest

import mgraph
from mgraph import ops
from mgraph.graph import Graph
from mgraph.primitives import sssp as sssp_module

from conftest import check_sssp_tree, get_case

POSITIVE = ["rand_und_float", "rand_dir_float", "facebook_w", "disconnected_dir"]
ZERO = ["zero_dir", "zero_und", "zero_heavy_dir", "zero_heavy_und"]


def _spy(monkeypatch):
    calls = []
    original = ops.tight_predecessors
    monkeypatch.setattr(sssp_module.ops, "tight_predecessors", lambda *a: (calls.append(1), original(*a))[1])
    return calls


@pytest.mark.parametrize("name", POSITIVE)
@pytest.mark.parametrize("devices, duplication", [(1, "1-hop"), (3, "1-hop"), (3, "all")])
def test_positive_weights_take_the_one_pull_tree(monkeypatch, name, devices, duplication):
    calls = _spy(monkeypatch)
    case = get_case(name)
    for source in (0, case.graph.num_vertices // 2):
        r = mgraph.sssp(case.graph, source, devices=devices, duplication=duplication)
        check_sssp_tree(case, source, r.distance, r.predecessor)
    assert calls  # every device of every run pulled


@pytest.mark.parametrize("name", ZERO)
@pytest.mark.parametrize("devices", [1, 3])
def test_a_zero_weight_keeps_the_walk(monkeypatch, name, devices):
    calls = _spy(monkeypatch)
    case = get_case(name)
    r = mgraph.sssp(case.graph, 0, devices=devices)
    check_sssp_tree(case, 0, r.distance, r.predecessor)
    assert not calls  # tight arcs may form zero-weight cycles: walked from the source


def test_one_zero_weight_on_one_part_sends_every_part_to_the_walk(monkeypatch):
    """The choice is the whole graph's (a global minimum), or the parts would run different phases."""
    calls = _spy(monkeypatch)
    src, dst = np.arange(0, 199), np.arange(1, 200)
    w = np.full(199, 2.0)
    w[150] = 0.0
    g = Graph.from_edges(src, dst, w, num_vertices=200, directed=True)
    r = mgraph.sssp(g, 0, devices=4)
    assert not calls
    assert r.distance[-1] == 2.0 * 198 and r.predecessor[1:].tolist() == list(range(199))


def test_tight_predecessors_takes_each_rows_first_tight_in_arc():
    # 3 is reached from 0 (1 + 2), from 1 (2 + 1) and from 2 (3 + 0.5, not tight); its in-arcs in row order 0, 1, 2
    g = Graph.from_edges([0, 0, 1, 0, 2], [1, 3, 3, 2, 3], [2.0, 3.0, 1.0, 3.0, 0.5], num_vertices=5, directed=True)
    dist = np.array([0.0, 2.0, 3.0, 3.0, np.inf])
    pred = np.array([0, -1, -1, -1, -1], dtype=g.indices.dtype)
    ops.tight_predecessors(g.reverse(), dist, pred)
    assert pred.tolist() == [0, 0, 0, 0, -1]  # 3's first tight in-arc is from 0; 4 unreached keeps -1
    pred = np.array([0, -1, -1, 1, -1], dtype=g.indices.dtype)  # a set predecessor stays
    ops.tight_predecessors(g.reverse(), dist, pred)
    assert pred.tolist() == [0, 0, 0, 1, -1]
