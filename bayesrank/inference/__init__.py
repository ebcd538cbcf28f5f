"""Inference: maximum likelihood with asymptotic intervals (``map``) and NUTS (``nuts``)."""

from bayesrank.inference.map import fit_map
from bayesrank.inference.nuts import fit_nuts

__all__ = ["fit_map", "fit_nuts"]
