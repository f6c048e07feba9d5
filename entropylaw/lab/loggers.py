"""Writing a lab run's metrics through the loggers real trainers use.

- ``jsonl``: veRL's file logger layout, one line ``{"step": n, "data": {...}}`` per step
  (``metrics.jsonl``).
- ``csv``: one wide table ``metrics.csv`` with a ``step`` column (blank where a key was
  not logged at that step); the header is the run's fixed key list.
- ``wandb``: the ``wandb`` SDK in offline mode (``wandb/offline-run-*/run-<id>.wandb``),
  ``wandb.log(data, step=n)`` as veRL calls it.

Rows are buffered and written by :meth:`MultiLogger.flush`, which the trainer calls right
after each checkpoint is saved. So no logger ever holds a step past the last checkpoint,
and a run resumed from that checkpoint duplicates nothing. (W&B offline writes a new
``offline-run-*`` directory for the resumed segment, under the same run id, that continues
at the next step.) :func:`truncate_after` also removes, from the text logs, any rows past
a checkpoint, in case a process died in the middle of a flush.

>>> import tempfile, json, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> log = MultiLogger(d, ["jsonl", "csv"], keys=["a", "b"])
>>> log.log(1, {"a": 0.5}); log.log(2, {"a": 0.25, "b": 1.0}); log.flush()
>>> (d / "metrics.jsonl").read_text().splitlines()[0]
'{"step": 1, "data": {"a": 0.5}}'
>>> (d / "metrics.csv").read_text().splitlines()
['step,a,b', '1,0.5,', '2,0.25,1.0']
>>> truncate_after(d, 1), len((d / "metrics.jsonl").read_text().splitlines())
(2, 1)
"""

from __future__ import annotations

import csv
import json
import os
import time
import warnings
from pathlib import Path

from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.fileio import write_text
from entropylaw.readers.lab_rundir import METRICS_CSV, METRICS_JSONL

LOGGERS = ("jsonl", "csv", "wandb")
JSONL_NAME = METRICS_JSONL  # the run directory's layout: entropylaw.readers.lab_rundir
CSV_NAME = METRICS_CSV


def parse_loggers(spec: str | list[str]) -> list[str]:
    """``"jsonl,csv"`` -> ``["jsonl", "csv"]``, refusing unknown names."""
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    bad = [n for n in names if n not in LOGGERS]
    if bad or not names:
        what = f"unknown {'logger' if len(bad) == 1 else 'loggers'} {', '.join(map(repr, bad))}" if bad \
            else f"no logger in {spec!r}"
        raise EntropyLawError(f"{what}: expected a comma-separated subset of {', '.join(LOGGERS)}")
    return list(dict.fromkeys(names))


def _append_lines(path: Path, lines: list[str]) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.writelines(line + "\n" for line in lines)
        fh.flush()
        os.fsync(fh.fileno())


class MultiLogger:
    """Buffer ``log(step, data)`` calls; ``flush()`` writes them to every chosen logger."""

    def __init__(self, out_dir: str | Path, loggers: list[str], keys: list[str],
                 run_name: str = "lab", config: dict | None = None, resume: bool = False):
        self.out_dir = Path(out_dir)
        self.loggers = parse_loggers(loggers)
        self.keys = list(keys)
        self.buffer: list[tuple[int, dict]] = []
        self.wandb_run = None
        self.out_dir.mkdir(parents=True, exist_ok=True)
        if not resume:
            for name in (JSONL_NAME, CSV_NAME):
                (self.out_dir / name).unlink(missing_ok=True)
        if "csv" in self.loggers and not (self.out_dir / CSV_NAME).exists():
            _append_lines(self.out_dir / CSV_NAME, [",".join(["step"] + self.keys)])
        if "wandb" in self.loggers:
            self.wandb_run = _start_wandb(self.out_dir, run_name, config or {}, resume)

    def log(self, step: int, data: dict) -> None:
        unknown = set(data) - set(self.keys)
        if unknown:  # a programming error in the trainer, not a user mistake
            raise KeyError(f"metric keys not declared to the logger: {sorted(unknown)}")
        self.buffer.append((int(step), {k: float(v) for k, v in data.items()}))

    def flush(self) -> None:
        if not self.buffer:
            return
        rows, self.buffer = self.buffer, []
        if "jsonl" in self.loggers:
            _append_lines(self.out_dir / JSONL_NAME,
                          [json.dumps({"step": s, "data": d}) for s, d in rows])
        if "csv" in self.loggers:
            _append_lines(self.out_dir / CSV_NAME,
                          [",".join([str(s)] + [repr(d[k]) if k in d else "" for k in self.keys])
                           for s, d in rows])
        if self.wandb_run is not None:
            for s, d in rows:
                self.wandb_run.log(d, step=s)

    def close(self) -> None:
        self.flush()
        if self.wandb_run is not None:
            run, self.wandb_run = self.wandb_run, None
            try:
                wandb_finish(run)
            except EntropyLawError as err:  # close() runs in the trainer's finally: never mask what ended the run
                others = " and ".join(n.upper() for n in self.loggers if n != "wandb")
                whole = f"; the {others} log{'s are' if ' and ' in others else ' is'} whole" if others else ""
                warnings.warn(f"{err}{whole}", EntropyLawWarning, stacklevel=2)


