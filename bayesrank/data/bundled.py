"""Datasets shipped inside the package, so demos and notebooks run without network or ``../shared``."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import DataError


@dataclass(frozen=True)
class BundledDataset:
    """A dataset file inside ``bayesrank/data/datasets`` with its provenance."""

    name: str
    filename: str
    description: str
    provenance: str
    licence: str


DATASETS: dict[str, BundledDataset] = {
    "arena-2024": BundledDataset(
        name="arena-2024",
        filename="arena-2024.json",
        description="Chatbot Arena pair counts of 2024-08-14: 129 models, 3455 pairs, "
        "1,374,996 comparisons (3460 pairs / 1,670,250 with both-bad ties counted).",
        provenance="LMSYS Chatbot Arena public battles (anonymous, de-duplicated) as aggregated "
        "and shipped by the leaderbot package (chatbotarena_20240814.json); reference data of "
        "Ameli et al., ICLR 2025, Tables D.1-D.3.",
        licence="BSD-3-Clause (leaderbot)",
    ),
}


def dataset_path(name: str):
    """Path of a bundled dataset file."""
    if name not in DATASETS:
        raise DataError(f"unknown dataset '{name}'; bundled datasets: {', '.join(DATASETS)}.")
    return resources.files("bayesrank.data") / "datasets" / DATASETS[name].filename


def load_dataset(name: str, *, both_bad_as_ties: bool = False) -> Comparisons:
    """Load a bundled dataset by name.

    Parameters
    ----------
    name : str
        One of :data:`DATASETS` (``bayesrank datasets`` lists them).
    both_bad_as_ties : bool
        For arena data: count "tie (bothbad)" as ties. Default ``False`` is the leaderbot
        paper's convention (129 models, 3455 pairs, 1,374,996 comparisons).
    """
    from bayesrank.data.readers import read_count_table

    data = read_count_table(dataset_path(name), both_bad_as_ties=both_bad_as_ties)
    return _renamed(data, name)


def _renamed(data: Comparisons, name: str) -> Comparisons:
    from dataclasses import replace

    return replace(data, source=name)
