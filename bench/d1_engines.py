"""Table D.1 by this engine against the engine it replaced: ``python bench/d1_engines.py`` reads the
30 full-data fits of ``models/arena-2024/d1-results.jsonl`` (``make_table_d1.py fit``, this code) and
``bench/results/d1-previous-engine.jsonl`` (the same script's output at 7cb4773, the previous engine)
and writes ``bench/results/d1-engines.md``: per model both NLLs, the log-likelihood this engine gains
(in units of the total log-likelihood: NLL per comparison × comparisons), both against the paper's NLL,
and the fit's seconds in each run."""

import json
import subprocess
from pathlib import Path

import bayesrank as br
from bayesrank.model.papers import LEADERBOT_D1, leaderbot_model

ROOT = Path(__file__).resolve().parent.parent
NOW = ROOT / "models" / "arena-2024" / "d1-results.jsonl"
BEFORE = ROOT / "bench" / "results" / "d1-previous-engine.jsonl"
OUT = ROOT / "bench" / "results" / "d1-engines.md"
#: Log-likelihood units by which a model may end below the previous engine's maximum (issue 43).
SLACK = 0.01


def rows(path: Path) -> dict:
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines()) if isinstance(r.get("id"), int)}


def main() -> None:
    now, before = rows(NOW), rows(BEFORE)
    data = br.load("arena-2024")
    commit = subprocess.run(["git", "log", "-1", "--format=%h", "--", str(NOW)], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip() or "uncommitted"
    lines = ["# Table D.1: this engine against the previous one", "",
             f"`python bench/d1_engines.py`: `models/arena-2024/d1-results.jsonl` (this engine, `make_table_d1.py fit`, "
             f"commit {commit}) against `d1-previous-engine.jsonl` (the same script at 7cb4773). Δ ℓ is the "
             "log-likelihood this engine gains, in units of the total log-likelihood; seconds are each run's "
             "own (its models fitted in order in one process, beside other jobs), not a warm-fit protocol.", "",
             "| id | model | paper NLL | previous engine | this engine | Δ ℓ | ≥ previous − 0.01 | ≤ paper + 1e-4 "
             "| converged | s previous | s now |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    short, above = [], []
    for mid in sorted(now):
        r, b = now[mid], before.get(mid)
        paper = LEADERBOT_D1[mid][1]
        n = leaderbot_model(mid).prepare(data).n_comparisons  # (ties dropped: those that are not ties)
        gain = (b["nll"] - r["nll"]) * n if b else None
        if gain is not None and gain < -SLACK:
            short.append(mid)
        if r["nll"] > paper + 1e-4:
            above.append(mid)
        lines.append("| " + " | ".join(str(x) for x in (
            mid, r["label"], f"{paper:.4f}", f"{b['nll']:.10f}" if b else "—", f"{r['nll']:.10f}",
            f"{gain:+.3g}" if gain is not None else "—",
            "—" if gain is None else "yes" if gain >= -SLACK else "**no**",
            "yes" if r["nll"] <= paper + 1e-4 else "**no**", "yes" if r["converged"] else "**no**",
            f"{b['seconds']:.0f}" if b else "—", f"{r['seconds']:.0f}")) + " |")
    lines += ["", f"{len(now)} models. Below the previous engine's maximum by more than {SLACK} units: "
              f"{short or 'none'}. Above the paper's NLL + 1e-4: {above or 'none'}.", ""]
    OUT.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
