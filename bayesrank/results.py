"""One results object for MAP and NUTS fits: :class:`Fit`, backed by an ArviZ DataTree.

Groups of ``fit.tree``:

``posterior``
    NUTS: the posterior draws of every model variable. MAP: draws of the scores from their
    asymptotic normal distribution (used for rank intervals), ``attrs["inference"]`` says so.
``map`` (MAP only)
    The estimate and standard error of every model variable (``<name>``, ``<name>_se``), the
    scores' covariance ``score_cov``, and the free coordinates ``theta`` with their
    covariance ``theta_cov`` (inverse observed information) from which all else follows.
``log_likelihood`` (NUTS only)
    Pointwise log-likelihood per cell, for LOO.
``sample_stats`` (NUTS only)
``observed_data`` / ``constant_data``
    The cell counts the model saw and the cells' item (judge, position) indices.
``data``
    The comparisons as read, before the framework's tie convention (for observed rates),
    with the per-cell ``covariate`` when the data have one (covariate frameworks).

The root ``attrs`` hold the framework spec, the method, diagnostics and warnings (JSON), so
:meth:`Fit.load` restores everything from one NetCDF file.
"""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr
from scipy.stats import norm

from bayesrank.data.comparisons import OUTCOMES, Comparisons
from bayesrank.frameworks.base import OBSERVED, Framework

_CELL_VARS = ("a", "b", "judge", "first")


