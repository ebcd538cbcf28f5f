"""Datasets shipped inside the package, so demos, tests and notebooks run without network or ``../shared``."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

from bayesrank.errors import DataError


@dataclass(frozen=True)
class BundledDataset:
    """A dataset file inside ``bayesrank/data/datasets`` with its provenance."""

    name: str
    filename: str
    description: str
    provenance: str
    licence: str
    format: str = "counts"
    #: The both-bad convention of the reference numbers these data reproduce
    #: (:mod:`bayesrank.data.bothbad`); ``load(name, both_bad_as_ties=...)`` overrides it.
    both_bad_as_ties: bool = False


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
        both_bad_as_ties=False,  # the leaderbot paper's Tables D.1-D.3 leave both-bad ties out
    ),
    "mtbench-judges": BundledDataset(
        name="mtbench-judges",
        filename="mtbench-judges.json.gz",
        description="10,000 MT-Bench verdicts: 6 models, 20 LLM judges, 80 questions; "
        "294 'unknown' verdicts are dropped, leaving 9,706 comparisons in 300 "
        "(pair, judge) cells. model_a is always the alphabetically first model (shown first).",
        provenance="MT-Bench questions and answers by LMSYS, verdicts by 20 LLM judges released "
        "with the judge-aware ranking paper (Xu et al.); records of mtbench_judges_10k.json in "
        "their original order, without the unused judge_confidence field.",
        licence="Apache-2.0 per the HJA paper",
        format="json",
    ),
}


def dataset_path(name: str):
    """Path (an importlib resource) of a bundled dataset file."""
    if name not in DATASETS:
        raise DataError(f"unknown dataset '{name}'; bundled datasets: {', '.join(DATASETS)}.")
    return resources.files("bayesrank.data") / "datasets" / DATASETS[name].filename


__all__ = ["BundledDataset", "DATASETS", "dataset_path"]
