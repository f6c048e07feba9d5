"""Readers: every place an RL run logs to, read into one tidy table (:mod:`entropylaw.table`)."""
