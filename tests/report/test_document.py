"""Reports: self-contained HTML opened in a real headless Chromium, Markdown, the CLI, and the
leave-one-out comparison they show."""

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import bayesrank as br
from bayesrank.cli import main
from bayesrank.evaluation.compare import compare, loo
from bayesrank.report import Report
from bayesrank.results.leaderboard import rank_probabilities, tie_groups, top_set
from bayesrank.results.matches import match_probabilities
from tests.conftest import simulate_counts

CHROMIUM = shutil.which("chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--log-level=0", "--virtual-time-budget=10000"]


def render(html: Path, tmp: Path, screenshot: Path | None = None) -> tuple[str, list[str]]:
    """The DOM after load and the page's console messages, from headless Chromium."""
    assert CHROMIUM, "Debian's chromium is needed for this test: run `make browser`."
    args = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp / 'chromium-profile'}"]
    if screenshot is not None:
        args += [f"--screenshot={screenshot}", "--window-size=1280,2400", "--hide-scrollbars"]
    else:
        args.append("--dump-dom")
    proc = subprocess.run([*args, html.resolve().as_uri()], capture_output=True, text=True, timeout=120)
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return proc.stdout, console


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(8)
    return simulate_counts(np.array([-0.7, -0.2, 0.1, 0.3, 0.6]), 120, rng, eta=-0.5)


@pytest.fixture(scope="module")
def posts(small):
    kw = dict(method="nuts", draws=300, tune=300, chains=2, random_seed=3)
    return {"davidson": br.fit(br.Davidson(), small, **kw), "rao-kupper": br.fit(br.RaoKupper(), small, **kw)}


def test_html_report_is_self_contained_and_renders_in_chromium(tmp_path, posts):
    report = Report(posts, comparison=compare(posts, refit=None), command="pytest", top=5)
    path = report.save(tmp_path / "report.html")
    text = path.read_text()
    assert not re.search(r"""(src|href)=["']https?://""", text)          # nothing remote
    assert text.count("<table") == 6              # data; per fit its board and observed against predicted; comparison
    assert text.count(">Elo</th>") == 2 and text.count("a view of the same fit (") == 2  # Elo, scale said
    assert text.count("data:image/png;base64,") == 11     # 2 data matrices, 4 figures per fit, comparison
    dom, console = render(path, tmp_path)
    assert 'data-figures="11/11"' in dom                                # every figure decoded
    assert console == []                                                 # no console message at all
    shot = tmp_path / "report.png"
    render(path, tmp_path, screenshot=shot)
    assert shot.stat().st_size > 20_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_markdown_report_writes_its_figures(tmp_path, posts):
    path = Report(posts, top=5).save(tmp_path / "report.md")
    text = path.read_text()
    assert text.startswith("# bayesrank report") and "| rank | model |" in text
    figures = sorted((tmp_path / "report-figures").glob("*.png"))
    links = re.findall(r"!\[[^]]*\]\(([^)]+)\)", text)
    assert len(figures) == 10 and len(links) == 10   # 2 data matrices, 4 per fit
    assert sorted((path.parent / link).resolve() for link in links) == [f.resolve() for f in figures]  # as a viewer


def test_report_cli(tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", "mtbench-judges", "--models", "btl", "judge-aware:ties=davidson", "--out", str(out),
                 "--top", "6"]) == 0
    text = out.read_text()
    assert "Judge-aware" in text or "JudgeAware" in text
    capsys.readouterr()
    assert main(["report", "mtbench-judges", "--models", "btl", "--out", str(out)]) == 2
    assert "already exists; pass --force" in capsys.readouterr().err and out.read_text() == text
    assert main(["report", "mtbench-judges", "--models", "btl", "--out", str(out), "--force", "--top", "3"]) == 0
    assert out.read_text() != text
    assert main(["report", "mtbench-judges", "--models", "judge-aware:k_tie=1", "--out", str(tmp_path / "x.html")]) == 2
    assert "not an option=value of judge-aware" in capsys.readouterr().err


