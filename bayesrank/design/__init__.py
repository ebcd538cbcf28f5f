"""Which battles next: sequential design of comparisons from a fit.

* :func:`~bayesrank.design.next_pairs.next_pairs` (``bayesrank.next_pairs``): spread a budget
  of votes over pairs (and judges) to settle a goal (``top-k``, ``ranks``, ``model``,
  ``all-pairs``);
* :func:`~bayesrank.design.settle.provisional_rows` (``bayesrank.provisional_rows``): the
  leaderboard's provisional rows, with the battles that would settle each;
* :func:`~bayesrank.design.allocation.square_root_allocation`: the A-optimal (square-root)
  allocation that these plans and DMLRank's labelling policy share;
* :mod:`bayesrank.design.rounds`: simulated rounds (fit, plan, vote, refit) against uniform and
  Arena-style sampling, with the truth known.
"""
