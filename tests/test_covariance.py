"""Thurstonian covariance (k_cov): exact constraints, invariances, parameter counts, identifiability."""

import numpy as np
import pytensor.tensor as pt
import pytest

import bayesrank as br
from bayesrank.inference.compiled import compiled
from bayesrank.model.links import log_probs
from bayesrank.model.registry import framework_from_spec
from bayesrank.model.structures import dct_iv_basis, n_covariance, zero_sum_basis
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(7)
    return simulate_counts(np.linspace(-1, 1, 7), 300, rng, eta=-0.5)


def dispersion(d, L):
    """s_ab = d_a + d_b + ‖λ_a − λ_b‖² for every pair (paper eq. 13), written here in NumPy."""
    S = d[:, None] + d[None, :]
    if L is not None:
        S = S + ((L[:, None, :] - L[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(S, 0.0)
    return S


def _values_at(framework, data, seed):
    """Model variables and θ at a random point of the free coordinates."""
    prepared = framework.prepare(data)
    structure = compiled(framework, prepared)
    theta = np.random.default_rng(seed).normal(scale=0.7, size=structure.n_free)
    return structure.bind(prepared), theta, structure.values(theta)


@pytest.mark.parametrize("k_cov", [0, 1, 3])
def test_constraints_hold_exactly_at_random_points(small, k_cov):
    m = small.n_items
    for seed in range(3):
        _, _, v = _values_at(br.Davidson(k_tie=1, k_cov=k_cov), small, seed)
        d = v["cov_diag"]
        L = v["cov_loading"] if k_cov else np.zeros((m, 0))
        Sigma = np.diag(d) + L @ L.T
        P = np.eye(m) - np.ones((m, m)) / m
        assert abs(v["score"].sum()) < 1e-12                                  # Σμ = 0
        assert np.trace(P @ Sigma @ P) == pytest.approx(1.0, abs=1e-12)      # trace(PΣP) = 1
        np.testing.assert_allclose(L.sum(axis=0), 0.0, atol=1e-12)           # Λᵀ1 = 0
        assert np.all(d >= 0)
        # canonical rotation: in the zero-sum basis the loadings are lower-triangular, positive diagonal
        if k_cov:
            Lb = zero_sum_basis(m).T @ L
            assert np.allclose(np.triu(Lb[:k_cov], 1), 0.0, atol=1e-12)
            assert np.all(np.diag(Lb[:k_cov]) > 0)
        # C = (1/2m) Σ_ab s_ab = trace(PΣP) (paper Prop. C.2)
        assert dispersion(d, L).sum() / (2 * m) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("framework", [br.RaoKupper(k_tie=1, k_cov=2), br.Davidson(k_tie=0, k_cov=0)],
                         ids=lambda f: f.label)
def test_model_probabilities_are_the_papers_in_the_reported_parameters(small, framework):
    """The likelihood in raw coordinates equals the paper's z_ab = (μ_a − μ_b)/√s_ab in the
    reported (normalised) μ, d, Λ — and is unchanged by a rotation of Λ, a translation of its
    rows and the scale (μ, Σ) → (tμ, t²Σ)."""
    bound, theta, v = _values_at(framework, small, 4)
    a, b = small.a, small.b
    L = v.get("cov_loading")
    if "tie_factor" in v:
        phi = dct_iv_basis(small.n_items, framework.k_tie)
        h = (v["tie_factor"][a] * phi[b]).sum(-1) + (v["tie_factor"][b] * phi[a]).sum(-1)
    else:
        h = np.full(a.size, float(v["eta_raw"]))

    def lp(mu, d, loading):
        z = (mu[a] - mu[b]) / np.sqrt(dispersion(d, loading)[a, b])
        return log_probs(framework.link, pt.as_tensor(z), pt.as_tensor(h)).eval()

    model = bound.log_probs(theta)
    np.testing.assert_allclose(lp(v["score"], v["cov_diag"], L), model, rtol=1e-10)
    if L is not None:
        rng = np.random.default_rng(2)
        Q, _ = np.linalg.qr(rng.normal(size=(L.shape[1],) * 2))
        np.testing.assert_allclose(lp(v["score"], v["cov_diag"], L @ Q), model, rtol=1e-10)
        np.testing.assert_allclose(lp(v["score"], v["cov_diag"], L + rng.normal(size=(1, L.shape[1]))), model,
                                   rtol=1e-10)
    t = 2.7
    np.testing.assert_allclose(lp(t * v["score"], t**2 * v["cov_diag"], None if L is None else t * L), model,
                               rtol=1e-10)


@pytest.mark.parametrize("framework,count", [
    (br.BradleyTerry(ties="drop", k_cov=2), 6 + n_covariance(7, 2)),
    (br.RaoKupper(k_tie=2, k_cov=3), 6 + n_covariance(7, 3) + (7 - 2) * 2 + 3),
    (br.Davidson(k_tie=1, tie_intercept=True, k_cov=0), 6 + 6 + (7 - 1) * 1 + 1 + 1),
], ids=lambda x: getattr(x, "label", str(x)))
def test_parameter_count_is_the_dimension_of_the_free_coordinates(small, framework, count):
    """m − 1 scores, (m − 1)(k + 1) − k(k − 1)/2 covariance, (m − k)k + k(k + 1)/2 factored ties."""
    assert compiled(framework, framework.prepare(small)).n_free == count


def test_parameter_counts_for_the_paper_grid(arena):
    m = 129
    assert n_covariance(m, 0) == 128
    assert n_covariance(m, 3) == 128 * 4 - 3

    def n_free(framework):
        return compiled(framework, framework.prepare(arena)).n_free

    assert n_free(br.BradleyTerry(k_cov=0)) == 256                                   # paper model 2: 258
    # model 18: the arena's compared pairs leave at least 22 of the 109·20 + 210 tie coordinates
    # exactly flat (rank 2368 of the map to their thresholds); those, and the ones below float64
    # resolution, are removed (tests/test_tie_identification.py checks the rule on a small graph)
    rk = br.RaoKupper(k_tie=20, k_cov=3)
    kept = rk.tie_basis(rk.prepare(arena))[0].shape[1]
    assert 100 > 109 * 20 + 210 - kept >= 22
    assert n_free(rk) == 128 + 509 + kept
    assert n_free(br.RaoKupper(k_tie=10, k_cov=3)) == 128 + 509 + 119 * 10 + 55      # model 17: nothing pinned
    assert n_free(br.Davidson(k_tie=0, k_cov=3)) == 128 + 1 + 509                     # model 27: 646


def test_spec_round_trip_and_validation():
    for fw in (br.BradleyTerry(ties="drop", k_cov=3), br.RaoKupper(k_tie=2, k_cov=0), br.Davidson(k_cov=None)):
        assert framework_from_spec(fw.spec()) == fw
    old = {"framework": "davidson", "k_tie": 1, "tie_intercept": False, "priors": {"score": 3.0, "tie": 2.0}}
    assert framework_from_spec(old).k_cov is None  # specs saved before k_cov still load
    with pytest.raises(br.ModelSpecError):
        br.Davidson(k_cov=-1)
    with pytest.raises(br.ModelSpecError):
        br.BradleyTerry(k_cov=True)
    with pytest.raises(br.ModelSpecError, match="unknown framework"):
        framework_from_spec({"framework": "elo"})


def test_map_is_identified_and_reported(small):
    fit = br.fit(br.Davidson(k_tie=0, k_cov=1), small)
    assert fit.diagnostics["grad_norm"] < 1e-6
    assert fit.diagnostics["min_information_eigenvalue"] > 0
    assert abs(fit.scores().sum()) < 1e-10
    names = set(fit.parameters()["parameter"])
    assert {"cov_diag", "cov_loading"} <= names
    # with a covariance the model nests its own Σ = D version: likelihood at least as high
    assert fit.nll <= br.fit(br.Davidson(k_tie=0, k_cov=0), small).nll + 1e-9


@pytest.mark.parametrize("k_cov", [0, 2])
def test_canonical_point_has_the_same_likelihood_and_positive_t(small, k_cov):
    """With mixed signs of t the pin Σt = m no longer fixes the scale; the canonical move
    (flip the signs, rescale to Σt = m) keeps the likelihood and the reported parameters."""
    framework = br.Davidson(k_tie=0, k_cov=k_cov)
    bound, theta, v = _values_at(framework, small, 11)
    nat = bound.natural(theta)
    assert (nat["cov_t"] < 0).any()
    moved = framework.canonical(nat)
    theta2 = bound.structure.natural.theta_for(moved, theta)
    assert bound.logp_dlogp(theta2)[0] == pytest.approx(bound.logp_dlogp(theta)[0], rel=1e-12)
    t2 = bound.natural(theta2)["cov_t"]
    assert (t2 >= 0).all() and t2.sum() == pytest.approx(small.n_items)
    v2 = bound.structure.values(theta2)
    for name in ("score", "cov_diag", *(("cov_loading",) if k_cov else ())):
        np.testing.assert_allclose(v2[name], v[name], atol=1e-10)
    assert framework.canonical(bound.natural(theta2)) is None


def test_across_edge_mirrors_a_loading_column_run_to_zero(small):
    """A loading column whose diagonal L_jj = e^θ has run to 0 is offered mirrored (the column
    negated: the same ΛΛᵀ) with L_jj restarted at small positive values; away from the edge
    nothing is offered."""
    framework = br.RaoKupper(k_tie=1, k_cov=2)
    bound, theta, _ = _values_at(framework, small, 5)
    structure = bound.structure
    assert framework.across_edge(bound.natural(theta)) == []
    assert framework.edge_description(bound.natural(theta), 0) is None
    assert "inside the chart" in framework.edge_description(bound.natural(theta), 1)
    diag = np.flatnonzero(structure.natural.exp_columns)  # L_00, L_11 = e^θ
    theta[diag[1]] = -40.0  # L_11 = e^-40: at the edge
    B = zero_sum_basis(small.n_items)
    L = B.T @ bound.natural(theta)["cov_raw_loading"]
    assert abs(L[1, 1]) < 1e-15
    moved = framework.across_edge(bound.natural(theta))
    assert moved
    assert "not available" in framework.edge_description(bound.natural(theta), 0)
    lp = bound.logp_dlogp(theta)[0]
    for values in moved:
        M = B.T @ values["cov_raw_loading"]
        np.testing.assert_allclose(M[:, 0], L[:, 0], atol=1e-12)           # the other column stays
        np.testing.assert_allclose(M[2:, 1], -L[2:, 1], atol=1e-12)        # this one is negated
        assert 0 < M[1, 1] <= 0.1 * np.linalg.norm(L[:, 1]) + 1e-12
        theta2 = structure.natural.theta_for(values, theta)
        np.testing.assert_allclose(B.T @ bound.natural(theta2)["cov_raw_loading"], M, atol=1e-10)
    # the smallest restart is (nearly) the same point of the likelihood: a mirror image
    smallest = structure.natural.theta_for(moved[0], theta)
    assert bound.logp_dlogp(smallest)[0] == pytest.approx(lp, rel=1e-6)


def test_maximise_continues_across_the_edge_of_its_chart():
    """ℓ(x, y) = −(xy + 1)² − (y² − 1)² with x = e^u, from y > 0: the maximum wants x < 0, so
    u runs to −∞ and the gradient in u vanishes at ℓ = −1 (a false stop); its mirror (−x, −y)
    is the same likelihood, and from there the maximum ℓ = 0 is reached."""
    from bayesrank.inference.optimize import maximise

    def logp_dlogp(theta):
        x, y = np.exp(theta[0]), theta[1]
        r, s = x * y + 1.0, y * y - 1.0
        return -(r * r) - s * s, np.array([-2 * r * y * x, -2 * r * x - 4 * s * y])

    def hessian(theta, h=1e-6):
        cols = [(logp_dlogp(theta + h * e)[1] - logp_dlogp(theta - h * e)[1]) / (2 * h) for e in np.eye(2)]
        H = np.column_stack(cols)
        return 0.5 * (H + H.T)

    def edge(theta):
        x, y = np.exp(theta[0]), theta[1]
        return [] if x >= 1e-4 * np.hypot(x, y) else [np.array([np.log(step * abs(y)), -y]) for step in (1e-3, 1e-1)]

    start = np.array([0.0, 1.0])
    stuck, info = maximise(logp_dlogp, hessian, start, 1.0, 2000)
    assert logp_dlogp(stuck)[0] == pytest.approx(-1.0, abs=1e-6) and "edge_crossings" not in info
    theta, info = maximise(logp_dlogp, hessian, start, 1.0, 2000, edge=edge)
    assert info["edge_crossings"] == 1
    assert logp_dlogp(theta)[0] == pytest.approx(0.0, abs=1e-10)
    np.testing.assert_allclose([np.exp(theta[0]), theta[1]], [1.0, -1.0], atol=1e-5)


def _saddle_toy_logp_dlogp(theta):
    """ℓ(x, y) = −(x² − 1)² − cosh y and its gradient: a saddle at (0, 0), maxima at (±1, 0)."""
    x, y = theta
    return -((x * x - 1.0) ** 2) - np.cosh(y), np.array([-4 * x * (x * x - 1.0), -np.sinh(y)])


def _saddle_toy_hessian(theta):
    """∇²ℓ of :func:`_saddle_toy_logp_dlogp`."""
    x, y = theta
    return np.array([[4.0 - 12.0 * x * x, 0.0], [0.0, -np.cosh(y)]])


def test_maximise_leaves_a_saddle_point_along_its_negative_curvature():
    """ℓ(x, y) = −(x² − 1)² − cosh y from (0, 0.7): x stays 0 by symmetry, so L-BFGS-B stops on
    the saddle (0, 0) (the gradient vanishes) and Newton's method cannot step (the information
    has the eigenvalue −4 along x); one escape along x, then the maximum (±1, 0). A concave
    log-likelihood never looks for saddles."""
    from bayesrank.inference.optimize import maximise

    logp_dlogp, hessian = _saddle_toy_logp_dlogp, _saddle_toy_hessian
    start = np.array([0.0, 0.7])
    theta, info = maximise(logp_dlogp, hessian, start, 1.0, 2000)
    assert info["saddle_escapes"] == 1
    np.testing.assert_allclose(np.abs(theta), [1.0, 0.0], atol=1e-8)
    stuck, info = maximise(logp_dlogp, hessian, start, 1.0, 2000, concave=True)  # (told it is concave)
    assert "saddle_escapes" not in info and abs(stuck[0]) < 1e-8


@pytest.mark.parametrize("smallest", [-0.3, -1e-9, 1e-3])
def test_saddle_escape_directions_are_the_smallest_eigenvector(smallest):
    """The escapes run along the eigenvector of the information's smallest eigenvalue (computed
    alone, with the largest by Lanczos) when it is below −SINGULAR × the largest, and exist only
    then: a clearly negative one and a small negative one (−1e-9 of the largest, which single
    precision would not resolve) give them; a positive definite information none."""
    from bayesrank.inference import optimize

    rng = np.random.default_rng(3)
    n = 150
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    spectrum = np.concatenate([[smallest], np.geomspace(1e-4, 1.0, n - 1)])
    information = (Q * spectrum) @ Q.T
    information = 0.5 * (information + information.T)
    theta, grad = np.zeros(n), np.full(n, 1e-3)
    candidates = optimize._saddle_escapes(lambda th: -information, theta, grad, 1.0)
    if smallest > 0:
        assert candidates == []
        return
    assert len(candidates) == 2 * len(optimize.ESCAPE_STEPS)
    direction = candidates[0] / optimize.ESCAPE_STEPS[0]
    assert abs(abs(direction @ Q[:, 0]) - 1.0) < 1e-8
    np.testing.assert_allclose(candidates[1], -candidates[0])


def test_a_whitened_phase_without_a_step_is_not_whitened_again(monkeypatch):
    """Where a whitened L-BFGS-B phase takes no step (its first line search fails: paper model 18
    after each saddle escape, where the gain left is below the log-likelihood's resolution), the run
    goes on with the diagonal scaling at once: no Newton trial at the unchanged point and no second
    whitening there (model 18: 2 s and 0.6 s saved per run). Here every whitened phase is made to fail
    on the saddle toy of the test above; the maximum is still reached, with one whitening per run."""
    from types import SimpleNamespace

    from bayesrank.inference import optimize

    logp_dlogp, hessian = _saddle_toy_logp_dlogp, _saddle_toy_hessian
    real_whitening, real_minimize = optimize._whitening, optimize.minimize
    whitened, pending = [], []

    def whitening(*args, **kwargs):
        whitened.append(1)
        pending.append(1)
        return real_whitening(*args, **kwargs)

    def minimize(fun, x0, **kwargs):
        if pending:  # the phase this whitening was made for: no step
            pending.clear()
            return SimpleNamespace(x=np.asarray(x0, dtype=float), nit=0)
        return real_minimize(fun, x0, **kwargs)

    monkeypatch.setattr(optimize, "_whitening", whitening)
    monkeypatch.setattr(optimize, "minimize", minimize)
    theta, info = optimize.maximise(logp_dlogp, hessian, np.array([0.0, 0.7]), 1.0, 2000)
    np.testing.assert_allclose(np.abs(theta), [1.0, 0.0], atol=1e-8)
    assert len(whitened) == 1 and info["saddle_escapes"] == 1  # (the run after the escape: Newton's method)


def test_a_newton_trial_stops_where_a_whole_step_does_not_contract_the_gradient():
    """A Newton trial after a whitened phase ends after a whole Newton step (unit length accepted, so
    its quadratic model was trusted) that leaves the largest gradient entry above TRIAL_CONTRACTION
    of its value before it (paper model 29: 3.5e-8 → 5.3e-8 per comparison on its third step, the
    gains 2.7e-9, 2.2e-9, 8.5e-10). On ℓ = −½ θᵀAθ with an information four times too large, each
    whole step takes θ to 0.75 θ: a trial stops after one, without converging and without an
    information at the new point; outside a trial the steps go on to the cap. A shortened step does
    not end a trial (paper model 30's first step, 1/8 of Newton's, raised the gradient sevenfold and
    the next gained 35 times as much): on ℓ = −log cosh θ from 1.5 the whole step overshoots, half of
    it is taken (|∇ℓ| 0.91 → 0.76), then a whole one that contracts by 0.88 only ends the trial.
    Exact steps square the gradient, and a trial takes them to the tolerance."""
    from bayesrank.inference import optimize

    A = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.1], [0.0, 0.1, 0.5]])

    def logp_dlogp(theta):
        return -0.5 * theta @ A @ theta, -A @ theta

    start = np.array([1.0, -2.0, 0.5])
    assert 0.75 > optimize.TRIAL_CONTRACTION
    theta, steps, done, information = optimize._newton(logp_dlogp, lambda th: -4.0 * A, start, 1.0,
                                                       max_iter=5, trial=True)
    np.testing.assert_allclose(theta, 0.75 * start)
    assert (steps, done, information) == (1, False, None)
    theta, steps, done, _ = optimize._newton(logp_dlogp, lambda th: -4.0 * A, start, 1.0, max_iter=5)
    np.testing.assert_allclose(theta, 0.75**5 * start)
    assert (steps, done) == (5, False)
    theta, steps, done, _ = optimize._newton(logp_dlogp, lambda th: -A, start, 1.0, max_iter=5, trial=True)
    assert done and np.max(np.abs(theta)) < 1e-12

    def log_cosh(theta):
        return -np.log(np.cosh(theta[0])), np.array([-np.tanh(theta[0])])

    def log_cosh_hessian(theta):
        return np.array([[-1.0 / np.cosh(theta[0]) ** 2]])

    x = 1.5 - 0.5 * np.sinh(1.5) * np.cosh(1.5)   # half of Newton's step
    x = x - np.sinh(x) * np.cosh(x)               # then a whole one
    theta, steps, done, _ = optimize._newton(log_cosh, log_cosh_hessian, np.array([1.5]), 1.0, max_iter=5,
                                             trial=True, iterative=False)
    assert (steps, done) == (2, False) and theta[0] == pytest.approx(x, rel=1e-12)
    assert np.tanh(abs(x)) > optimize.TRIAL_CONTRACTION * np.tanh(abs(1.5 - 0.5 * np.sinh(1.5) * np.cosh(1.5)))
