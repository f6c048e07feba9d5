"""entropylaw.figures: one module per figure topic with its builder, the shared style and
placement, and :mod:`.build` (every figure at once).

Drawing modules that :mod:`entropylaw.fit` results use for ``.plot()`` (:mod:`.law_plot`,
:mod:`.forecast_plot`, :mod:`.size_plot`) import matplotlib, numpy and the style only.
"""
