"""entropylaw.page: the self-contained HTML page (:mod:`.page`, its cells, tables and
sections) and its assembly from a run table (:mod:`.assemble`: ``report_html``,
``write_report``)."""

from entropylaw._callable import calls  # noqa: E402

calls(__name__, "entropylaw.api.outputs", "report")  # el.report is this package too
