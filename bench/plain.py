"""Plain numpy/scipy reference fits of the same likelihoods, with analytic gradients.

These are the "what a careful person writes by hand" peers for the benchmark: no PyMC, no
PyTensor, just vectorised numpy over the comparison cells and SciPy's L-BFGS-B. Scores are
parameterised by m free values z with x = z − mean(z) (the mean is fixed at 0; the gradient
is automatically orthogonal to the constant direction, so L-BFGS never moves along it).

The objective is the negative log-likelihood per comparison (the normalisation of
``Fit.nll`` and leaderbot's ``loss``), without the multinomial constant.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_expit, expit

# tolerances as tight as bayesrank's own L-BFGS-B call, so both reach the same optimum
LBFGS_OPTIONS = {"maxiter": 20000, "maxcor": 30, "gtol": 1e-12, "ftol": 1e-15}


def cells(data):
    """Integer indices and float counts per cell of a ``bayesrank.Comparisons``."""
    a = np.asarray(data.a, dtype=np.intp)
    b = np.asarray(data.b, dtype=np.intp)
    wa = np.asarray(data.wins_a, dtype=float)
    wb = np.asarray(data.wins_b, dtype=float)
    t = np.asarray(data.ties, dtype=float)
    return a, b, wa, wb, t, int(data.n_items)


def davidson_nll(params, a, b, wa, wb, t, m, n_total):
    """Davidson (global η) NLL per comparison and its gradient in (z, η).

    P(a wins) : P(b wins) : P(tie) = e^{d/2} : e^{−d/2} : e^{η}, d = x_a − x_b.
    """
    z, eta = params[:m], params[m]
    x = z - z.mean()
    half = 0.5 * (x[a] - x[b])
    mx = np.maximum(np.abs(half), eta)
    ea, eb, et = np.exp(half - mx), np.exp(-half - mx), np.exp(eta - mx)
    s = ea + eb + et
    log_norm = mx + np.log(s)
    n = wa + wb + t
    ll = wa * half - wb * half + t * eta - n * log_norm
    pa, pb, pt_ = ea / s, eb / s, et / s
    g_d = 0.5 * ((wa - wb) - n * (pa - pb))  # ∂ll/∂d
    g_x = np.bincount(a, g_d, m) - np.bincount(b, g_d, m)
    g_z = g_x - g_x.mean()
    g_eta = np.sum(t - n * pt_)
    grad = np.empty(m + 1)
    grad[:m] = g_z
    grad[m] = g_eta
    return -ll.sum() / n_total, -grad / n_total


def fit_davidson(data):
    """MLE of Davidson with one global tie parameter; returns (nll, scores, η, OptimizeResult)."""
    a, b, wa, wb, t, m = cells(data)
    n_total = float((wa + wb + t).sum())
    x0 = np.zeros(m + 1)
    res = minimize(davidson_nll, x0, args=(a, b, wa, wb, t, m, n_total), jac=True,
                   method="L-BFGS-B", options=LBFGS_OPTIONS)
    z = res.x[:m]
    return float(res.fun), z - z.mean(), float(res.x[m]), res


def bt_nll(z, a, b, wa, wb, m, n_total):
    """Bradley–Terry NLL per comparison (fractional counts allowed) and its gradient in z."""
    x = z - z.mean()
    d = x[a] - x[b]
    ll = wa * log_expit(d) + wb * log_expit(-d)
    g_d = wa - (wa + wb) * expit(d)
    g_x = np.bincount(a, g_d, m) - np.bincount(b, g_d, m)
    return -ll.sum() / n_total, -(g_x - g_x.mean()) / n_total


def fit_bt_half_ties(data):
    """MLE of Bradley–Terry with each tie counted as half a win for both sides."""
    a, b, wa, wb, t, m = cells(data)
    wa, wb = wa + t / 2, wb + t / 2
    n_total = float((wa + wb).sum())
    res = minimize(bt_nll, np.zeros(m), args=(a, b, wa, wb, m, n_total), jac=True,
                   method="L-BFGS-B", options=LBFGS_OPTIONS)
    return float(res.fun), res.x - res.x.mean(), res
