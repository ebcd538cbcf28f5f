"""Comparison data: the :class:`Comparisons` object, readers, validation and bundled datasets."""

from bayesrank.data.bundled import DATASETS, load_dataset
from bayesrank.data.checks import statistical_warnings
from bayesrank.data.comparisons import OUTCOMES, Comparisons
from bayesrank.data.readers import (
    from_battles,
    from_count_table,
    from_counts,
    from_frame,
    from_judgements,
    load,
    read,
    read_count_table,
)

__all__ = [
    "DATASETS",
    "OUTCOMES",
    "Comparisons",
    "from_battles",
    "from_count_table",
    "from_counts",
    "from_frame",
    "from_judgements",
    "load",
    "load_dataset",
    "read",
    "read_count_table",
    "statistical_warnings",
]
