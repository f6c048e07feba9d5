"""The forecast methods by name: one registry for the CLI, the API, the backtest and the
combinations (:mod:`entropylaw.fit.forecast.combine`)."""

from __future__ import annotations

from entropylaw.fit.forecast.law import LawCeiling, LawEntropy, LawTrain
from entropylaw.fit.forecast.curve_methods import ExpSaturation, Joint, PowerLaw, Sigmoid, SigmoidTokens
from entropylaw.fit.forecast.drift import DriftTrain, LogitDrift
from entropylaw.fit.forecast.methods import LastValue
from entropylaw.fit.forecast.names import CURVE_ENSEMBLE, DEFAULT, ENSEMBLE, GIVEN_PRIOR, PRIOR  # noqa: F401

METHODS = {m.name: m for m in (LastValue, LawCeiling, LawEntropy, LawTrain, ExpSaturation, PowerLaw, Sigmoid, SigmoidTokens,
                               Joint, LogitDrift, DriftTrain)}
ALL_METHODS = [*METHODS, PRIOR, ENSEMBLE, CURVE_ENSEMBLE]
