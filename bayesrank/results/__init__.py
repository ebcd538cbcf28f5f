"""Results: pure functions of a fit's DataTree (leaderboards, differences, ranks, probabilities,
judges, predictions, I/O) and the :class:`~bayesrank.results.fit.Fit` façade."""
