"""entropylaw.page: the self-contained HTML page (:mod:`.page`, its cells, tables and
sections) and its assembly from a run table (:mod:`.assemble`: ``report_html``,
``write_report``)."""
