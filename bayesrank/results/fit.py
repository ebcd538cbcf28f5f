"""Fitting entry point and :class:`Fit`, a thin façade over a fit's DataTree for notebooks.

Everything a :class:`Fit` answers is a function of its ``tree`` (the functions live in
:mod:`bayesrank.results`); it holds nothing else, so no other fit can change it, and a fit
saved and loaded answers exactly as before.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from bayesrank.data.clusters import cluster_columns
from bayesrank.data.comparisons import Comparisons
from bayesrank.data.load import load
from bayesrank.errors import FitFileError, ModelSpecError
from bayesrank.inference.dynamic import fit_time
from bayesrank.inference.map import fit_map
from bayesrank.inference.nuts import fit_nuts
from bayesrank.model.dynamic import Dynamic
from bayesrank.model.framework import STYLE, Framework
from bayesrank.results import (
    estimates,
    hja,
    io,
    leaderboard,
    likelihood,
    predict,
    summary,
    trajectories as over_time,
    update as updates,
)
from bayesrank.results.categories import category_leaderboards
from bayesrank.results.elo import Elo, elo
from bayesrank.results.judges import judges, presentation_order, verdict_shares
from bayesrank.results.matches import match_probabilities
from bayesrank.results.random_effects import RandomEffectsSummary, random_effects
from bayesrank.results.ranksets import rank_sets, top_set

#: Inference methods of :func:`fit`.
METHODS = {"map": fit_map, "nuts": fit_nuts}
#: … and of a fit over time (:class:`~bayesrank.model.dynamic.Dynamic`): its fast path keeps the jump prior.
TIME_METHODS = {"map": fit_time, "nuts": fit_nuts}


def fit(framework: Framework, data, method: str = "map", **kwargs) -> Fit:
    """Fit a framework to comparisons.

    Parameters
    ----------
    framework : Framework
        E.g. ``bayesrank.Davidson(k_tie=1)``.
    data : Comparisons, DataFrame, str or Path
        Anything :func:`bayesrank.load` accepts (a bundled dataset name, a path, a table).
    method : {"map", "nuts"}
        ``"map"``: maximum likelihood (flat priors) with asymptotic Wald intervals
        (:func:`~bayesrank.inference.map.fit_map`); ``"nuts"``: posterior sampling with the
        weakly informative priors (:func:`~bayesrank.inference.nuts.fit_nuts`). For a
        :class:`~bayesrank.model.dynamic.Dynamic` framework ``"map"`` is the fast path of
        :func:`~bayesrank.inference.dynamic.fit_time` (the jump prior kept, its scales by empirical
        Bayes).
    **kwargs
        Passed to the method (``draws``, ``information``, ``intervals``, ``cluster``;
        ``draws``, ``tune``, ``chains``, ``random_seed``, ``sampler``, ...). Records given as a
        path or a table are read with the cluster columns that ``cluster=`` and the framework
        (:class:`~bayesrank.model.random_effects.RandomEffects`) name.

    Returns
    -------
    Fit
        It records its options and where its data came from (:attr:`Fit.lineage`), so that
        :meth:`Fit.update` can add new records to it later.

    Examples
    --------
    >>> import bayesrank as br
    >>> f = br.fit(br.Davidson(k_tie=1), "arena-2024")
    >>> f.leaderboard()[["rank", "name", "score"]].head(3).round(2)
       rank                     name  score
    0     1        chatgpt-4o-latest   1.87
    1     2  gemini-1.5-pro-exp-0801   1.68
    2     3        gpt-4o-2024-05-13   1.55
    """
    if method not in METHODS:
        raise ModelSpecError(f"unknown method {method!r}; use one of {', '.join(METHODS)}.")
    if not isinstance(framework, Framework):
        raise ModelSpecError("expected a framework such as bayesrank.Davidson(k_tie=1), got "
                             f"{type(framework).__name__}.")
    asked = cluster_columns(kwargs.get("cluster"))
    if method == "nuts" and asked:
        raise ModelSpecError("cluster= sets how MAP intervals allow for dependent comparisons (intervals='sandwich' "
                             "or 'bootstrap'); a posterior allows for them only through the model: fit "
                             f"bayesrank.RandomEffects(..., cluster={asked[0]!r}) with method='nuts'.")
    if method == "nuts":
        kwargs.pop("cluster", None)
    methods = TIME_METHODS if isinstance(framework, Dynamic) else METHODS
    options = method_options(method, kwargs, methods)
    comparisons = load(data, cluster=tuple(dict.fromkeys(asked + framework.clusters())))
    tree = methods[method](framework, comparisons, **options)
    return Fit(updates.recorded(tree, method, options, [updates.lineage_entry(comparisons)]))


def _options_of(method: str, methods: Mapping[str, Callable] = METHODS) -> dict[str, object]:
    """The keyword options of a method's function with their type hints."""
    function = methods[method]
    hints = typing.get_type_hints(function)
    return {name: hints.get(name) for name, p in inspect.signature(function).parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY}


