"""The forecast methods by name: one registry for the CLI, the API, the backtest and the
combinations (:mod:`entropylaw.fit.forecast.combine`)."""

from __future__ import annotations

from entropylaw.fit.forecast.law import LawCeiling, LawEntropy, LawTrain
from entropylaw.fit.forecast.methods import ExpSaturation, Joint, LastValue, PowerLaw, Sigmoid, SigmoidTokens

METHODS = {m.name: m for m in (LastValue, LawCeiling, LawEntropy, LawTrain, ExpSaturation, PowerLaw, Sigmoid, SigmoidTokens,
                               Joint)}
ENSEMBLE, PRIOR = "ensemble", "prior"
ALL_METHODS = [*METHODS, PRIOR, ENSEMBLE]
