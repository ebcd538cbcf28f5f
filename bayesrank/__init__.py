"""bayesrank: statistically sound LLM leaderboards from pairwise comparisons.

>>> import bayesrank as br
>>> fit = br.Davidson(k_tie=1).fit("arena-2024", method="map")   # doctest: +SKIP
>>> fit.leaderboard().head()                                       # doctest: +SKIP
"""

from bayesrank.data import Comparisons, load, load_dataset
from bayesrank.errors import BayesrankError, DataError, ModelSpecError, StatisticalWarning
from bayesrank.frameworks import BTL, BradleyTerry, Davidson, JudgeAware, Priors, RaoKupper, framework_from_spec
from bayesrank.results import Fit

__version__ = "0.1.0"

__all__ = [
    "BTL",
    "BayesrankError",
    "BradleyTerry",
    "Comparisons",
    "DataError",
    "Davidson",
    "Fit",
    "JudgeAware",
    "ModelSpecError",
    "Priors",
    "RaoKupper",
    "StatisticalWarning",
    "framework_from_spec",
    "load",
    "load_dataset",
]
