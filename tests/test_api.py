"""The public surface: every name of ``bayesrank.__all__`` is reachable, grouped by task once, and
the package's namespace shows nothing else; one argument order and one vocabulary."""

import pytest

import bayesrank as br
from bayesrank.errors import ModelSpecError


def test_every_public_name_is_reachable_and_listed_once():
    groups = br._API
    listed = [name for names in groups.values() for name in names]
    assert listed == br.__all__ and len(set(listed)) == len(listed)
    for name in br.__all__:
        assert getattr(br, name) is not None
    assert set(dir(br)) == {"__version__", *br.__all__}   # no helper (import_module, ...) leaks


def test_subpackages_named_in_the_docs_are_attributes():
    """``br.gars`` and ``br.plots`` are the documented subpackages; their names are public."""
    assert br.gars.from_counts is br.gars.scores.from_counts
    assert callable(br.plots.plot_forest) and callable(br.plots.plot_elo)
    assert callable(br.compare) and callable(br.dmlrank) and br.Report.__name__ == "Report"


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'fit_map'"):
        br.fit_map


def test_a_keyword_of_the_other_method_names_the_public_function(mtbench):
    with pytest.raises(ModelSpecError, match=r"tune is not an option of bayesrank\.fit\(method='map'\).*"
                                             r"tune is an option of method='nuts'"):
        br.fit(br.BradleyTerry(), mtbench, tune=10)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: br.load("arena-2024", formt="csv"),
     r"bayesrank\.load\(\) has no option 'formt' \(did you mean 'format'\?\)"),
    (lambda: br.next_pairs(None, 10, goa="top-k"),
     r"bayesrank\.next_pairs\(\) has no option 'goa'.*its options: fit, budget, goal"),
    (lambda: br.gars.from_counts("arena-2024", sore="bt"),
     r"bayesrank\.gars\.from_counts\(\) has no option 'sore' \(did you mean 'score'\?\)"),
])
def test_a_wrong_keyword_names_the_public_function_and_its_options(call, message):
    with pytest.raises(ModelSpecError, match=message):
        call()
