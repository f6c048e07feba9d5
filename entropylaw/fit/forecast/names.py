"""Names beside the methods' own (:data:`~.catalog.REGISTRY`): the word for the default method,
and the calibration keys of logit-drift's variants, shared by the methods, the calibration and
the backtest without importing each other."""

# the default for the run's kind of score (validation or training score), resolved by forecast()
DEFAULT = "default"
# the last-value method's name: recommended where the default cannot run (catalog.FALLBACK), and read
# by the text that says so without importing the methods
LAST_VALUE = "last-value"
# logit-drift whose prior comes from runs the user gives (--prior): calibrated on its own
GIVEN_PRIOR = "logit-drift, prior: given runs"
# logit-drift on a task its stored prior was not learned on (the heavy-tailed new-task prior):
# calibrated on cases that left out whole tasks
NEW_TASK = "logit-drift, new task"
