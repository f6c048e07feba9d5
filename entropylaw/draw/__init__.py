"""entropylaw.draw: how a result looks, below everything that computes one.

The figure style (``style``, ``placement``), the figure styles and formats (``looks``), and
the three drawers a result's ``.plot()`` imports when first called: the law (``law``),
a forecast (``forecast``), the size series (``sizes``). Nothing here imports
:mod:`entropylaw.fit`, so ``fit`` may reach down to these drawers without a loop; the figures
built from run tables are in :mod:`entropylaw.figure_sets`. A run's label and colour are
computed below this layer (:mod:`entropylaw.table.labels`, :mod:`entropylaw.table.looks`), so that
the per-run results and the drawers read the same ones.
"""
