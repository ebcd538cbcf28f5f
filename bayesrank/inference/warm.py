"""Starting a fit from what an earlier fit of part of the same data found.

A warm start changes where the optimiser and the sampler begin, never what they converge to:
the MLE is the same point from any start the trust region reaches it from (the log-likelihoods
of the concave models have one maximum), and a sampler's chains forget their starting points.

Values are given by *name*: the natural variables of a structure
(:attr:`~bayesrank.inference.natural.NaturalMap.names`: the scores, tie factors, judge
discriminations, style coefficients — whatever the predictors read), each shaped for the data of
the new fit; a NaN entry (a model or judge the earlier fit did not have) takes the model's own
start. :func:`starting_theta` maps them to the free coordinates θ of the new fit's structure by
:meth:`~bayesrank.inference.natural.NaturalMap.theta_for` (exact for values in the structure's
range; the nearest point otherwise — a zero-sum constraint over more items, say).

:class:`WarmStart` is what a NUTS fit reuses (:func:`~bayesrank.inference.nuts.fit_nuts`): the
point the whitening's maximum-likelihood fit starts from, a starting point per chain, and draws
whose spread in the new whitened coordinates gives the sampler its mass matrix.

A model that contains a simpler one (:meth:`Framework.nested
<bayesrank.model.framework.Framework.nested>`: a Thurstonian covariance added to Bradley–Terry,
Rao–Kupper or Davidson) starts from that model's maximum-likelihood estimate, placed in its own
variables (:func:`model_start`): a continuation, because the larger model's log-likelihood is not
concave and which maximum a run reaches depends on where it starts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import solve_triangular

from bayesrank.errors import ModelSpecError
from bayesrank.inference.optimize import maximise
from bayesrank.inference.structure import Bound, structure_of

#: Saved draws used at most to estimate the mass matrix of a warm-started sampler (evenly spaced).
MASS_DRAWS = 256


@dataclass(frozen=True)
class WarmStart:
    """What a NUTS fit reuses from an earlier posterior (see the module docstring).

    Attributes
    ----------
    point : mapping
        Natural variable → values (NaN: the model's own start) where the maximum-likelihood fit
        of the whitening starts (the earlier posterior means).
    chains : sequence of mapping
        One such mapping per chain: where each chain starts (the earlier chains' last draws).
    draws : mapping
        Natural variable → ``(n, *shape)`` earlier draws (NaN where the earlier fit had no
        entry): their variance in the new whitened coordinates is the sampler's diagonal mass
        matrix, when no entry is NaN.
    """

    point: Mapping[str, np.ndarray]
    chains: Sequence[Mapping[str, np.ndarray]] = ()
    draws: Mapping[str, np.ndarray] = field(default_factory=dict)


def model_start(bound: Bound) -> np.ndarray:
    """The model's own starting θ: for a framework with a nested model (:meth:`Framework.nested
    <bayesrank.model.framework.Framework.nested>`), that model's maximum-likelihood estimate on the
    same data (itself started by this rule) placed by :meth:`~bayesrank.model.framework.Framework.from_nested`;
    otherwise the framework's starting values (``bound.x0``). When the nested fit does not end at a
    finite point (its MLE does not exist), the framework's starting values.
    """
    framework = bound.structure.framework
    nested = framework.nested()
    if nested is None:
        return bound.x0
    inner = structure_of(nested, bound.data).bind(bound.data)
    theta = maximise(inner, model_start(inner)).theta
    if not np.all(np.isfinite(theta)):
        return bound.x0
    values = framework.from_nested(inner.natural(theta))
    return bound.structure.natural.theta_for(values, bound.x0)


def starting_theta(bound: Bound, init) -> np.ndarray:
    """θ to start from: the model's own start (``init`` None: :func:`model_start`), ``init``
    itself (an array of θ), or the natural variables ``init`` names mapped to θ, entries left out
    or NaN at the framework's starting values (see the module docstring).

    Raises
    ------
    ModelSpecError
        ``init`` is an array of the wrong length, or gives a variable in the wrong shape.
    """
    if init is None:
        return model_start(bound)
    x0 = bound.x0
    if not isinstance(init, Mapping):
        theta = np.asarray(init, dtype=float)
        if theta.shape != x0.shape:
            raise ModelSpecError(f"init has {theta.size} coordinates; this model has {x0.size} free coordinates. "
                                 "Pass values by name instead (a mapping of variable to values).")
        return theta
    defaults = bound.natural(x0)
    values = {}
    for name, value in init.items():
        if name not in defaults:
            continue
        value = np.asarray(value, dtype=float)
        if value.shape != np.shape(defaults[name]):
            raise ModelSpecError(f"init gives {name} of shape {value.shape}; this model's is "
                                 f"{np.shape(defaults[name])}.")
        values[name] = np.where(np.isfinite(value), value, defaults[name])
    return bound.structure.natural.theta_for(values, x0) if values else x0


def whitened_starts(bound: Bound, warm: WarmStart, theta: np.ndarray, factor: np.ndarray, chains: int
                    ) -> tuple[list[np.ndarray], np.ndarray | None]:
    """The chains' starting points and the diagonal inverse mass matrix in whitened coordinates
    z = L⁻¹(θ − θ̂) (:mod:`~bayesrank.inference.whiten`; ``factor`` is L, upper triangular).

    Returns
    -------
    starts : list of ndarray
        One z per chain (chain k starts where ``warm.chains[k]`` says, cycling when there are fewer).
    inverse_mass : ndarray or None
        The variance of the earlier draws in z, or None when some entry of them is missing (a
        model or judge the earlier fit did not have) or no draws are given.
    """
    def white(values):
        return solve_triangular(factor, starting_theta(bound, values) - theta, lower=False)

    starts = [white(warm.chains[k % len(warm.chains)]) for k in range(chains)] if warm.chains else []
    inverse_mass = None
    if warm.draws and all(np.all(np.isfinite(v)) for v in warm.draws.values()):
        n = len(next(iter(warm.draws.values())))
        rows = np.unique(np.linspace(0, n - 1, min(n, MASS_DRAWS)).round().astype(int))
        z = np.array([white({name: v[r] for name, v in warm.draws.items()}) for r in rows])
        if len(z) > 1:
            inverse_mass = z.var(axis=0, ddof=1)
    return starts, inverse_mass


__all__ = ["MASS_DRAWS", "WarmStart", "model_start", "starting_theta", "whitened_starts"]