class Fit:
    """A fitted framework: leaderboard, ranks, probabilities, diagnostics, save / load.

    Create fits with ``Framework.fit`` (e.g. ``bayesrank.Davidson(k_tie=1).fit(data)``);
    load saved ones with :meth:`Fit.load`.

    Attributes
    ----------
    framework : Framework
    data : Comparisons
        The comparisons as given.
    model_data : Comparisons
        The cells the likelihood saw (after the framework's tie convention).
    method : {"map", "nuts"}
    tree : xarray.DataTree
    warnings : list of str
        Statistical warnings in words (data, convergence, sampling).
    diagnostics : dict
    """

    def __init__(self, framework, data, model_data, method, tree, warnings, diagnostics):
        self.framework = framework
        self.data = data
        self.model_data = model_data
        self.method = method
        self.tree = tree
        self.warnings = list(warnings)
        self.diagnostics = dict(diagnostics)

    # ================================================================ construction
    @classmethod
    def from_map(cls, framework, data, model_data, *, theta, cov_theta, values, jacobian, layout, compiled,
                 diagnostics, warnings, n_draws, random_seed):
        """Assemble a MAP fit (called by :func:`bayesrank.inference.fit_map`)."""
        cov_q_diag = ((jacobian @ cov_theta) * jacobian).sum(axis=1)
        se = np.sqrt(np.clip(cov_q_diag, 0, None))
        items = list(model_data.items)
        coords = {"item": items, "item_": items, "free": np.arange(theta.size),
                  "free_": np.arange(theta.size)}
        point = {}
        for name, sl, shape in layout:
            dims = _dims(compiled.model, name, shape)
            point[name] = (dims, values[name])
            point[f"{name}_se"] = (dims, se[sl].reshape(shape))
            coords.update({d: list(compiled.model.coords[d]) for d in dims if d in compiled.model.coords})
        score_sl = dict((n, s) for n, s, _ in layout)["score"]
        J_score = jacobian[score_sl]
        score_cov = J_score @ cov_theta @ J_score.T
        map_ds = xr.Dataset(
            {**point, "score_cov": (("item", "item_"), score_cov),
             "theta": ("free", theta), "theta_cov": (("free", "free_"), cov_theta)},
            coords={k: v for k, v in coords.items()},
        )
        rng = np.random.default_rng(random_seed)
        if np.all(np.isfinite(score_cov)):
            factor = _psd_factor(score_cov)
            z = rng.standard_normal((n_draws, factor.shape[1]))
            draws = values["score"] + z @ factor.T
        else:
            draws = np.full((n_draws, len(items)), np.nan)
        posterior = xr.Dataset({"score": (("chain", "draw", "item"), draws[None])},
                               coords={"chain": [0], "draw": np.arange(n_draws), "item": items},
                               attrs={"inference": "draws from the asymptotic normal of the MLE"})
        tree = _tree(framework, data, posterior=posterior, extra={"map": map_ds})
        fit = cls(framework, data, model_data, "map", tree, warnings, diagnostics)
        fit.__dict__["_compiled"] = compiled
        return fit

    @classmethod
    def from_nuts(cls, framework, data, model_data, *, tree, diagnostics, warnings):
        """Assemble a NUTS fit (called by :func:`bayesrank.inference.fit_nuts`)."""
        tree = tree.copy()
        tree["data"] = xr.DataTree(_data_group(data))
        tree.attrs.update({"bayesrank_framework": framework.name, "bayesrank_source": data.source})
        return cls(framework, data, model_data, "nuts", tree, warnings, diagnostics)

    # ================================================================ basic numbers
    @property
    def converged(self) -> bool:
        """MAP: the optimiser converged and the information is non-singular. NUTS: r̂ ≤ 1.01,
        no divergences and ESS ≥ 400."""
        return bool(self.diagnostics.get("converged", False))

    @property
    def items(self) -> list[str]:
        return list(self.model_data.items)

    @property
    def n_params(self) -> int:
        """Free parameters after constraints."""
        return self.framework.count_free_parameters(self.model_data)

    @cached_property
    def cell_log_probs(self) -> np.ndarray:
        """``(n_cells, 3)`` log P(a wins, b wins, tie) per model cell.

        MAP: at the estimate. NUTS: log of the posterior mean probabilities.
        """
        if self.method == "map":
            return self._compiled.cell_log_probs(self.tree["map"]["theta"].values)
        return self.log_probs_of(self._compiled)

    def log_probs_of(self, compiled, max_draws: int = 200) -> np.ndarray:
        """``(n_cells, 3)`` log-probabilities of the cells of another compiled model of this
        framework (e.g. a test split): MAP — at the estimated variables; NUTS — log of the
        posterior-mean probabilities over at most ``max_draws`` draws."""
        if self.method == "map":
            names = [v.name for v in compiled.model.free_RVs]
            return compiled.cell_log_probs_from_values({n: self.tree["map"][n].values for n in names})
        probs = np.mean([np.exp(compiled.cell_log_probs_from_values(v)) for v in self._posterior_values(max_draws)],
                        axis=0)
        with np.errstate(divide="ignore"):
            return np.log(probs)

    @cached_property
    def loglik(self) -> float:
        """Total log-likelihood (multinomial constant dropped).

        MAP: at the MLE. NUTS: posterior mean of the total log-likelihood.
        """
        if self.method == "nuts":
            ll = self.tree["log_likelihood"][OBSERVED].values
            return float(ll.sum(axis=-1).mean())
        return float(sum(self.cross_entropies(total=True).values()))

    @property
    def n_comparisons(self) -> float:
        """Comparisons the likelihood is normalised by (for BT with dropped ties: without ties)."""
        return self.model_data.n_comparisons

    @property
    def nll(self) -> float:
        """Mean negative log-likelihood per comparison (the leaderbot paper's normalisation)."""
        return -self.loglik / self.n_comparisons

    def cross_entropies(self, total: bool = False) -> dict[str, float]:
        """Per-outcome cross-entropies H_win, H_loss, H_tie (paper eq. D.2); they sum to ``nll``.

        ``win`` is "item a of the cell wins" with a the alphabetically first item, as in the
        paper. With ``total=True`` the (negative) sums are returned unnormalised.
        """
        counts = self.model_data.counts()
        lp = self.cell_log_probs
        with np.errstate(invalid="ignore"):
            terms = np.where(counts > 0, counts * lp, 0.0).sum(axis=0)
        if total:
            return dict(zip(("win", "loss", "tie"), terms))
        return dict(zip(("win", "loss", "tie"), 0.0 - terms / self.n_comparisons))  # 0.0 -: no -0.0

    # ================================================================ scores and ranks
    def _score_draws(self) -> np.ndarray:
        s = self.tree["posterior"]["score"].transpose("chain", "draw", "item").values
        return s.reshape(-1, s.shape[-1])

    def scores(self) -> pd.Series:
        """Point scores: the MLE (MAP) or posterior mean (NUTS), indexed by item."""
        if self.method == "map":
            s = self.tree["map"]["score"].values
        else:
            s = self._score_draws().mean(axis=0)
        return pd.Series(s, index=pd.Index(self.items, name="name"), name="score")

    def score_se(self) -> pd.Series:
        """Standard error (MAP, Wald) or posterior sd (NUTS) of each centred score."""
        if self.method == "map":
            s = self.tree["map"]["score_se"].values
        else:
            s = self._score_draws().std(axis=0, ddof=1)
        return pd.Series(s, index=pd.Index(self.items, name="name"), name="se")

    def rank_draws(self) -> np.ndarray:
        """Ranks (1 = best) per draw: posterior draws (NUTS) or asymptotic-normal draws (MAP)."""
        s = self._score_draws()
        return 1 + (s[:, None, :] > s[:, :, None]).sum(axis=-1)

    def rank_distribution(self) -> pd.DataFrame:
        """P(rank = r) for every item (rows) and rank (columns)."""
        ranks = self.rank_draws()
        m = ranks.shape[1]
        probs = np.stack([(ranks == r).mean(axis=0) for r in range(1, m + 1)], axis=1)
        return pd.DataFrame(probs, index=pd.Index(self.items, name="name"),
                            columns=pd.RangeIndex(1, m + 1, name="rank"))

    def leaderboard(self, level: float = 0.95, elo: bool = False) -> pd.DataFrame:
        """The tidy leaderboard, best first.

        Parameters
        ----------
        level : float
            Interval level: Wald intervals (MAP) or equal-tailed posterior intervals (NUTS)
            for scores; rank intervals from the draws.
        elo : bool
            Add ``elo`` = 1000 + 400 · score / ln 10 (the Chatbot Arena convention).

        Returns
        -------
        DataFrame
            ``rank, name, score, se, lower, upper, rank_lower, rank_upper, n_comparisons``,
            observed rates ``win_rate, tie_rate, loss_rate`` and predicted
            ``pred_win_rate, pred_tie_rate, pred_loss_rate``. For NUTS ``se`` is the posterior
            standard deviation.
        """
        alpha = (1 - level) / 2
        score, se = self.scores(), self.score_se()
        if self.method == "map":
            z = norm.ppf(1 - alpha)
            lower, upper = score - z * se, score + z * se
        else:
            draws = self._score_draws()
            lower = pd.Series(np.quantile(draws, alpha, axis=0), index=score.index)
            upper = pd.Series(np.quantile(draws, 1 - alpha, axis=0), index=score.index)
        ranks = self.rank_draws()
        if np.isnan(self._score_draws()).any():  # not identified: no rank intervals
            rank_lower = rank_upper = pd.array([pd.NA] * len(self.items), dtype="Int64")
        else:
            rank_lower = np.quantile(ranks, alpha, axis=0, method="lower").astype(int)
            rank_upper = np.quantile(ranks, 1 - alpha, axis=0, method="higher").astype(int)
        table = pd.DataFrame({
            "name": self.items,
            "score": score.values,
            "se": se.values,
            "lower": lower.values,
            "upper": upper.values,
            "rank_lower": rank_lower,
            "rank_upper": rank_upper,
        })
        if elo:
            scale = 400 / np.log(10)
            for col in ("score", "lower", "upper"):
                table[f"elo_{col}" if col != "score" else "elo"] = 1000 + scale * table[col]
        observed = self.data.item_totals()
        n = observed["n_comparisons"].to_numpy()
        table["n_comparisons"] = n
        with np.errstate(invalid="ignore", divide="ignore"):
            table["win_rate"] = observed["wins"].to_numpy() / n
            table["tie_rate"] = observed["ties"].to_numpy() / n
            table["loss_rate"] = observed["losses"].to_numpy() / n
        table = table.join(self.predicted_rates().reset_index(drop=True))
        table = table.sort_values("score", ascending=False, kind="stable").reset_index(drop=True)
        rank = pd.array(np.arange(1, len(table) + 1), dtype="Int64")
        rank[table["score"].isna().to_numpy()] = pd.NA  # no estimate, no rank
        table.insert(0, "rank", rank)
        return table

    def predicted_rates(self) -> pd.DataFrame:
        """Per item: model-predicted win, tie and loss rates over its observed comparisons."""
        d = self.model_data
        p = np.exp(self.cell_log_probs)
        n = d.totals
        m = d.n_items
        win = np.bincount(d.a, n * p[:, 0], m) + np.bincount(d.b, n * p[:, 1], m)
        loss = np.bincount(d.a, n * p[:, 1], m) + np.bincount(d.b, n * p[:, 0], m)
        tie = np.bincount(d.a, n * p[:, 2], m) + np.bincount(d.b, n * p[:, 2], m)
        tot = np.bincount(d.a, n, m) + np.bincount(d.b, n, m)
        with np.errstate(invalid="ignore", divide="ignore"):
            return pd.DataFrame({"pred_win_rate": win / tot, "pred_tie_rate": tie / tot,
                                 "pred_loss_rate": loss / tot}, index=pd.Index(self.items, name="name"))

    def differences(self, level: float = 0.95) -> pd.DataFrame:
        """Score differences s_i − s_j for every pair i < j (in leaderboard order).

        Returns ``item_i, item_j, difference, se, lower, upper, p_greater`` where ``p_greater``
        is P(s_i > s_j) (asymptotic normal for MAP, posterior for NUTS) and the interval is
        Wald (MAP) or equal-tailed (NUTS).
        """
        order = self.scores().sort_values(ascending=False).index
        idx = [self.items.index(x) for x in order]
        i, j = np.triu_indices(len(idx), k=1)
        i, j = np.asarray(idx)[i], np.asarray(idx)[j]
        alpha = (1 - level) / 2
        if self.method == "map":
            s = self.tree["map"]["score"].values
            C = self.tree["map"]["score_cov"].values
            diff = s[i] - s[j]
            se = np.sqrt(np.clip(C[i, i] + C[j, j] - 2 * C[i, j], 0, None))
            z = norm.ppf(1 - alpha)
            lower, upper = diff - z * se, diff + z * se
            with np.errstate(invalid="ignore", divide="ignore"):
                p = norm.cdf(diff / se)
        else:
            draws = self._score_draws()
            dd = draws[:, i] - draws[:, j]
            diff, se = dd.mean(axis=0), dd.std(axis=0, ddof=1)
            lower, upper = np.quantile(dd, alpha, axis=0), np.quantile(dd, 1 - alpha, axis=0)
            p = (dd > 0).mean(axis=0)
        names = np.asarray(self.items, dtype=object)
        return pd.DataFrame({"item_i": names[i], "item_j": names[j], "difference": diff, "se": se,
                             "lower": lower, "upper": upper, "p_greater": p})

    # ================================================================ other parameters
    def parameters(self) -> pd.DataFrame:
        """Estimates (MAP; with se) or posterior mean / sd (NUTS) of the non-score variables."""
        rows = []
        names = [n for n in self.framework.reported() if n != "score"]
        for name in names:
            if self.method == "map":
                est = self.tree["map"][name].values.ravel()
                se = self.tree["map"][f"{name}_se"].values.ravel()
            else:
                x = self.tree["posterior"][name].values
                x = x.reshape(-1, *x.shape[2:]).reshape(x.shape[0] * x.shape[1], -1)
                est, se = x.mean(axis=0), x.std(axis=0, ddof=1)
            for k, (e, s) in enumerate(zip(est, se)):
                rows.append({"parameter": name, "index": k, "estimate": e, "se": s})
        return pd.DataFrame(rows, columns=["parameter", "index", "estimate", "se"])

    def judges(self, level: float = 0.95) -> pd.DataFrame:
        """Judge discriminations γ_k (judge-aware frameworks).

        Returns ``name, gamma, se, lower, upper, lower_log, upper_log``: MAP — the delta-method
        Wald interval of γ and the log-scale interval exp(log γ̂ ± z·se(log γ̂)); NUTS — posterior
        mean, sd and the equal-tailed interval (both interval columns equal).
        """
        if "gamma" not in self.framework.reported():
            from bayesrank.errors import BayesrankError

            raise BayesrankError(f"{self.framework.label} has no judge discriminations.")
        names = list(self.model_data.judges)
        alpha = (1 - level) / 2
        if self.method == "map":
            m = self.tree["map"]
            gamma, se = m["gamma"].values, m["gamma_se"].values
            log_gamma, log_se = m["log_gamma"].values, m["log_gamma_se"].values
            z = norm.ppf(1 - alpha)
            lower, upper = gamma - z * se, gamma + z * se
            lower_log, upper_log = np.exp(log_gamma - z * log_se), np.exp(log_gamma + z * log_se)
        else:
            g = self.tree["posterior"]["gamma"].values.reshape(-1, len(names))
            gamma, se = g.mean(axis=0), g.std(axis=0, ddof=1)
            lower, upper = np.quantile(g, alpha, axis=0), np.quantile(g, 1 - alpha, axis=0)
            lower_log, upper_log = lower, upper
        return pd.DataFrame({"name": names, "gamma": gamma, "se": se, "lower": lower, "upper": upper,
                             "lower_log": lower_log, "upper_log": upper_log})

    # ================================================================ prediction
    @cached_property
    def _compiled(self):
        from bayesrank.inference.compiled import compiled_model

        return compiled_model(self.framework, self.model_data, prior="flat" if self.method == "map" else "weak")

    def predict(self, item_a, item_b, *, judge=None, first=None, covariate=None, level: float = 0.95,
                max_draws: int = 1000) -> pd.DataFrame:
        """Predicted outcome probabilities for any pairs, compared or not, with intervals.

        Parameters
        ----------
        item_a, item_b : str or sequence of str
            Item names.
        judge : str or sequence of str, optional
            Judge names, for frameworks with judges.
        first : {"a", "b"} or sequence, optional
            Which item is shown first, for frameworks with position effects (default "a").
        covariate : float or sequence of float, optional
            The covariate z of each comparison, for covariate frameworks (default 0: for a
            standardised covariate, its mean).
        level : float
            Interval level: Wald by the delta method (MAP, clipped to [0, 1]) or equal-tailed
            posterior intervals (NUTS, over at most ``max_draws`` draws).

        Returns
        -------
        DataFrame
            ``item_a, item_b[, judge]`` and for each outcome ``o`` in ``win_a, win_b, tie``:
            ``p_o, p_o_lower, p_o_upper``.
        """
        a_names, b_names = np.atleast_1d(item_a).astype(object), np.atleast_1d(item_b).astype(object)
        a_names, b_names = np.broadcast_arrays(a_names, b_names)
        index = {"item_a": self._indices(a_names, self.items, "item"),
                 "item_b": self._indices(b_names, self.items, "item")}
        frame = pd.DataFrame({"item_a": a_names, "item_b": b_names})
        if self.model_data.judges is not None:
            if judge is None:
                from bayesrank.errors import BayesrankError

                raise BayesrankError(f"this framework has judges; pass judge= (one of {list(self.model_data.judges)}).")
            judges = np.broadcast_to(np.atleast_1d(judge).astype(object), a_names.shape)
            index["judge_index"] = self._indices(judges, list(self.model_data.judges), "judge")
            frame["judge"] = judges
        pos = np.broadcast_to(np.atleast_1d("a" if first is None else first).astype(object), a_names.shape)
        index["first"] = np.array([0 if str(p) in ("a", "0") else 1 for p in pos])
        index["covariate"] = np.broadcast_to(np.asarray(0.0 if covariate is None else covariate, float),
                                             a_names.shape)
        alpha = (1 - level) / 2
        if self.method == "map":
            theta = self.tree["map"]["theta"].values
            cov = self.tree["map"]["theta_cov"].values
            probs, jac = self._compiled.predict_at_theta(theta, index)
            se = np.sqrt(np.clip(((jac @ cov) * jac).sum(axis=1), 0, None)).reshape(probs.shape)
            z = norm.ppf(1 - alpha)
            lower, upper = np.clip(probs - z * se, 0, 1), np.clip(probs + z * se, 0, 1)
        else:
            draws = np.stack(list(self._draw_probs(index, max_draws)))
            probs = draws.mean(axis=0)
            lower, upper = np.quantile(draws, alpha, axis=0), np.quantile(draws, 1 - alpha, axis=0)
        for k, outcome in enumerate(OUTCOMES):
            frame[f"p_{outcome}"] = probs[:, k]
            frame[f"p_{outcome}_lower"] = lower[:, k]
            frame[f"p_{outcome}_upper"] = upper[:, k]
        return frame

    @staticmethod
    def _indices(names, known, what):
        from bayesrank.errors import BayesrankError

        lookup = {n: k for k, n in enumerate(known)}
        bad = [n for n in names if n not in lookup]
        if bad:
            raise BayesrankError(f"unknown {what} {bad[0]!r}; known {what}s: {', '.join(list(known)[:10])}...")
        return np.array([lookup[n] for n in names], dtype=np.int64)

    def _posterior_values(self, max_draws):
        post = self.tree["posterior"]
        names = [v.name for v in self._compiled.model.free_RVs]
        n_draws = post.sizes["chain"] * post.sizes["draw"]
        keep = np.linspace(0, n_draws - 1, min(max_draws, n_draws)).astype(int)
        flat = {n: post[n].values.reshape(n_draws, *post[n].shape[2:]) for n in names}
        for k in keep:
            yield {n: flat[n][k] for n in names}

    def _draw_probs(self, index, max_draws):
        for values in self._posterior_values(max_draws):
            yield self._compiled.predict_at_values(values, index)

    # ================================================================ reporting
    def summary(self) -> dict:
        """Headline numbers (as in the CLI's JSON, without the items)."""
        ce = self.cross_entropies()
        return {
            "framework": self.framework.name,
            "spec": self.framework.spec(),
            "method": self.method,
            "n_items": self.model_data.n_items,
            "n_comparisons": self.data.n_comparisons,
            "n_used": self.n_comparisons,
            "n_cells": self.model_data.n_cells,
            "nll": self.nll,
            "loglik": self.loglik,
            "cross_entropy": ce,
            "n_params": self.n_params,
            "converged": self.converged,
            "mle_exists": bool(self.diagnostics.get("mle_exists", True)) if self.method == "map" else None,
            "diagnostics": self.diagnostics,
            "warnings": self.warnings,
        }

    def to_json(self, level: float = 0.95) -> dict:
        """The CLI contract: summary plus ``items`` sorted by rank."""
        board = self.leaderboard(level)
        cols = ["name", "rank", "score", "se", "lower", "upper", "rank_lower", "rank_upper"]
        items = [{k: _plain(v) for k, v in row.items()} for row in board[cols].to_dict("records")]
        out = {**self.summary(), "items": items}
        if "gamma" in self.framework.reported():
            out["judges"] = self.judges(level).to_dict("records")
        return _plain(out)

    def __repr__(self) -> str:
        state = "converged" if self.converged else "NOT converged"
        return (f"<Fit {self.framework.label} by {self.method} on {self.model_data!r}: "
                f"nll={self.nll:.5f}, {state}, {len(self.warnings)} warning(s)>")

    # ================================================================ persistence
    def save(self, path: str | Path) -> Path:
        """Write the fit to one NetCDF file (``Fit.load`` restores it exactly)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tree = self.tree.copy()
        tree.attrs.update({
            "bayesrank_method": self.method,
            "bayesrank_spec": json.dumps(self.framework.spec()),
            "bayesrank_warnings": json.dumps(self.warnings),
            "bayesrank_diagnostics": json.dumps(_plain(self.diagnostics)),
        })
        encoding = {
            node.path: {name: {"zlib": True, "complevel": 4} for name in node.data_vars
                        if node[name].dtype.kind in "fiu"}
            for node in tree.subtree
        }
        tree.to_netcdf(path, engine="h5netcdf", encoding={k: v for k, v in encoding.items() if v})
        return path

    @classmethod
    def load(cls, path: str | Path) -> Fit:
        """Read a fit written by :meth:`save`."""
        from bayesrank.frameworks import framework_from_spec

        tree = xr.open_datatree(path).load()
        attrs = tree.attrs
        framework = framework_from_spec(json.loads(attrs["bayesrank_spec"]))
        data = _comparisons_from_group(tree["data"], attrs)
        model_data = framework.prepare(data)
        return cls(framework, data, model_data, attrs["bayesrank_method"], tree,
                   json.loads(attrs["bayesrank_warnings"]), json.loads(attrs["bayesrank_diagnostics"]))


# ==================================================================== helpers
def _tree(framework: Framework, data: Comparisons, *, posterior, extra=None) -> xr.DataTree:
    groups = {"posterior": posterior, "data": _data_group(data)}
    groups.update(extra or {})
    tree = xr.DataTree.from_dict(groups)
    tree.attrs.update({"bayesrank_framework": framework.name, "bayesrank_source": data.source})
    return tree


def _data_group(data: Comparisons) -> xr.Dataset:
    cells = {"a": data.a, "b": data.b}
    if data.judge is not None:
        cells["judge"] = data.judge
    if data.first is not None:
        cells["first"] = data.first
    if getattr(data, "covariate", None) is not None:  # CovariateComparisons
        cells["covariate"] = np.asarray(data.covariate, dtype=float)
    ds = xr.Dataset(
        {**{k: ("data_cell", v) for k, v in cells.items()},
         "counts": (("data_cell", "outcome"), data.counts()),
         "ties_bothbad": ("data_cell", data.ties_bothbad)},
        coords={"outcome": list(OUTCOMES), "item": list(data.items)},
        attrs={"dropped": json.dumps(dict(data.dropped)), "source": data.source},
    )
    if data.judges is not None:
        ds = ds.assign_coords(judge_name=list(data.judges))
    return ds


def _comparisons_from_group(node, attrs) -> Comparisons:
    ds = node.to_dataset()
    counts = ds["counts"].values
    cls, extra = Comparisons, {}
    if "covariate" in ds:
        from bayesrank.frameworks.judge_covariate import CovariateComparisons

        cls, extra = CovariateComparisons, {"covariate": ds["covariate"].values.astype(float)}
    return cls(
        items=tuple(str(x) for x in ds["item"].values),
        a=ds["a"].values.astype(np.int64),
        b=ds["b"].values.astype(np.int64),
        wins_a=counts[:, 0], wins_b=counts[:, 1], ties=counts[:, 2],
        ties_bothbad=ds["ties_bothbad"].values,
        judges=tuple(str(x) for x in ds["judge_name"].values) if "judge_name" in ds else None,
        judge=ds["judge"].values.astype(np.int64) if "judge" in ds else None,
        first=ds["first"].values.astype(np.int64) if "first" in ds else None,
        dropped=json.loads(ds.attrs.get("dropped", "{}")),
        source=ds.attrs.get("source", ""),
        **extra,
    )


def _dims(model, name, shape):
    dims = model.named_vars_to_dims.get(name)
    if dims and len(dims) == len(shape) and all(d is not None for d in dims):
        return tuple(dims)
    return tuple(f"{name}_dim_{k}" for k in range(len(shape)))


def _psd_factor(cov: np.ndarray) -> np.ndarray:
    """A factor L with L Lᵀ = cov (Cholesky, or an eigen-factor for semi-definite matrices)."""
    try:
        return np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        w, v = np.linalg.eigh(cov)
        return v * np.sqrt(np.clip(w, 0, None))


def _plain(x):
    """Numpy scalars / arrays → JSON-able Python values; non-finite floats → None."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return _plain(x.tolist())
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if np.isfinite(x) else None
    if x is pd.NA:
        return None
    return x
