"""entropylaw inside other tools' training loops (:mod:`entropylaw.integrations.trl`)."""
