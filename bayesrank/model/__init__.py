"""Models: outcome links × score structures = frameworks (specs that build PyMC models)."""

from bayesrank.model.categories import ByCategory, CategoryPriors
from bayesrank.model.framework import Framework, Local, Predictor, Priors
from bayesrank.model.hja import HJA, HJAPriors
from bayesrank.model.judge_aware import BTL, JudgeAware, JudgeAwareCovariate, JudgePriors, SignedJudgeAware
from bayesrank.model.paired import BradleyTerry, Davidson, RaoKupper
from bayesrank.model.random_effects import RandomEffects, RandomEffectsPriors
from bayesrank.model.registry import FRAMEWORKS, framework_from_spec

__all__ = [
    "BTL",
    "FRAMEWORKS",
    "BradleyTerry",
    "ByCategory",
    "CategoryPriors",
    "Davidson",
    "Framework",
    "HJA",
    "HJAPriors",
    "JudgeAware",
    "JudgeAwareCovariate",
    "JudgePriors",
    "Local",
    "Predictor",
    "Priors",
    "RaoKupper",
    "RandomEffects",
    "RandomEffectsPriors",
    "SignedJudgeAware",
    "framework_from_spec",
]
