"""Write data/real-tasks/*.csv (and offsets/) from public veRL console logs of tasks other than GSM8K.

    .venv/bin/python analysis/extract_real_tasks.py [--mirrors ../shared/mirrors] [--out data/real-tasks]

Each source is a log file inside a public GitHub repository, read at a pinned commit from a
local git copy of that repository (``<mirrors>/<owner>+<name>/repo``: a ``git clone --bare``
or a clone's ``.git`` there), by default in ``../shared/mirrors`` beside the repository. The logs themselves are
never copied into this repository: only the metric values of the ``step:N - key:value - ...``
lines come here, as printed, with the character offset of each line so every value can be
checked against the source (``data/real-tasks/README.md`` gives the provenance).

A missing copy is one line on stderr and a non-zero exit, not a traceback.
"""

from __future__ import annotations

import argparse
import csv
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "real-tasks"
MIRRORS = ROOT.parent / "shared" / "mirrors"  # beside the repository, where the tests look too

# Ray prefixes and ANSI colours sit before "step:"; model output can also contain "step:12"
# (a counting model writes "step:1"), so a metric line must read "step:N - key:value".
_STEP = re.compile(r"(?<![\w/])step:(\d+) - ")
_PAIR = re.compile(r"([A-Za-z_][\w/@.\-]*):(np\.float64\()?(-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)\)?")


@dataclass(frozen=True)
class Source:
    """One run: where its log is and which printed keys become CSV columns (in this order)."""

    name: str          # data/real-tasks/<name>.csv
    repo: str          # owner/name on GitHub
    commit: str        # the commit the values were read at
    path: str          # the log's path inside the repository
    keys: tuple[str, ...]


SOURCES = [
    Source(
        name="qwen2.5-3b_ppo_countdown",
        repo="m9h/societies-of-thought",
        commit="ed8d42e3801743bc1029568a9eb3b70a261e3804",
        path="results/rl_ab/tz_train_claimA.log",
        keys=("actor/entropy_loss", "critic/score/mean", "val/test_score/countdown", "response_length/mean"),
    ),
]


def read_source(src: Source, mirrors: Path) -> str:
    """The log's text at the pinned commit, decoded as UTF-8 (undecodable bytes replaced)."""
    git_dir = mirrors / src.repo.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        raise FileNotFoundError(f"{git_dir}: no local copy of {src.repo} (expected a git directory there)")
    proc = subprocess.run(["git", "-C", str(git_dir), "show", f"{src.commit}:{src.path}"],
                          capture_output=True, check=False)
    if proc.returncode != 0:
        msg = proc.stderr.decode(errors="replace").strip().splitlines()
        raise FileNotFoundError(f"{src.repo}@{src.commit[:10]}:{src.path}: {msg[-1] if msg else 'git show failed'}")
    return proc.stdout.decode("utf-8", errors="replace")


def metric_lines(text: str):
    """Yield (step, offset of the line's first character, {key: value as printed}) per metric line."""
    pos = 0
    for line in text.splitlines(keepends=True):
        m = _STEP.search(line)
        if m:
            body = line[m.start():]
            values = {k: v for k, _np, v in _PAIR.findall(body) if k != "step"}
            yield int(m.group(1)), pos, values
        pos += len(line)


def extract(text: str, keys: tuple[str, ...]) -> tuple[list[dict], dict]:
    """One row per logged step with the requested keys, and an account of what was read.

    A step printed twice (a resumed run) keeps its last line; the account counts such lines,
    and lines that carry none of the requested keys, so nothing is dropped silently.
    """
    rows: dict[int, dict] = {}
    account = {"metric_lines": 0, "repeated_step": 0, "no_requested_key": 0}
    for step, offset, values in metric_lines(text):
        account["metric_lines"] += 1
        picked = {k: values[k] for k in keys if k in values}
        if not picked:
            account["no_requested_key"] += 1
            continue
        if step in rows:
            account["repeated_step"] += 1
        rows[step] = {"step": step, "_offset": offset, **picked}
    account["rows"] = len(rows)
    return [rows[s] for s in sorted(rows)], account


def write(src: Source, rows: list[dict], out: Path) -> None:
    (out / "offsets").mkdir(parents=True, exist_ok=True)
    with open(out / f"{src.name}.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["step", *src.keys])
        for r in rows:
            w.writerow([r["step"], *(r.get(k, "") for k in src.keys)])
    with open(out / "offsets" / f"{src.name}.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["step", "line_start_char"])
        for r in rows:
            w.writerow([r["step"], r["_offset"]])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, default=MIRRORS)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    status = 0
    for src in SOURCES:
        try:
            text = read_source(src, args.mirrors)
        except FileNotFoundError as e:
            print(f"extract_real_tasks: {e}", file=sys.stderr)
            status = 1
            continue
        rows, account = extract(text, src.keys)
        write(src, rows, args.out)
        n_val = {k: sum(1 for r in rows if k in r) for k in src.keys}
        print(f"{src.name}: {account} values per key {n_val}")
    return status


if __name__ == "__main__":
    sys.exit(main())
