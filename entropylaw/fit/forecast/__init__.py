"""Forecasting a run from its first steps: :mod:`.core` (:func:`~.core.forecast`),
the run's series and window (:mod:`.data`), the methods (:mod:`.methods`, :mod:`.law`,
:mod:`.combine`, by name in :mod:`.catalog`) and their curve families (:mod:`.curves`)."""
