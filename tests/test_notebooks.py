"""The notebooks run top to bottom in a real Jupyter kernel, and say what they should."""

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

#: Text each notebook's outputs must contain (what a reader is meant to see).
EXPECTED = {
    "posterior-leaderboard": [
        "chatgpt-4o-latest",            # the arena's best model at rank 1 of the MLE leaderboard
        "credible top-1 set: ['chatgpt-4o-latest']",
        "'converged': True",            # the NUTS run converged (checked, not assumed)
        "p_top_1",                      # rank probabilities
    ],
    "judges": [
        "Qwen/Qwen3-Next-80B-A3B-Instruct",   # judges listed by name
        "agree on",                     # the near-duplicate judges, said in words
        "'converged': True",
        "lower_log",                    # the log-scale interval of γ
        "rank chosen by cross-validation: 1",   # HJA's rank, chosen from the data
        "the highest-leverage judge is",        # HJA's judge diagnostics, said in words
    ],
    "model-comparison": [
        "elpd_diff",
        "cannot be compared",           # the refusal of a comparison of different observations
        "pooled BTL vs judge-aware",    # the difference to the best model, said in words
    ],
}


def executed(name: str):
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    return nb


def output_text(nb) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if "text" in out:
                parts.append(out["text"])
            for key in ("text/plain", "text/html"):
                if key in out.get("data", {}):
                    parts.append(out["data"][key])
    return "\n".join(parts)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_runs_and_shows_its_results(name):
    assert (NOTEBOOKS / f"{name}.ipynb").exists()
    nb = executed(name)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code)
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    text = output_text(nb)
    for fragment in EXPECTED[name]:
        assert fragment in text, fragment
    assert any("image/png" in o.get("data", {}) for c in code for o in c.outputs), "a figure is drawn"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_is_committed_with_its_outputs(name):
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "run `make notebooks` and commit the outputs"
    for fragment in EXPECTED[name]:
        assert fragment in output_text(nb), fragment


def test_every_notebook_is_tested():
    assert {p.stem for p in NOTEBOOKS.glob("*.ipynb")} == set(EXPECTED)


#: Where one sentence of prose ends and the next begins.
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
#: Words that make a sentence a question about convergence, not a claim.
OPEN = re.compile(r"\b(whether|if)\b", re.I)
#: Words that make a claim negative.
NEGATED = re.compile(r"\b(not|never|no)\b|n't\b|\bunconverged\b", re.I)
#: How a notebook prints a fit's convergence (the diagnostics dict, or a dict of them).
REPORTED = re.compile(r"'converged': (True|False)")


def convergence_claims(nb) -> list[tuple[str, bool]]:
    """(sentence, positive) for every sentence of the notebook's prose that says whether something
    converged; sentences that only ask (whether, if) are not claims."""
    claims = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for sentence in SENTENCE_END.split(" ".join(cell.source.split())):
                word = re.search(r"\bconverged?\b", sentence, re.I)
                if word and not OPEN.search(sentence):
                    claims.append((sentence.strip(), not NEGATED.search(sentence[:word.start()])))
    return claims


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_prose_about_convergence_matches_the_outputs(name):
    """A sentence such as "every posterior converged" must be backed by every fit the notebook
    reports being converged (``'converged': True`` in its outputs, and at least one reported); a
    sentence saying a fit did not converge, by at least one ``'converged': False``."""
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    states = REPORTED.findall(output_text(nb))
    for sentence, positive in convergence_claims(nb):
        if positive:
            assert states and set(states) == {"True"}, f"{name}: {sentence!r} but the outputs report {states}"
        else:
            assert "False" in states, f"{name}: {sentence!r} but every fit reports converged"


def test_convergence_claims_are_read_as_people_read_them():
    cells = [nbformat.v4.new_markdown_cell(text) for text in (
        "Every posterior converged (r̂ ≤ 1.01).", "The fit says whether the sampler converged.",
        "The position model did not converge: read its numbers with care.")]
    nb = nbformat.v4.new_notebook(cells=cells)
    assert convergence_claims(nb) == [("Every posterior converged (r̂ ≤ 1.01).", True),
                                      ("The position model did not converge: read its numbers with care.", False)]