def wandb_finish(run, wait_s: float = 60.0) -> Path:
    """``run.finish()``, then wait (up to ``wait_s``) until the run's ``.wandb`` file holds its
    exit record; return the file.

    wandb's service process writes the file, and on a loaded machine its last records (the
    history among them) can reach the disk after ``finish()`` returns: a file read at once would
    be a half-written run.
    """
    from entropylaw.readers.wandb_offline import run_has_ended

    def ended() -> bool:
        try:
            return path.exists() and run_has_ended(path)
        except EntropyLawError:  # a file still empty or mid-write: not ended yet
            return False

    path = Path(run.settings.sync_file)
    run.finish()
    deadline = time.monotonic() + wait_s
    while not ended():
        if time.monotonic() > deadline:
            raise EntropyLawError(f"{path}: wandb wrote no exit record within {wait_s:g} s of finishing the run")
        time.sleep(0.1)
    return path


def _start_wandb(out_dir: Path, run_name: str, config: dict, resume: bool):
    import wandb

    settings = wandb.Settings(mode="offline", silent=True, console="off", x_disable_stats=True,
                              x_disable_meta=True, x_disable_machine_info=True, save_code=False,
                              disable_git=True, x_save_requirements=False)
    return wandb.init(dir=str(out_dir), project="entropylaw-lab", name=run_name, id=run_name,
                      config=config, settings=settings, resume="allow" if resume else None,
                      reinit="create_new")


def truncate_after(out_dir: str | Path, step: int) -> int:
    """Drop rows with step > ``step`` from the JSONL and CSV logs; return how many went."""
    out_dir = Path(out_dir)
    dropped = 0
    path = out_dir / JSONL_NAME
    if path.exists():
        keep = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                ok = json.loads(line)["step"] <= step
            except (ValueError, KeyError, TypeError):
                ok = False  # a half-written last line
            keep.append(line) if ok else None
            dropped += not ok
        _rewrite(path, keep)
    path = out_dir / CSV_NAME
    if path.exists():
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        keep_rows = rows[:1] + [r for r in rows[1:] if r and r[0].isdigit() and int(r[0]) <= step]
        dropped += len(rows) - len(keep_rows)
        _rewrite(path, [",".join(r) for r in keep_rows])
    return dropped


def silent_steps_logged(out_dir: str | Path, step: int, cfg) -> int | None:
    """Steps 1..``step`` on which every advantage was 0, counted from the batch counters of the
    text logs (for a checkpoint written before it kept the count); None where no text log holds
    every one of those steps. The rewards are 0 or 1, so the counters decide it per estimator."""
    rows = _logged_rows(Path(out_dir), step)
    if rows is None:
        return None
    groups = cfg.prompts_per_step

    def silent(r: dict) -> bool:
        if cfg.filter_groups:  # the groups kept are the mixed ones: each has a non-zero advantage
            return r["batch/groups_kept"] == 0
        right, wrong = r["batch/groups_all_correct"], r["batch/groups_all_wrong"]
        if cfg.algo == "reinforce":  # the advantage is the reward itself
            return wrong == groups
        if cfg.algo == "reinforce++":  # one baseline for the whole batch
            return wrong == groups or right == groups
        return right + wrong == groups  # a baseline per group
    return sum(silent(r) for r in rows)


def _logged_rows(out_dir: Path, step: int) -> list[dict] | None:
    need = ("batch/groups_kept", "batch/groups_all_correct", "batch/groups_all_wrong")
    rows: dict = {}
    try:
        if (out_dir / JSONL_NAME).exists():
            for line in (out_dir / JSONL_NAME).read_text(encoding="utf-8").splitlines():
                try:
                    obj = json.loads(line)
                except ValueError:  # a half-written last line (a process that died in a flush)
                    continue
                rows[int(obj["step"])] = obj["data"]
        elif (out_dir / CSV_NAME).exists():
            with open(out_dir / CSV_NAME, newline="", encoding="utf-8") as fh:
                for r in csv.DictReader(fh):
                    rows[int(r["step"])] = {k: float(r[k]) for k in need if r.get(k)}
        else:
            return None
        return [{k: float(rows[s][k]) for k in need} for s in range(1, step + 1)]
    except (OSError, ValueError, KeyError, TypeError):  # a step or a counter the log lacks: not countable
        return None


def _rewrite(path: Path, lines: list[str]) -> None:
    write_text(path, "".join(line + "\n" for line in lines), fsync=True)