def method_options(method: str, options: dict, methods: Mapping[str, Callable] = METHODS) -> dict:
    """The options of ``fit(method=...)`` checked against the method's function before any
    work: each must be one of its options, and whole numbers, numbers and booleans must be of
    that kind (NumPy scalars are taken as the Python number they hold). ``methods`` maps the
    method names to their functions (:data:`TIME_METHODS` for a fit over time).

    Raises
    ------
    ModelSpecError
        An option the method does not have (naming the function and its options, and the
        method that has it), or a value of the wrong kind.
    """
    known = _options_of(method, methods)
    where = f"bayesrank.fit(method={method!r})"
    unknown = [k for k in options if k not in known]
    if unknown:
        elsewhere = {k: m for k in unknown for m in methods if m != method and k in _options_of(m, methods)}
        hint = "".join(f"; {k} is an option of method={m!r}" for k, m in elsewhere.items())
        raise ModelSpecError(f"{', '.join(unknown)} {'is not an option' if len(unknown) == 1 else 'are not options'} "
                             f"of {where}; its options: {', '.join(known)}{hint}.")
    out = {}
    for name, value in options.items():
        if isinstance(value, np.generic):
            value = value.item()
        kinds = set(typing.get_args(known[name]) or (known[name],))
        if value is not None and kinds & {int, float, bool} and not kinds - {int, float, bool, type(None), str}:
            whole = isinstance(value, int) and not isinstance(value, bool)
            number = whole or (isinstance(value, float) and not isinstance(value, bool))
            ok = ((bool in kinds and isinstance(value, bool)) or (int in kinds and whole)
                  or (float in kinds and number) or (str in kinds and isinstance(value, str)))
            if not ok:
                wanted = " or ".join(w for k, w in ((bool, "true or false"), (int, "a whole number"),
                                                   (float, "a number"), (str, "text")) if k in kinds)
                raise ModelSpecError(f"{name} of {where} must be {wanted}, got {value!r}.")
        out[name] = value
    return out


