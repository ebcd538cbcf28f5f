"""Comparison data: the :class:`Comparisons` object, readers, validation and bundled datasets."""

from bayesrank.data.bundled import DATASETS
from bayesrank.data.checks import mle_existence, statistical_warnings
from bayesrank.data.comparisons import OUTCOMES, Comparisons
from bayesrank.data.files import read
from bayesrank.data.judges import near_duplicate_judges, standardized_log_length
from bayesrank.data.load import load, load_dataset
from bayesrank.data.records import from_battles, from_count_table, from_counts, from_frame, from_judgements, from_table

__all__ = [
    "DATASETS",
    "OUTCOMES",
    "Comparisons",
    "from_battles",
    "from_count_table",
    "from_counts",
    "from_frame",
    "from_judgements",
    "from_table",
    "load",
    "load_dataset",
    "mle_existence",
    "near_duplicate_judges",
    "read",
    "standardized_log_length",
    "statistical_warnings",
]