def test_compare_refuses_fits_of_different_observations(small, posts):
    half = br.fit(br.BradleyTerry(ties="half"), small, method="nuts", draws=100, tune=100, chains=2, random_seed=1)
    with pytest.raises(br.BayesrankError, match="ties counted as half a win"):
        compare({"davidson": posts["davidson"], "bt": half})
    with pytest.raises(br.BayesrankError, match="NUTS"):
        compare({"davidson": posts["davidson"], "map": br.fit(br.Davidson(), small)})
    with pytest.raises(br.BayesrankError, match="needs a NUTS fit"):
        loo(br.fit(br.Davidson(), small))


def test_compare_table_follows_the_elpd(posts):
    table = compare(posts, refit=None)
    assert list(table.columns[:6]) == ["rank", "elpd", "se", "p", "elpd_diff", "dse"]
    assert table["elpd"].iloc[0] >= table["elpd"].iloc[1]
    assert table["weight"].sum() == pytest.approx(1.0)
    # the pointwise ELPD sums to the total and the difference is computed from it
    res = loo(posts["davidson"], refit=None)
    assert res.elpd_i.sum() == pytest.approx(res.elpd)
    assert any(" vs " in w for w in table.attrs["warnings"])


def test_posterior_leaderboard_summaries(posts):
    tree = posts["davidson"].tree
    p = rank_probabilities(tree, ks=(1, 2, 5))
    np.testing.assert_allclose(p["p_top_5"], 1.0)                       # 5 items: everyone is in the top 5
    assert p["p_top_1"].sum() == pytest.approx(1.0)                      # exactly one item is first per draw
    assert (p["p_top_1"] <= p["p_top_2"]).all()
    top2 = top_set(tree, k=2, level=0.9)
    assert 2 <= len(top2) <= 5 and top2[0] == p.index[0]
    groups = tie_groups(tree)
    assert groups["group"].is_monotonic_increasing and groups["group"].iloc[0] == 1
    m = match_probabilities(tree)
    np.testing.assert_allclose(m["win"] + m["tie"] + m["loss"], np.where(np.eye(5), np.nan, 1.0))
    np.testing.assert_allclose(m["win"].to_numpy(), m["loss"].to_numpy().T)       # i beats j = j loses to i
    np.testing.assert_allclose(m["expected"] + m["expected"].T, np.where(np.eye(5), np.nan, 1.0))


def test_figures_of_fewer_items_than_the_top_asked_for(posts):
    """5 items with top=20: every figure shows the 5."""
    from bayesrank import plots

    fig = plots.plot_rank_probabilities(posts["davidson"], top=20)
    assert len(fig.axes[0].get_yticklabels()) == 5
    assert len(plots.plot_forest(posts["davidson"], top=20).axes[0].get_yticklabels()) == 5


def test_a_map_report_says_which_dependence_its_intervals_allow_for(tmp_path):
    data = br.load("mtbench-judges", cluster="judge_model")
    fits = {"by judge": br.fit(br.BradleyTerry(ties="drop"), data),
            "independent": br.fit(br.BradleyTerry(ties="drop"), data, intervals="sandwich", cluster=())}
    from bayesrank.output.text import markdown

    text = Report(fits, top=3).save(tmp_path / "report.md").read_text()  # (Markdown: text escaped)
    assert markdown("allowing for dependence within clusters of 'judge_model'") in text
    assert markdown(fits["independent"].to_json()["dependence"]) in text


@pytest.mark.parametrize("suffix", [".md", ".html"])
def test_control_characters_from_the_data_never_reach_a_report_raw(tmp_path, suffix):
    """A file name (shown as the data's source and in the command) and a model name with terminal
    escapes: the report shows them as escapes, in every part of it."""
    from bayesrank.cli import main

    data = tmp_path / "esc\x1b]0;owned\x07name.csv"
    data.write_text("model_a,model_b,winner\nm\x1b[31m,b,model_a\nb,c,tie\nc,m\x1b[31m,model_b\nb,c,model_a\n")
    out = tmp_path / f"r{suffix}"
    assert main(["report", str(data), "--models", "bt", "--out", str(out)]) == 0
    text = out.read_text()
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b" in text
