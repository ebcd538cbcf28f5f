"""Names shown as text (bayesrank/output/text.py): a terminal table, a one-line error, a Markdown
or HTML report never carry a name's escape sequences, HTML or Markdown into what they show."""

from __future__ import annotations

import re

import pandas as pd
from hypothesis import HealthCheck, given, settings, strategies as st

from bayesrank.cli import main
from bayesrank.output.text import markdown, one_line, terminal

SOME = settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
MANY = settings(max_examples=200, deadline=None)

#: Names that would act on a terminal, a Markdown renderer or a browser.
HOSTILE = st.sampled_from([
    "\x1b[2J\x1b[31mred", "bell\x07", "back\x08space", "\x9b31mC1", "rtl\u202eevil", "iso\u2066late",
    "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "![x](http://tracker/x.png)",
    "[click](javascript:alert(1))", "*bold* _em_ `code`", "a|b|c", "$\\frac{a}{b}$", "~~gone~~", "&amp;",
])
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@given(st.text())
@MANY
def test_terminal_text_has_no_control_characters_but_line_breaks(text):
    shown = terminal(text)
    assert not CONTROL.search(shown)
    assert shown.count("\n") == text.count("\n")
    assert "\n" not in one_line(text) and not CONTROL.search(one_line(text))


@given(st.text())
@MANY
def test_markdown_text_carries_no_markup(text):
    shown = markdown(text)
    assert "<" not in shown and ">" not in shown and "\n" not in shown
    for mark in "*_`[]|~$":
        assert re.search(r"(?<!\\)" + re.escape(mark), shown.replace("\\\\", "")) is None, (mark, shown)


def battles(names) -> pd.DataFrame:
    names = list(names)
    rows = [(a, b, w) for a, b in zip(names, names[1:] + names[:1]) for w in ("model_a", "model_b", "tie")]
    return pd.DataFrame(rows + [(names[0], names[1], "model_a")], columns=["model_a", "model_b", "winner"])


@SOME
@given(st.lists(HOSTILE, min_size=3, max_size=4, unique=True))
def test_hostile_names_in_every_text_output(tmp_path_factory, capsys, names):
    folder = tmp_path_factory.mktemp("text")
    path = folder / "r.parquet"
    battles(names).to_parquet(path)
    for command in (["fit", str(path), "--model", "bt"], ["gars", str(path)],
                    ["evaluate", str(path), "--model", "bt"]):
        assert main(command) == 0
        out = capsys.readouterr().out
        assert not CONTROL.search(out), command
    assert main(["report", str(path), "--models", "bt", "--out", str(folder / "r.md")]) == 0
    assert main(["report", str(path), "--models", "bt", "--out", str(folder / "r.html")]) == 0
    capsys.readouterr()
    md = (folder / "r.md").read_text()
    page = (folder / "r.html").read_text()
    body = md.split("## How this report was made")[0]  # (the command line is shown verbatim, in a code block)
    assert not re.search(r"<(script|img)", body), body
    links = re.findall(r"(?<!\\)\]\(([^)]*)\)", body)
    assert links and all(link.endswith(".png") for link in links), links  # links: our figures, none from a name
    assert not CONTROL.search(md)
    assert not re.search(r"<(script|img)", page.split("<h2>How this report was made")[0].replace("<img alt=", ""))
    for name in names:
        if "<" in name:
            assert name not in page


def test_an_error_naming_a_value_is_one_line(tmp_path, capsys):
    path = tmp_path / "r.parquet"
    pd.DataFrame({"model_a": ["x\ny"], "model_b": ["x\ny"], "winner": ["tie"]}).to_parquet(path)
    assert main(["fit", str(path), "--model", "bt"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "compares" in err
