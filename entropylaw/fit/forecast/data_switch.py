"""Data that changes during a run, read off the trainer's printed config: several training files
read in order (veRL's ``data.train_files`` with ``data.shuffle=False``) train the later steps on
other data. The forecast assumes the same data throughout; where the config says otherwise, it
says so and widens (:func:`~.regimes.apply`).

>>> data_switch({"train_files": ["gsm8k/train.parquet", "math/train.parquet"], "shuffle": False})[:31]
'the data changes during the run'
>>> data_switch({"train_files": ["a.parquet", "b.parquet"]}) is None   # shuffled (the default): mixed throughout
True
"""

from __future__ import annotations

SWITCH_WIDEN = 2.0  # data that changes mid-run: the interval's spread on the logit scale, doubled (stated)
SWITCH_SAID = "the data changes during the run"  # how its warning starts (the report's row names it)


def data_switch(config) -> str | None:
    """What the trainer's printed config says of data that changes during the run: several
    training files read in order (``data.shuffle=False``) train the later steps on other data.
    None where it says nothing of the kind."""
    files = list((config or {}).get("train_files") or [])
    if len(files) < 2 or config.get("shuffle") is not False:
        return None
    names = ", ".join(f.rsplit("/", 2)[-2] + "/" + f.rsplit("/", 1)[-1] if f.count("/") >= 1 else f
                      for f in files)
    return (f"{SWITCH_SAID}: the log's config reads {len(files)} training files in order "
            f"(data.shuffle=False: {names}), so later steps train on other data; the forecast assumes the same data "
            f"throughout: its interval is widened {SWITCH_WIDEN:g}x on the logit scale (a stated factor: no run "
            "at hand measures it)")
