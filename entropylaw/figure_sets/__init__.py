"""entropylaw.figure_sets: one module per figure topic with its builder, the pieces they share
(:mod:`.common`, :mod:`.base`), and :mod:`.build` (every figure at once).

The style and the drawers a result's ``.plot()`` uses are in :mod:`entropylaw.draw`.
"""

from entropylaw._callable import calls  # noqa: E402

calls(__name__, "entropylaw.api.outputs", "figures")  # el.figures is this package too
