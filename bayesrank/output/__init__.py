"""Everything bayesrank writes: one atomic, exclusive writer for files
(:mod:`~bayesrank.output.atomic`), one CSV writer that defuses spreadsheet formulas
(:mod:`~bayesrank.output.tables`), text made safe for a terminal, Markdown and HTML
(:mod:`~bayesrank.output.text`) and figures that draw names as plain text
(:mod:`~bayesrank.output.figures`).

These modules sit below every layer that writes (results, reports, the CLI) and import
nothing of bayesrank but its errors.
"""
