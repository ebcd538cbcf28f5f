"""Shared fixtures: the bundled data, small simulated sets and a NumPy reference likelihood."""

import signal

import numpy as np
import pandas as pd
import pytest

import bayesrank as br


@pytest.fixture(autouse=True)
def signal_handlers_restored():
    """Every test leaves the process's SIGINT and SIGTERM handlers as it found them: the CLI and
    the output writer install their own only while they run, so a program that calls them keeps
    its own Ctrl-C."""
    watched = (signal.SIGINT, signal.SIGTERM)
    before = {s: signal.getsignal(s) for s in watched}
    yield
    changed = {signal.Signals(s).name: (before[s], signal.getsignal(s)) for s in watched
               if signal.getsignal(s) != before[s]}
    for s in watched:
        signal.signal(s, before[s])  # restored for the next test, whatever this one did
    assert not changed, f"the test left signal handlers changed (before, after): {changed}"


@pytest.fixture(scope="session")
def arena():
    return br.load("arena-2024")


@pytest.fixture(scope="session")
def mtbench():
    """The bundled MT-Bench judge data (6 items, 20 judges, 300 cells)."""
    return br.load("mtbench-judges")


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


@pytest.fixture(scope="session")
def small_counts():
    """Eight simulated items (Davidson, η = −0.4), 250 comparisons a pair."""
    return simulate_counts(np.linspace(-1.2, 1.2, 8), 250, np.random.default_rng(5), eta=-0.4)


@pytest.fixture(scope="session")
def small_fit(small_counts):
    """The MAP fit of Davidson (k_tie=0, k_cov=0) to :func:`small_counts`."""
    return br.fit(br.Davidson(k_tie=0, k_cov=0), small_counts)


def items_subset(data, keep):
    """The cells of ``data`` between the items of ``keep`` (indices), as their own Comparisons."""
    names = np.array(data.items, dtype=object)
    sel = np.array([a in keep and b in keep for a, b in zip(data.a, data.b)])
    return br.Comparisons.from_cells(names[data.a[sel]], names[data.b[sel]], data.wins_a[sel], data.wins_b[sel],
                                     data.ties[sel])


def around(data, name, k):
    """``name`` and the ``k`` items it met most, with the cells between them (:func:`items_subset`)."""
    f = list(data.items).index(name)
    met = (data.a == f) | (data.b == f)
    totals = np.zeros(data.n_items)
    np.add.at(totals, np.where(data.a[met] == f, data.b[met], data.a[met]), data.totals[met])
    return items_subset(data, set(np.argsort(-totals)[:k]) | {f})


def random_cells(m, rng, high, keep=lambda i, j: True):
    """Cells of the pairs (i, j), i < j, of m items ``m0``, ``m1``, … that ``keep`` keeps, with
    counts of a wins, b wins and ties drawn uniformly from 1 to ``high`` − 1."""
    a, b = np.array([(i, j) for i in range(m) for j in range(i + 1, m) if keep(i, j)]).T
    counts = rng.integers(1, high, size=(a.size, 3))
    names = np.array([f"m{k}" for k in range(m)], dtype=object)
    return br.Comparisons.from_cells(names[a], names[b], counts[:, 0], counts[:, 1], counts[:, 2])


def reference_log_probs(link, d, h):
    """``(n, 3)`` log P(a wins), log P(b wins), log P(tie) of Bradley–Terry (no tie), Davidson
    (``h`` the log tie weight) and Rao–Kupper (softplus threshold of ``h``) at the score differences
    ``d``, written here in NumPy from the papers' formulas, independently of the package."""
    if link == "bt":
        return np.column_stack([-np.logaddexp(0, -d), -np.logaddexp(0, d), np.full_like(d, -np.inf)])
    if link == "davidson":
        w = np.column_stack([d / 2, -d / 2, h])
        return w - np.logaddexp.reduce(w, axis=1, keepdims=True)
    e = np.logaddexp(0, h)
    la, lb = -np.logaddexp(0, e - d), -np.logaddexp(0, e + d)
    return np.column_stack([la, lb, np.log(np.expm1(2 * e)) + la + lb])


def reference_cell_loglik(link, d, h, counts):
    """Per cell Σ_o counts_o log P_o (:func:`reference_log_probs`); an outcome with no count adds
    nothing, even where its log-probability is −∞ (Bradley–Terry's tie)."""
    return (counts * np.where(counts > 0, reference_log_probs(link, d, h), 0.0)).sum(axis=1)


