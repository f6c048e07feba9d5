"""Readers: every place an RL run logs to, read into one tidy table (:mod:`entropylaw.table`)."""

from entropylaw._callable import calls  # noqa: E402

calls(__name__, "entropylaw.api.reading", "ingest")  # el.ingest is this package too
