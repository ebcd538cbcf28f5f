"""bayesrank: statistically sound LLM leaderboards from pairwise comparisons.

>>> import bayesrank as br
>>> fit = br.fit(br.Davidson(k_tie=1), "arena-2024")
>>> fit.leaderboard()[["rank", "name", "score", "lower", "upper"]].head(3).round(2)
   rank                     name  score  lower  upper
0     1        chatgpt-4o-latest   1.87   1.82   1.92
1     2  gemini-1.5-pro-exp-0801   1.68   1.65   1.72
2     3        gpt-4o-2024-05-13   1.55   1.53   1.57

Every public name is listed in ``bayesrank.__all__``, grouped by task below (``_API``); the rest
of the package is reached through the documented subpackages (:mod:`bayesrank.gars`,
:mod:`bayesrank.plots`, :mod:`bayesrank.report`, :mod:`bayesrank.evaluation`,
:mod:`bayesrank.analysis`, :mod:`bayesrank.design`). Names are imported on first use, so
``import bayesrank`` stays light: the PyMC stack is loaded only when a model is built or a fit is
read.
"""

from importlib import import_module as _import_module

__version__ = "0.1.0"

#: Task → public name → the module that defines it (a subpackage's own name: the subpackage).
_API = {
    "Data": {
        "Comparisons": "bayesrank.data.comparisons",
        "load": "bayesrank.data.load",
        "load_dataset": "bayesrank.data.load",
    },
    "Frameworks": {
        "BradleyTerry": "bayesrank.model.paired",
        "RaoKupper": "bayesrank.model.paired",
        "Davidson": "bayesrank.model.paired",
        "JudgeAware": "bayesrank.model.judge_aware",
        "BTL": "bayesrank.model.judge_aware",
        "JudgeAwareCovariate": "bayesrank.model.judge_aware",
        "SignedJudgeAware": "bayesrank.model.judge_aware",
        "HJA": "bayesrank.model.hja",
        "ByCategory": "bayesrank.model.categories",
        "Dynamic": "bayesrank.model.dynamic",
        "RandomEffects": "bayesrank.model.random_effects",
        "Priors": "bayesrank.model.framework",
        "JudgePriors": "bayesrank.model.judge_aware",
        "HJAPriors": "bayesrank.model.hja",
        "TimePriors": "bayesrank.model.dynamic",
        "framework_from_spec": "bayesrank.model.registry",
    },
    "Fitting and results": {
        "fit": "bayesrank.results.fit",
        "Fit": "bayesrank.results.fit",
    },
    "Comparison and selection": {
        "compare": "bayesrank.evaluation.compare",
        "loo": "bayesrank.evaluation.compare",
        "select_rank": "bayesrank.evaluation.selection",
        "goodness_of_fit": "bayesrank.evaluation.goodness",
        "generalization": "bayesrank.evaluation.goodness",
        "information_criteria": "bayesrank.evaluation.goodness",
    },
    "Arena features": {
        "style_control": "bayesrank.analysis.style",
        "fragility": "bayesrank.analysis.fragility",
        "tiers": "bayesrank.analysis.tiers",
        "diff": "bayesrank.analysis.changes",
    },
    "GARS and DMLRank": {
        "gars": "bayesrank.gars",
        "dmlrank": "bayesrank.gars.dml.estimator",
    },
    "Which battles next": {
        "next_pairs": "bayesrank.design.next_pairs",
        "provisional_rows": "bayesrank.design.settle",
    },
    "Reports and plots": {
        "Report": "bayesrank.report.document",
        "plots": "bayesrank.plots",
    },
    "Errors": {
        "BayesrankError": "bayesrank.errors",
        "DataError": "bayesrank.errors",
        "ModelSpecError": "bayesrank.errors",
        "OutputError": "bayesrank.errors",
        "FitFileError": "bayesrank.errors",
    },
}

_WHERE = {name: module for names in _API.values() for name, module in names.items()}

__all__ = [name for names in _API.values() for name in names]


def __getattr__(name):
    if name in _WHERE:
        module = _import_module(_WHERE[name])
        value = module if module.__name__ == f"bayesrank.{name}" else getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'bayesrank' has no attribute {name!r}")


def __dir__():
    return sorted({"__version__", *__all__})
