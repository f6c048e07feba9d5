"""``entropylaw audit``: is the entropy a trainer logged the entropy of its policy?

Beside :mod:`entropylaw.probing` (it may import probe and ingest; nothing below imports it):

- :mod:`entropylaw.auditing.conventions`: the trainers' aggregations of per-token entropy
  (pure arithmetic on per-token arrays, one function per convention);
- :mod:`entropylaw.auditing.forward`: the model forward giving the per-token arrays;
- :mod:`entropylaw.auditing.verdict`: tolerance, match, correction;
- :mod:`entropylaw.auditing.core`: reads model, rollouts and log, and puts them together.
"""
