"""entropylaw.results: the per-run numbers the figures and the report share.

One row of numbers per run (:mod:`.rows`), each run fitted and forecast once per content
(:mod:`.cache`, a project's runs in forked processes), its family, short label and look
(:mod:`.labels`, :mod:`.looks`), which runs a project's figures draw (:mod:`.focus`).
No drawing here: nothing imports matplotlib, ``entropylaw.figures`` or ``entropylaw.report``.
"""
