"""entropylaw.figure_sets: one module per figure topic with its builder, the pieces they share
(:mod:`.common`, :mod:`.base`), and :mod:`.build` (every figure at once).

The style and the drawers a result's ``.plot()`` uses are in :mod:`entropylaw.draw`.
"""
