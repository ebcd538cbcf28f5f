"""Shared fixtures: real data (bundled arena-2024; ../shared when present) and small simulated sets."""

from pathlib import Path
import warnings

import numpy as np
import pytest

import bayesrank as br

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def arena():
    return br.load("arena-2024")


@pytest.fixture(autouse=True)
def _quiet_pymc():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def simulate_counts(scores, n_per_pair, rng, eta=None):
    """Davidson (eta given) or BT counts for all pairs of items with the given scores."""
    m = len(scores)
    a, b = np.triu_indices(m, k=1)
    d = scores[a] - scores[b]
    if eta is None:
        p = np.column_stack([1 / (1 + np.exp(-d)), 1 / (1 + np.exp(d)), np.zeros_like(d)])
    else:
        w = np.column_stack([np.exp(d / 2), np.exp(-d / 2), np.full_like(d, np.exp(eta))])
        p = w / w.sum(axis=1, keepdims=True)
    counts = np.array([rng.multinomial(n_per_pair, pi) for pi in p])
    names = np.array([f"m{k:02d}" for k in range(m)], dtype=object)
    return br.Comparisons.from_cells(names[a], names[b], counts[:, 0], counts[:, 1], counts[:, 2])
