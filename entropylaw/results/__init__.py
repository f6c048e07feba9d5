"""entropylaw.results: the per-run numbers the figures and the report share.

Each run's results computed once, in one direction (:mod:`.model`: ``run_results``), one row
of numbers per run (:mod:`.rows`), each run fitted and forecast once per content
(:mod:`.cache`, a project's runs in forked processes), the runs a project's first screen
lists (:mod:`.picks`) and its figures draw (:mod:`.focus`), the text of a result in another's
words (:mod:`.notes`), and the one screen ``entropylaw demo`` prints (:mod:`.overview`). A run's
family, short label and look come from :mod:`entropylaw.table` (``labels``, ``looks``); the
columns the page's first table and the screen show are one spec (:mod:`.columns`). No drawing
here: nothing imports matplotlib, ``entropylaw.draw``, ``entropylaw.figure_sets`` or ``entropylaw.page``.
"""
