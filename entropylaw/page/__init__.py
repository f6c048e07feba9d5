"""entropylaw.page: the self-contained HTML page. Its model is computed once (:mod:`.model`:
rows per run, figures, notes), then rendered top-down (:mod:`.page`, its cells, tables and
sections); :mod:`.assemble` joins the two (``report_html``) and writes the page (``write_report``)."""
