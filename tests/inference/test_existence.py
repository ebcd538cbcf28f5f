"""The existence check's shortcut: cells whose observed outcomes lock every direction of their
predictors, and the test that they alone pin the parameters (then no linear programme).

The reference for "locked" is written here from the links' log-probabilities in NumPy: a cell is
locked when along every direction (δ, ε) of its predictors (d, h), some observed outcome's
log-probability falls without bound.
"""

import itertools

import numpy as np
import pytest

import bayesrank as br
from bayesrank.inference import existence
from bayesrank.inference.information import CellDerivatives
from bayesrank.inference.structure import structure_of
from tests.conftest import random_cells


def _log_probs(link, d, h):
    """[log P(a wins), log P(b wins), log P(tie)] in NumPy, from the papers' formulas."""
    if link == "davidson":
        z = np.stack([np.zeros_like(d), -d, -(d / 2 - h)])
        win = -np.logaddexp.reduce(z, axis=0)
        loss = -np.logaddexp.reduce(np.stack([np.zeros_like(d), d, -(-d / 2 - h)]), axis=0)
        tie = -np.logaddexp.reduce(np.stack([np.zeros_like(d), -(d / 2 + h), -(-d / 2 + h)]), axis=0)
        return np.stack([win, loss, tie])
    eta = np.logaddexp(0.0, h)  # Rao–Kupper, η = softplus(h)
    win, loss = -np.logaddexp(0.0, -(d - eta)), -np.logaddexp(0.0, -(-d - eta))
    return np.stack([win, loss, np.log(np.expm1(2 * eta)) + win + loss])


def _locked_reference(link, pattern):
    """Locked: along every direction of (d, h), some observed outcome's log-probability falls
    by more than 5 over a step of 200 from (0, 0)."""
    angles = np.linspace(0, 2 * np.pi, 720, endpoint=False)
    angles = np.concatenate([angles, np.arctan2([1, 1, -1, -1, 2, 2, -2, -2], [2, -2, 2, -2, 1, -1, 1, -1])])
    delta, eps = np.cos(angles), np.sin(angles)
    start = _log_probs(link, np.zeros(1), np.zeros(1))
    end = _log_probs(link, 200 * delta, 200 * eps)
    falls = (end < start - 5)[np.flatnonzero(pattern)]
    return bool(np.all(falls.any(axis=0)))


@pytest.mark.parametrize("link", ["davidson", "rao-kupper"])
def test_locked_cells_match_the_links_log_probabilities(link):
    patterns = np.array([p for p in itertools.product([0, 1], repeat=3) if any(p)])
    counts = patterns * np.array([3, 2, 1])
    got = existence.locked(link, counts, 2)
    assert got.tolist() == [_locked_reference(link, p) for p in patterns]
    assert got[patterns.tolist().index([1, 1, 1])]  # wins both ways and ties: locked


def test_bradley_terry_cells_lock_with_wins_both_ways():
    counts = np.array([[1, 0, 0], [0, 2, 0], [3, 1, 0]])
    assert existence.locked("bt", counts, 1).tolist() == [False, False, True]


def _recession(framework, data, shortcut, monkeypatch):
    prepared = framework.prepare(data)
    bound = structure_of(framework, prepared, prior="flat").bind(prepared)
    if not shortcut:
        monkeypatch.setattr(existence, "locked_cells_identify", lambda *a: False)
    return existence.recession(bound, bound.x0), bound


def test_locked_arena_cells_identify_a_factored_tie_model(arena, monkeypatch):
    """On the arena data the locked pairs pin every coordinate (scores and tie factors), and
    the linear programme agrees that there is no direction of unbounded likelihood."""
    framework = br.Davidson(k_tie=2)
    found, bound = _recession(framework, arena, True, monkeypatch)
    cd = CellDerivatives.at(bound, bound.x0)
    assert existence.locked_cells_identify(bound, bound.x0, cd, existence._linear_variables(bound.structure, cd))
    assert found is None
    assert _recession(framework, arena, False, monkeypatch)[0] is None


def test_unlocked_pair_still_goes_to_the_linear_programme(monkeypatch):
    """'a' beat 'b' and tied, never lost: the pair is not locked, the shortcut does not apply and
    the linear programme finds the direction along which the likelihood rises forever."""
    data = br.Comparisons.from_cells(["a"], ["b"], [1], [0], [1])
    framework = br.Davidson()
    prepared = framework.prepare(data)
    bound = structure_of(framework, prepared, prior="flat").bind(prepared)
    cd = CellDerivatives.at(bound, bound.x0)
    assert not existence.locked_cells_identify(bound, bound.x0, cd, existence._linear_variables(bound.structure, cd))
    assert existence.recession(bound, bound.x0) is not None


@pytest.mark.parametrize("framework", [br.Davidson(k_tie=5), br.RaoKupper(k_tie=5, k_cov=0)])
def test_tie_block_apart_gives_the_whole_matrix_extremes(monkeypatch, framework):
    """With the dense tie block taken apart (its eigenvalues kept per data), the extreme
    eigenvalues of the unit-diagonal Gram of the locked cells are those of the whole matrix,
    computed here by a dense eigendecomposition (the Thurstonian scores' predictor is not
    linear: the rest of the matrix is the one at θ)."""
    from bayesrank.inference import information as inf

    rng = np.random.default_rng(4)
    data = random_cells(10, rng, 20, keep=lambda i, j: (i + j) % 3)
    monkeypatch.setattr(inf, "FACTORED_FROM", 1)   # the ring's tie block counts as a large one
    prepared = framework.prepare(data)
    bound = structure_of(framework, prepared, prior="flat").bind(prepared)
    theta = bound.x0 + 0.1 * rng.standard_normal(bound.n_free)
    cd = CellDerivatives.at(bound, theta)
    linear = existence._linear_variables(bound.structure, cd)
    assert existence.separate_blocks(bound, cd)
    found = []
    keep = existence._extremes
    monkeypatch.setattr(existence, "_extremes", lambda gram: found.append(keep(gram)) or found[-1])
    assert existence.locked_cells_identify(bound, theta, cd, linear)
    assert len(found) == 2
    nmap = bound.structure.natural
    index = np.arange(bound.n_free)
    free = np.unique(np.concatenate([index[cols] for name, (_, cols, _) in zip(nmap.names, nmap.blocks)
                                     if name in linear]))
    P = len(cd.names)
    weights = np.zeros((len(bound.counts), P, P))
    weights[existence.locked(bound.structure.framework.link, bound.counts, P)] = np.eye(P)
    monkeypatch.setattr(inf, "FACTORED_FROM", 10**9)
    bound.block_jacobians.clear()
    gram = inf.cell_matrix(bound, cd, weights)[np.ix_(free, free)]
    scale = np.sqrt(np.diag(gram))
    w = np.linalg.eigvalsh(gram / np.outer(scale, scale))
    np.testing.assert_allclose([min(f[0] for f in found), max(f[1] for f in found)], [w[0], w[-1]], rtol=1e-6)
