"""Comparison data: the :class:`Comparisons` object, readers, validation and bundled datasets."""

from bayesrank.data.bundled import DATASETS, load_dataset
from bayesrank.data.comparisons import OUTCOMES, Comparisons
from bayesrank.data.readers import from_count_table, read_count_table

__all__ = ["DATASETS", "OUTCOMES", "Comparisons", "from_count_table", "load_dataset", "read_count_table"]
