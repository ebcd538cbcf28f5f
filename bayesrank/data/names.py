r"""The one rule that turns what a record writes into a name, and the look-alike names it cannot merge.

Model, judge and question names are compared as text, so two spellings a person reads as
one name would otherwise become two items. The rule merges what is safe to merge and says
so; what it cannot merge safely it reports.

**Normalised** (the name the models see), in this order:

1. Unicode normal form NFC: a letter and its combining accent (``"e\u0301"``) become the
   composed letter (``"é"``); the two forms are canonically equivalent, so no text changes
   meaning.
2. Characters that are invisible and never part of a name are removed wherever they stand:
   :data:`INVISIBLE` (zero-width space, word joiner, byte-order mark — the one left inside a
   file made by joining files —, soft hyphen).
3. Surrounding white space (any Unicode space, tab or line break) and the zero-width joiners
   and direction marks of :data:`EDGE` are stripped from both ends; inside a name they can
   matter (emoji sequences, Persian and Indic scripts, right-to-left text), so they stay.

The rule runs in DuckDB (:func:`normalised_sql`) on every record, whatever its source.
Records whose names changed are counted in ``Comparisons.notes``; names that several
spellings became are listed, with each spelling, in ``Comparisons.warnings``
(:func:`name_warnings`).

**Look-alikes** — names that differ only by letter case, compatibility forms (full-width
letters, ligatures), characters shown as nothing (format and control characters, variation
selectors and Unicode's other default-ignorable code points) or runs of spaces (the
:func:`look_alike` key) — are kept apart, since ``"GPT-4"`` and ``"gpt-4"`` may be two models, and reported
in ``Comparisons.warnings`` so that a person can merge them in the data.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping

#: Invisible characters removed wherever they stand: zero-width space, word joiner,
#: zero-width no-break space (the byte-order mark), soft hyphen, Mongolian vowel separator.
INVISIBLE = ("\u200b", "\u2060", "\ufeff", "\u00ad", "\u180e")
#: Characters stripped only at the ends (besides white space): zero-width non-joiner and
#: joiner, left-to-right and right-to-left marks.
EDGE = ("\u200c", "\u200d", "\u200e", "\u200f")
#: Unicode's default-ignorable code points (``Default_Ignorable_Code_Point`` of the Unicode
#: Character Database, DerivedCoreProperties.txt), as inclusive ranges: a renderer shows them as
#: nothing (variation selectors, the combining grapheme joiner, Hangul fillers, tag characters…),
#: so two names that differ only by them look alike.
IGNORABLE = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
             (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
             (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
             (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))
#: Groups of spellings listed per warning before the list is shortened.
MAX_LISTED = 5

_INVISIBLE_CLASS = "[" + "".join(f"\\x{{{ord(c):04X}}}" for c in INVISIBLE) + "]"
_EDGE_CLASS = r"[\s\p{Z}\x{85}" + "".join(f"\\x{{{ord(c):04X}}}" for c in EDGE) + "]"
_SPACE_CLASS = r"[\s\p{Z}\x{85}]"


def normalised_sql(text: str) -> str:
    """SQL (DuckDB) of the normalised name of the text expression ``text`` (module docstring)."""
    inner = f"regexp_replace(nfc_normalize({text}), '{_INVISIBLE_CLASS}', '', 'g')"
    return f"regexp_replace({inner}, '^{_EDGE_CLASS}+|{_EDGE_CLASS}+$', '', 'g')"


def stripped_sql(text: str) -> str:
    """SQL of ``text`` with surrounding white space only removed: a record whose name differs
    from it had spaces around the name; one whose normalised name differs from it had another
    Unicode form or invisible characters."""
    return f"regexp_replace({text}, '^{_SPACE_CLASS}+|{_SPACE_CLASS}+$', '', 'g')"


def look_alike(name: str) -> str:
    """The key under which names look alike: compatibility form (NFKC), letter case folded,
    every character shown as nothing removed (format and control characters, and the
    default-ignorable code points of :data:`IGNORABLE`) and runs of white space made one space."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    visible = "".join(c for c in folded if unicodedata.category(c) not in ("Cf", "Cc") and not _ignorable(c))
    return " ".join(visible.split())


def _ignorable(c: str) -> bool:
    point = ord(c)
    return any(low <= point <= high for low, high in IGNORABLE)


def spelled(name: str) -> str:
    r"""A name as written in messages: Python's quoted form, with the code points spelled out
    (``'e\u0301'``) when it is not plain ASCII, so that look-alikes differ on screen."""
    return repr(name) if name.isascii() and name.isprintable() else ascii(name)


def name_warnings(spellings: Mapping[str, Iterable[str]], what: str = "name") -> list[str]:
    """Sentences about names merged by the normalisation and names that only look alike.

    Parameters
    ----------
    spellings : mapping of str to iterable of str
        Each normalised name → every spelling the records wrote it with.
    what : str
        What the names are ("model name", "judge name") for the sentences.

    Returns
    -------
    list of str
        At most two sentences: the names that several spellings became (each listed with its
        spellings), and groups of distinct names that look alike (:func:`look_alike`).
    """
    out = []
    merged = {name: sorted(set(written)) for name, written in spellings.items() if len(set(written)) > 1}
    if merged:
        groups = [f"{spelled(name)} from {' and '.join(spelled(w) for w in written)}"
                  for name, written in sorted(merged.items())]
        out.append(f"{len(merged)} {what}(s) were written in several ways and read as one (Unicode form NFC, "
                   f"invisible characters and surrounding spaces normalised): {_listed(groups)}")
    alike: dict[str, list[str]] = {}
    for name in spellings:
        alike.setdefault(look_alike(name), []).append(name)
    groups = [" and ".join(spelled(n) for n in sorted(names)) for names in alike.values() if len(names) > 1]
    if groups:
        out.append(f"{len(groups)} group(s) of {what}s look alike but are kept apart (they differ in letter case, "
                   f"compatibility form, inner invisible characters or spaces): {_listed(sorted(groups))}; "
                   "if they are the same, write them the same way in the data")
    return out


def _listed(groups: list[str]) -> str:
    shown = "; ".join(groups[:MAX_LISTED])
    return shown + (f"; … (+{len(groups) - MAX_LISTED} more)" if len(groups) > MAX_LISTED else "")


def column_key(name: str) -> str:
    """The identity of a column name or record key: surrounding spaces stripped, letter case
    folded. Two columns (or keys of one record) with one key are refused: tools disagree on
    which of them a reader sees (DuckDB matches names without regard to case, pandas and
    Parquet do not)."""
    return str(name).strip().casefold()


__all__ = [
    "EDGE", "IGNORABLE", "INVISIBLE", "MAX_LISTED", "column_key", "look_alike", "name_warnings", "normalised_sql",
    "spelled", "stripped_sql"
]
