"""Forecasting a run from its first steps: :mod:`.core` (:func:`~.core.forecast`), the run's
series and window (:mod:`.data`), the methods' interface (:mod:`.methods`), one module per
family of methods (:mod:`.last_value`, :mod:`.law`, :mod:`.curve_methods`, :mod:`.drift`,
:mod:`.prior`, :mod:`.ensemble`), all listed once in :mod:`.catalog`, and their curve
families (:mod:`.curves`)."""
