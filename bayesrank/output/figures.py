r"""Figures whose text is drawn as written.

Matplotlib reads text between two ``$`` as TeX math, so a model named ``$\x$`` (or any name
with two dollar signs) is typeset, or stops the drawing with a parse error. Every figure of
:mod:`bayesrank.plots` is a :class:`Figure`, which draws all the text placed on it as plain
text; tick labels that Matplotlib's formatters make while drawing (numbers) keep their usual
form.
"""

from __future__ import annotations

from matplotlib.figure import Figure as _Figure
from matplotlib.text import Text


class Figure(_Figure):
    """A Matplotlib figure whose text (labels, titles, tick labels, annotations, legends) is
    never parsed as math."""

    def draw(self, renderer):
        for text in self.findobj(Text):
            text.set_parse_math(False)
        return super().draw(renderer)


__all__ = ["Figure"]
