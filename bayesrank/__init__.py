"""bayesrank: statistically sound LLM leaderboards from pairwise comparisons.

>>> import bayesrank as br
>>> fit = br.fit(br.Davidson(k_tie=1), "arena-2024")
>>> fit.leaderboard()[["rank", "name", "score", "lower", "upper"]].head(3).round(2)
   rank                     name  score  lower  upper
0     1        chatgpt-4o-latest   1.87   1.82   1.92
1     2  gemini-1.5-pro-exp-0801   1.68   1.65   1.72
2     3        gpt-4o-2024-05-13   1.55   1.53   1.57

The public names below are imported on first use, so ``import bayesrank`` stays light
(the PyMC stack is loaded only when a model is built or a fit is read).
"""

from importlib import import_module

__version__ = "0.1.0"

#: public name -> module that defines it
_PUBLIC = {
    "BayesrankError": "bayesrank.errors",
    "DataError": "bayesrank.errors",
    "ModelSpecError": "bayesrank.errors",
    "OutputError": "bayesrank.errors",
    "FitFileError": "bayesrank.errors",
    "Comparisons": "bayesrank.data.comparisons",
    "load": "bayesrank.data.load",
    "load_dataset": "bayesrank.data.load",
    "BradleyTerry": "bayesrank.model.paired",
    "RaoKupper": "bayesrank.model.paired",
    "Davidson": "bayesrank.model.paired",
    "ByCategory": "bayesrank.model.categories",
    "Dynamic": "bayesrank.model.dynamic",
    "TimePriors": "bayesrank.model.dynamic",
    "RandomEffects": "bayesrank.model.random_effects",
    "Priors": "bayesrank.model.framework",
    "JudgeAware": "bayesrank.model.judge_aware",
    "BTL": "bayesrank.model.judge_aware",
    "JudgeAwareCovariate": "bayesrank.model.judge_aware",
    "SignedJudgeAware": "bayesrank.model.judge_aware",
    "JudgePriors": "bayesrank.model.judge_aware",
    "HJA": "bayesrank.model.hja",
    "HJAPriors": "bayesrank.model.hja",
    "framework_from_spec": "bayesrank.model.registry",
    "select_rank": "bayesrank.selection",
    "diff": "bayesrank.changes",
    "fit": "bayesrank.results.fit",
    "Fit": "bayesrank.results.fit",
    "next_pairs": "bayesrank.design.next_pairs",
    "provisional_rows": "bayesrank.design.settle",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name):
    if name in _PUBLIC:
        value = getattr(import_module(_PUBLIC[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'bayesrank' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))