def reference_loglik(framework, data, scores, eta):
    """Log-likelihood of BT (ties as halves or dropped), Rao–Kupper or Davidson with one global
    threshold ``eta`` (:func:`reference_cell_loglik`)."""
    d = scores[data.a] - scores[data.b]
    w, l, t = data.wins_a, data.wins_b, data.ties
    if framework.name == "bt":
        w, l, t = (w + t / 2, l + t / 2, 0 * t) if framework.ties == "half" else (w, l, 0 * t)
    counts = np.column_stack([w, l, t]).astype(float)
    return float(reference_cell_loglik(framework.name, d, np.full_like(d, eta, dtype=float), counts).sum())


def newcomer(scores, many, few, name, rng):
    """Counts of every pair of items with the given scores (BT, :func:`simulate_counts`): ``many``
    comparisons per pair, but only ``few`` for the pairs of the item ``name`` — a new model."""
    lots, little = simulate_counts(scores, many, rng), simulate_counts(scores, few, rng)
    names = np.array(lots.items, dtype=object)
    theirs = (names[lots.a] == name) | (names[lots.b] == name)
    a = np.concatenate([names[lots.a][~theirs], names[little.a][theirs]])
    b = np.concatenate([names[lots.b][~theirs], names[little.b][theirs]])
    wins_a = np.concatenate([lots.wins_a[~theirs], little.wins_a[theirs]])
    wins_b = np.concatenate([lots.wins_b[~theirs], little.wins_b[theirs]])
    return br.Comparisons.from_cells(a, b, wins_a, wins_b)


def simulate_battles(scores, n, rng, *, models=None, eta=-1.0, beta=None, judges=None, first_id=0):
    """``n`` battle records (``id, model_a, model_b, winner``), each of two distinct models.

    The models are ``m0``, ``m1``, … (indices ``models``, default all), drawn from Davidson with
    scores ``scores`` and tie level ``eta``; with ``beta``, a style contrast ``len`` (whole numbers
    −2…2, a's minus b's) adds beta · len to the score difference; with ``judges`` (name →
    discrimination γ), judge records (``judge_model, judge_preferred_model``) with the difference
    scaled by the judge's γ. Ids are ``r<first_id>``, ``r<first_id + 1>``, …"""
    scores = np.asarray(scores, dtype=float)
    models = np.arange(len(scores)) if models is None else np.asarray(models)
    first = rng.integers(0, models.size, n)
    a, b = models[first], models[(first + rng.integers(1, models.size, n)) % models.size]
    d = scores[a] - scores[b]
    out = {"id": [f"r{first_id + k}" for k in range(a.size)]}
    names = np.array([f"m{k}" for k in range(len(scores))], dtype=object)
    out.update(model_a=names[a], model_b=names[b])
    if beta is not None:
        z = rng.integers(-2, 3, a.size).astype(float)
        d = d + beta * z
        out["len"] = z
    if judges is not None:
        judge = rng.choice(list(judges), a.size)
        d = d * np.array([judges[j] for j in judge])
        out["judge_model"] = judge
    w = np.column_stack([np.exp(d / 2), np.exp(-d / 2), np.full(d.size, np.exp(eta))])
    u = rng.random(a.size)[:, None]
    outcome = (u > np.cumsum(w / w.sum(axis=1, keepdims=True), axis=1)).sum(axis=1)
    if judges is not None:
        out["judge_preferred_model"] = np.array(["a", "b", "c"])[outcome]
    else:
        out["winner"] = np.array(["model_a", "model_b", "tie"])[outcome]
    return pd.DataFrame(out)


def terminal_bytes(argv, *, env=None, timeout=300) -> tuple[int, bytes]:
    """Run ``argv`` with stdin, stdout and stderr on a new pseudo-terminal (its size left unset,
    0 × 0, as under ``script`` or a bare pty); its return code and every byte it wrote there."""
    import os
    import pty
    import select
    import subprocess
    import time

    leader, follower = pty.openpty()
    proc = subprocess.Popen(argv, stdin=follower, stdout=follower, stderr=follower, env=env, close_fds=True)
    os.close(follower)
    chunks, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if ready:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait(timeout=30)
    os.close(leader)
    return proc.returncode, b"".join(chunks)
