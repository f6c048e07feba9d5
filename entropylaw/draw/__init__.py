"""entropylaw.draw: how a result looks, below everything that computes one.

The figure style (``style``, ``placement``), a run's label and colour (``labels``, ``looks``),
and the three drawers a result's ``.plot()`` imports when first called: the law (``law``),
a forecast (``forecast``), the size series (``sizes``). Nothing here imports
:mod:`entropylaw.fit`, so ``fit`` may reach down to these drawers without a loop; the figures
built from run tables are in :mod:`entropylaw.figure_sets`.
"""