class Fit:
    """A fitted framework: leaderboard, ranks, probabilities, diagnostics, save / load.

    Parameters
    ----------
    tree : xarray.DataTree
        The fit (see :mod:`bayesrank.inference.tree`).
    """

    def __init__(self, tree: xr.DataTree):
        self.tree = tree

    # ------------------------------------------------------------------ what was fitted
    @cached_property
    def framework(self) -> Framework:
        return io.framework_of(self.tree)

    @cached_property
    def data(self) -> Comparisons:
        """The comparisons as given."""
        return io.data_of(self.tree)

    @cached_property
    def model_data(self) -> Comparisons:
        """The cells the likelihood saw (after the framework's tie convention)."""
        return io.model_data_of(self.tree)

    @property
    def method(self) -> str:
        return io.method_of(self.tree)

    @cached_property
    def diagnostics(self) -> dict:
        return io.diagnostics_of(self.tree)

    @cached_property
    def warnings(self) -> list[str]:
        """Statistical warnings in words (data, convergence, sampling), and the intervals at 95 %
        that the fit's draws are too few for (:func:`~bayesrank.results.estimates.too_few_draws`;
        the tables at another level say so for theirs)."""
        missing = estimates.too_few_draws(self.tree)
        return io.warnings_of(self.tree) + ([missing] if missing else [])

    @property
    def converged(self) -> bool:
        """MAP: the optimiser converged, the MLE exists and the information is non-singular.
        NUTS: r̂ ≤ 1.01, no divergences and ESS ≥ 400."""
        return bool(self.diagnostics.get("converged", False))

    @property
    def convergence(self) -> str:
        """:attr:`converged` in words: ``"converged"``, ``"NOT converged"``, or — a NUTS run of
        one chain, where r̂ (which compares chains) is not defined — ``"convergence unchecked
        (one chain)"``."""
        if self.converged:
            return "converged"
        if self.method == "nuts" and self.diagnostics.get("chains") == 1:
            return "convergence unchecked (one chain)"
        return "NOT converged"

    @property
    def items(self) -> list[str]:
        return leaderboard.items(self.tree)

    @property
    def lineage(self) -> list[dict]:
        """The sets of records behind the fit, oldest first: ``source``, ``records``,
        ``comparisons``, ``cells``, ``ids`` (whether they carried record ids), ``new_models`` and
        ``new_judges`` (for updates) and ``added`` (UTC time; metadata no number depends on)."""
        return updates.lineage_of(self.tree)

    @property
    def n_params(self) -> int:
        """Free parameters after constraints."""
        return int(self.tree.attrs["bayesrank_n_params"])

    # ------------------------------------------------------------------ numbers
    @property
    def loglik(self) -> float:
        return likelihood.loglik(self.tree)

    @property
    def nll(self) -> float:
        return likelihood.nll(self.tree)

    @property
    def n_comparisons(self) -> float:
        return likelihood.n_comparisons(self.tree)

    def cross_entropies(self, total: bool = False) -> dict[str, float]:
        return likelihood.cross_entropies(self.tree, total)

    def scores(self) -> pd.Series:
        return leaderboard.scores(self.tree)

    def leaderboard(self, level: float = 0.95, elo: bool | Elo = False, at=None) -> pd.DataFrame:
        """The leaderboard (:func:`bayesrank.results.leaderboard.leaderboard`); a fit over time gives
        the one as of the date ``at`` (default: its last period;
        :func:`bayesrank.results.trajectories.leaderboard_at`), without Elo columns."""
        if over_time.is_time_fit(self.tree):
            if elo is not False:
                raise ModelSpecError("Fit.leaderboard: elo is not available for a fit over time; use at=, level=.")
            return over_time.leaderboard_at(self.tree, at, level)
        if at is not None:
            raise ModelSpecError("Fit.leaderboard: at= needs a fit over time (bayesrank.Dynamic); valid options "
                                 "here: level, elo.")
        return leaderboard.leaderboard(self.tree, level, elo)

    # ------------------------------------------------------------------ over time
    @property
    def periods(self) -> list[str]:
        """Start dates of the periods of a fit over time."""
        return over_time.periods(self.tree)

    def trajectories(self, level: float = 0.95) -> pd.DataFrame:
        """Every item's score per period with intervals (:func:`bayesrank.results.trajectories.trajectories`)."""
        return over_time.trajectories(self.tree, level)

    def changes(self, threshold: float = over_time.CHANGE_THRESHOLD) -> pd.DataFrame:
        """Change points of probability ≥ ``threshold`` (:func:`bayesrank.results.trajectories.changes`)."""
        return over_time.changes(self.tree, threshold)

    def predict_next(self, item_a, item_b, random_seed: int = 0) -> pd.DataFrame:
        """One-step-ahead outcome probabilities (:func:`bayesrank.results.trajectories.predict_next`)."""
        return over_time.predict_next(self.tree, item_a, item_b, random_seed)

    def elo(self, level: float = 0.95, view: Elo | None = None) -> pd.DataFrame:
        """Elo ratings with intervals (:func:`bayesrank.results.elo.elo`)."""
        return elo(self.tree, level, view)

    def rank_sets(self, level: float = 0.95) -> pd.DataFrame:
        """Simultaneous rank sets (:func:`bayesrank.results.ranksets.rank_sets`)."""
        return rank_sets(self.tree, level)

    def top_set(self, k: int = 1, level: float = 0.95) -> list[str]:
        """Items that may be in the true top k, simultaneously at ``level``."""
        return top_set(self.tree, k, level)

    def categories(self, level: float = 0.95) -> pd.DataFrame:
        """Per-category leaderboards of a ``by-category`` fit."""
        return category_leaderboards(self.tree, level)

    @property
    def interval_method(self) -> str:
        """``"wald"``, ``"sandwich"``, ``"bootstrap"``, ``"laplace"`` (random effects), ``"none"`` or
        ``"posterior"``."""
        return estimates.interval_method(self.tree)

    @property
    def cluster(self) -> tuple[str, ...]:
        """The cluster columns whose dependence the intervals allow for (empty: comparisons treated
        as independent; :func:`bayesrank.results.estimates.cluster`)."""
        return estimates.cluster(self.tree)

    def differences(self, level: float = 0.95) -> pd.DataFrame:
        return leaderboard.differences(self.tree, level)

    def rank_draws(self):
        return leaderboard.rank_draws(self.tree)

    def rank_distribution(self) -> pd.DataFrame:
        return leaderboard.rank_distribution(self.tree)

    def rank_probabilities(self, ks=(1, 3, 5, 10)) -> pd.DataFrame:
        """P(rank ≤ k) of every item, best first (:func:`bayesrank.results.leaderboard.rank_probabilities`)."""
        return leaderboard.rank_probabilities(self.tree, ks)

    def tie_groups(self, level: float = 0.95) -> pd.DataFrame:
        """Groups of items the data cannot order at ``level`` (:func:`bayesrank.results.leaderboard.tie_groups`)."""
        return leaderboard.tie_groups(self.tree, level)

    def match_probabilities(self, top: int | None = None) -> dict[str, pd.DataFrame]:
        """Outcome probabilities of a match for every ordered pair of the ``top`` items
        (:func:`bayesrank.results.matches.match_probabilities`)."""
        return match_probabilities(self.tree, top)

    def predicted_rates(self) -> pd.DataFrame:
        return likelihood.predicted_rates(self.tree)

    def parameters(self, level: float = 0.95) -> pd.DataFrame:
        """Estimates and intervals of the reported variables other than the scores."""
        present = self.tree["estimate"]
        names = [n for n in (*self.framework.reported(), STYLE) if n != "score" and n in present]
        return estimates.parameters(self.tree, names, level)

    def random_effects(self, level: float = 0.95) -> RandomEffectsSummary:
        """Random-effects fits: how much the clusters disagree (τ) and each cluster's own board
        (:func:`bayesrank.results.random_effects.random_effects`)."""
        return random_effects(self.tree, level)

    def judges(self, level: float = 0.95) -> pd.DataFrame:
        return judges(self.tree, level)

    def verdict_shares(self) -> pd.DataFrame:
        """Per judge: shares of verdicts for the answer shown first (a), second (b) and ties, and
        whether the judge follows the position (:func:`bayesrank.data.positions.verdict_shares`)."""
        return verdict_shares(self.tree)

    def presentation_order(self):
        """Whether the order of the answers is a function of the items, and what a position
        preference does to each model's score (:func:`bayesrank.data.positions.presentation_order`)."""
        return presentation_order(self.tree)

    def disagreement(self) -> dict:
        """HJA fits: the disagreement summary (:func:`bayesrank.results.hja.disagreement_summary`)."""
        return hja.disagreement_summary(self.tree)

    def judge_differences(self, judge: str, level: float = 0.95) -> pd.DataFrame:
        """HJA fits: one judge's own contrasts S_ki − S_kj (:func:`bayesrank.results.hja.judge_differences`)."""
        return hja.judge_differences(self.tree, judge, level)

    def predict(self, item_a, item_b, **kwargs) -> pd.DataFrame:
        return predict.predict(self.tree, item_a, item_b, **kwargs)

    def summary(self) -> dict:
        return summary.summary(self.tree)

    def to_json(self, level: float = 0.95, elo: Elo | None = None) -> dict:
        return summary.to_json(self.tree, level, elo)

    def to_text(self, top: int = 20, level: float = 0.95, elo: Elo | None = None, sections: dict | None = None,
                styled: pd.DataFrame | None = None) -> str:
        """The fit as a person reads it in a terminal, as ``bayesrank fit --format table`` prints it
        (:func:`bayesrank.results.text.fit_text`: ``top`` rows, 0 for all)."""
        from bayesrank.results.text import fit_text

        return fit_text(self, top, level, elo, sections, styled)

    # ------------------------------------------------------------------ updates
    def update(self, new_data, *, framework: Framework | None = None, format: str | None = None,
               both_bad_as_ties: bool | None = None, covariates=None, contrasts=None, by: str | None = None,
               drop_duplicates: bool | None = None, **options) -> Fit:
        """A copy of this fit with new records added: the saved cells plus the new ones, fitted with the same
        framework, options and seed, started from this fit's estimate (a new :class:`Fit`; this
        one is not changed). See :mod:`bayesrank.results.update`.

        Parameters
        ----------
        new_data : Comparisons, table, str or Path
            The new records (anything :func:`bayesrank.load` reads), read as this fit's records
            were; new models and judges may appear.
        framework : Framework, optional
            When given, it must be this fit's.
        format : str, optional
            File format of ``new_data``.
        both_bad_as_ties, covariates, contrasts, by, drop_duplicates : optional
            When given, they must be the reading options of this fit's records (the new records
            are read with those: the same both-bad convention and duplicate rule).
        **options
            When given, this fit's options (a NUTS update may change ``tune``, ``progressbar``
            and ``cores``; its warm-up defaults to
            :data:`~bayesrank.results.update.WARM_TUNE` steps).

        Returns
        -------
        Fit
            Equal to a fit of all the records at once (MAP: to the optimiser's tolerance), with
            one more :attr:`lineage` entry and ``diagnostics["update"]``.

        Raises
        ------
        ModelSpecError
            Another framework or options.
        DataError
            Records of another layout, reading or arena, or with ids already counted.
        FitFileError
            A fit that does not record its options (not made by :func:`fit`).

        Examples
        --------
        >>> import numpy as np
        >>> import bayesrank as br
        >>> from bayesrank.data.simulate import battles
        >>> rng = np.random.default_rng(0)
        >>> fit = br.fit(br.Davidson(), battles([1.0, 0.5, 0.0], 3000, rng, eta=-1.0))
        >>> updated = fit.update(battles([1.0, 0.5, 0.0], 500, rng, eta=-1.0))
        >>> [entry["records"] for entry in updated.lineage]
        [3000, 500]
        """
        return Fit(updates.update(self.tree, new_data, METHODS, framework=framework, format=format,
                                  both_bad_as_ties=both_bad_as_ties, covariates=covariates, contrasts=contrasts,
                                  by=by, drop_duplicates=drop_duplicates, **options))

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | Path, overwrite: bool = True) -> Path:
        """Write the fit to one NetCDF file (atomically); :meth:`load` restores it exactly.
        With ``overwrite=False`` an existing file raises :class:`~bayesrank.errors.OutputError`."""
        return io.save(self.tree, path, overwrite=overwrite)

    @classmethod
    def load(cls, path: str | Path) -> Fit:
        """Read a fit written by :meth:`save` (the file, or a folder written by ``bayesrank fit
        ... --out DIR``: its ``fit.nc``).

        The file is checked as a whole before it is returned: everything a fit answers
        (framework, data, diagnostics, warnings, leaderboard, JSON summary) must read back.

        Raises
        ------
        FitFileError
            The file is missing, not NetCDF, or not a valid bayesrank fit (an edited or
            forged file: a part missing or not what a fit stores).
        """
        fitted = cls(io.load(path))
        try:
            fitted.framework, fitted.data, fitted.model_data, fitted.diagnostics, fitted.warnings
            if fitted.method not in METHODS or not isinstance(fitted.diagnostics, dict) or \
                    not all(isinstance(w, str) for w in fitted.warnings):
                raise ValueError("its method, diagnostics or warnings are not what a fit stores")
            for part in (fitted.data, fitted.model_data):   # what every later computation reads
                counts = part.counts()
                if not (np.all(np.isfinite(counts)) and np.all(counts >= 0)):
                    raise ValueError("its counts of comparisons are not finite non-negative numbers")
            # the free coordinates of a static fit's model (a fit over time counts its own)
            if "theta" in fitted.tree["estimate"] and not over_time.is_time_fit(fitted.tree):
                size = fitted.n_params + fitted.framework.n_gauge(fitted.model_data)
                if fitted.tree["estimate"]["theta"].size != size:
                    raise ValueError(f"its estimate theta has {fitted.tree['estimate']['theta'].size} coordinates, "
                                     f"where the model has {size}")
            fitted.leaderboard()
            fitted.to_json()
            fitted.lineage
            if "bayesrank_options" in fitted.tree.attrs:  # what an update reads
                updates.options_of(fitted.tree)
        except FitFileError as err:
            if str(path) in str(err):
                raise
            raise FitFileError(f"{path}: {err}") from None
        except Exception as err:  # an edited file fails in as many ways as it can be edited
            detail = " ".join(str(err).split())[:160]
            raise FitFileError(f"{path} is not a valid bayesrank fit ({type(err).__name__}: {detail}); pass a file "
                               "written by Fit.save or bayesrank fit --out, unchanged.") from None
        return fitted

    def __repr__(self) -> str:
        state = self.convergence
        return (f"<Fit {self.framework.label} by {self.method} on {self.model_data!r}: "
                f"nll={self.nll:.5f}, {state}, {len(self.warnings)} warning(s)>")


__all__ = ["Fit", "METHODS", "TIME_METHODS", "fit", "method_options"]
