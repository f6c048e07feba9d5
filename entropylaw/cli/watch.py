"""``entropylaw watch LOG|DIR``: follow a run's log as it grows; refit the law and the forecast.

Every ``--interval`` seconds the log (a file, or a directory: a TRL output directory, an
offline W&B run, a TensorBoard directory ...) is checked; when it changed, it is read again
with the same reader as ``entropylaw fit`` and the law and the forecast are refitted. A
terminal gets a live display (``rich``, when installed); a pipe or a file gets one plain
block per refresh. A log caught half-written, truncated or rotated (a new file under the
same name) is said in one line and read again at the next change; the last good fit stays
on show. A log not written yet (its folder exists) is waited for. Ctrl-C ends watching (exit 0).

Example: ``entropylaw watch outputs/grpo-run --interval 10``
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from entropylaw import api
from entropylaw.api import plumbing
from entropylaw.cli.options import (COUNT, N_BOOT, PROBLEMS, SCORE, SECONDS, STEPS, add_entropy_convention,
                                    add_source_arguments, positive)
from entropylaw.cli.sources import source_options
from entropylaw.cli.watch_text import (forecast_at, forecast_cells, num, once, packed, r2_text, regime_lines,
                                      said_before)
from entropylaw.errors import EntropyLawError


def add_parser(subparsers) -> None:

    p = subparsers.add_parser("watch", help="follow a growing log; refit the law and the forecast as it grows",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("path", metavar="LOG|DIR", help="log file, JSONL, trainer_state.json, TRL output directory, "
                   "offline W&B run directory ...")
    g = p.add_argument_group("watching")
    g.add_argument("--interval", type=SECONDS, default=5.0, help="seconds between checks (default 5)")
    g.add_argument("--method", action="append",
                   choices=[plumbing.DEFAULT, *(m for m in plumbing.FORECAST_METHODS if m != "prior")],
                   help="a forecast method to show, repeated for several (default: the default method for the "
                        "run's score, and law+entropy)")
    g.add_argument("--horizon", type=STEPS, metavar="N", help="forecast N steps past the last logged step "
                   "(default: as many steps as are logged)")
    g.add_argument("--n-boot", type=N_BOOT, default=200,
                   help="bootstrap draws of the forecast, >= 2 (default 200, as forecast)")
    g.add_argument("--target", type=SCORE, metavar="SCORE", help="show the step at which the forecast reaches SCORE")
    g.add_argument("--total-steps", type=STEPS, metavar="N", help="the run's planned last step: what continuing "
                   "to it adds, and the call (default: the planned length the log or its config states, else the "
                   "step forecast: --horizon, or twice the steps logged)")
    g.add_argument("--step-cost", type=positive("number of GPU-hours per step", "0.5"), metavar="H",
                   help="GPU-hours per step: what the rest of the run costs (default: the log's timing, in hours)")
    g.add_argument("--n-problems", type=PROBLEMS, metavar="N",
                   help="the validation set's size: its binomial noise weighs the points and sets the call's "
                        "threshold (default: read off the scores, else known benchmarks by name)")
    g.add_argument("--no-sweep", dest="sweep", action="store_false",
                   help="forecast the run alone: by default, in a sweep's folder, its take-off climb rate is pooled "
                        "with the other runs of its recipe, as forecast pools them")
    g.add_argument("--plain", action="store_true", help="plain text blocks even on a terminal")
    g.add_argument("--exit-idle", type=SECONDS, metavar="S",
                   help="stop once the log has not changed for S seconds after the last refresh")
    g.add_argument("--max-refreshes", type=COUNT, metavar="N", help="stop after N refreshes (scripts, tests)")
    add_entropy_convention(g)
    add_source_arguments(p)
    p.set_defaults(func=run)


@dataclass
class Signature:
    """What tells a changed log: inode and size of each file (a file, or every file under a directory)."""

    files: dict = field(default_factory=dict)

    @classmethod
    def of(cls, path: Path) -> "Signature":
        files = {}
        paths = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()) \
            if path.is_dir() else []
        for p in paths:
            try:
                st = p.stat()
            except OSError:  # removed between listing and stat: a rotation in progress
                continue
            files[str(p)] = (st.st_ino, st.st_size, st.st_mtime_ns)
        return cls(files)

    def shrunk(self, old: "Signature") -> list:
        """Files truncated (smaller) or rotated (another inode, or gone) since ``old``."""
        out, folders = [], set()
        for name, (ino, size, _) in old.files.items():
            now = self.files.get(name)
            if now is None and not Path(name).parent.exists():  # its folder went with it: an old checkpoint
                gone = Path(name).parent  # pruned (save_total_limit) is one folder removed, not each file rotated
                while not gone.parent.exists():
                    gone = gone.parent
                if gone not in folders:
                    folders.add(gone)
                    out.append((f"{gone}{os.sep}", "removed (the whole folder)"))
            elif now is None:
                out.append((name, "rotated (removed)"))
            elif now[0] != ino:
                out.append((name, "rotated (a new file)"))
            elif now[1] < size:
                out.append((name, "truncated"))
        return out


def snapshot(args, path: Path) -> dict:
    """One refresh (:func:`entropylaw.snapshot`) with the command's options. A folder's file that does not
    read now (a sweep's next run, its log empty or its first line half-written) is left out and said under
    "rows:" at each refresh, as with --skip-bad: it stalled every refresh of the run followed until it read."""
    options = source_options(args)
    options["entropy_convention"] = args.entropy_convention
    if path.is_dir():
        options["skip_bad"] = True
    snap = api.snapshot(path, run=args.run[0] if args.run else None, methods=args.method, horizon=args.horizon,
                        total_steps=args.total_steps, target=args.target, step_cost=args.step_cost,
                        n_boot=args.n_boot, n_problems=args.n_problems, sweep=args.sweep, **options)
    flags = getattr(args, "flags", str)
    out = {k: flags(v) if k in ("total_note", "fit_error", "forecast_error") else v for k, v in snap.items()}
    out["decision_lines"] = [flags(line) for line in plumbing.decision_lines(snap.get("decision"))]
    out["sweep_lines"] = [flags(line) for line in snap.get("sweep_lines") or []]
    return out


def render_plain(snap: dict, notes: list, when: str, seen: dict | None = None) -> str:
    """One refresh's block; with ``seen`` (a watch's blocks, one under another), a note the refresh before said
    in the same words is cut to the time it was first said: said once, then again where it changes."""
    said, done = said_before(seen, when)
    lines = [f"[{when}] {snap['run_id']}: step {snap['last_step']}, {snap['entropy_points']} entropy points, "
             f"entropy now {num(snap['entropy_now'])}{' nats' if snap['entropy_now'] is not None else ''}"]
    lines += [f"  {line}" for line in snap.get("sweep_lines") or []]  # its forecast changes with its sweep: first
    if "a" in snap:
        lo, hi = snap["ceiling_ci"]
        lines += packed("  law     ", [plumbing.law_formula(snap['a'], snap['b']), f"ceiling {snap['ceiling']:.4g} "
                                            f"[{lo:.4g}, {hi:.4g}]", f"R² {r2_text(snap['r2'])}",
                                            f"points {snap['points']}", snap['trust']], "   ", " " * 10)
        lines.append(f"  score   {snap['y_key']} ({snap['score_kind']}) now {snap['score_now']:.4g}")
        for reason in snap["reasons"][:3]:
            lines.append(f"          {reason}")
    else:
        before = said and said("fit", snap.get("fit_error", ""))
        lines.append(f"  law     not fitted yet{f' (as at {before})' if before else ': ' + snap.get('fit_error', '')}")
    if snap.get("forecast"):
        lines += packed(f"  forecast at {forecast_at(snap)}: ", forecast_cells(snap, said), ";  ", " " * 4)
    elif snap.get("forecast_error"):
        before = said and said("forecast", snap["forecast_error"])
        lines.append(f"  forecast: {f'none (as at {before})' if before else snap['forecast_error']}")
    lines += [f"  {line}" for line in once(regime_lines(snap), seen, when)]
    for line in snap.get("decision_lines", []):  # a call refused for the same reason: its reason said once
        head, sep, why = line.partition("call: none: ")
        before = said and sep and said("call", why)
        if not sep:  # where the gain runs to and why ("no planned last step ...; give --total-steps N"): once
            head, sep, why = line.partition(" % bounds; step ")
            step, colon, source = why.partition(": ")
            before = said and sep and colon and said("gain to", re.sub(r"\d+", "#", source))
            lines.append(f"{head}{sep}{step}: chosen as at {before})"[2:] if before else line[2:])
            continue
        lines.append(f"{head}call: none (as at {before})"[2:] if before else line[2:])
    if done:
        done()
    lines += [f"  note: {snap['total_note']}"] if snap.get("total_note") else []
    lines += [f"  note: {snap['target_note']}"] if snap.get("target_note") else []
    lines += [f"  note: {snap['runs_note']}"] if snap.get("runs_note") else []
    lines += [f"  read: {n}" for n in snap.get("read_notes", [])]
    lines += [f"  damaged: {d}" for d in [*snap.get("damaged", []), *snap.get("cut_at_end", [])]]
    lines += [f"  rows: {d}" for d in snap.get("dropped", [])]
    lines += [f"  note: {n}" for n in notes]
    return plumbing.wrap("\n".join(lines))


def render_rich(snap: dict | None, notes: list, when: str, path: Path):
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    if snap is None:
        return Panel(Text("\n".join(notes) or "waiting for the log ..."), title=_title(path))
    t = Table.grid(padding=(0, 2))
    t.add_column(style="bold")
    t.add_column()
    t.add_row("run", f"{snap['run_id']}  step {snap['last_step']}  ({snap['entropy_points']} entropy points)")
    t.add_row("entropy now", num(snap["entropy_now"]) + (" nats" if snap["entropy_now"] is not None else ""))
    for line in snap.get("sweep_lines") or []:
        t.add_row("sweep", line)
    if "a" in snap:
        lo, hi = snap["ceiling_ci"]
        colour = {"good fit": "green", "weak fit": "yellow"}.get(snap["trust"], "red")
        t.add_row("law", f"{plumbing.law_formula(snap['a'], snap['b'])}   R² {r2_text(snap['r2'])}   "
                         f"points {snap['points']}")
        t.add_row("ceiling", f"{snap['ceiling']:.4g}  [{lo:.4g}, {hi:.4g}]")
        t.add_row("trust", Text(snap["trust"] + ("; " + "; ".join(snap["reasons"][:2]) if snap["reasons"] else ""),
                                style=colour))
        t.add_row("score", f"{snap['y_key']} ({snap['score_kind']}) now {snap['score_now']:.4g}")
    else:
        t.add_row("law", f"not fitted yet: {snap.get('fit_error', '')}")
    for i, cell in enumerate(forecast_cells(snap)):  # the step once: each method's interval then fits one line
        t.add_row("forecast" if not i else "", (f"at {forecast_at(snap)}:\n" if not i else "") + cell)
    if snap.get("forecast_error"):
        t.add_row("forecast", snap["forecast_error"])
    for line in regime_lines(snap):
        t.add_row("regime", Text(line, style="yellow"))
    for line in snap.get("decision_lines", []):
        head, _, rest = line.strip().partition(": ")
        head, _, method = head.partition(" (")  # "gain (logit-drift)": the method to the values, its column narrow
        rest = f"({method} {rest}" if method else rest
        t.add_row(head if not line.startswith("      ") else "",
                  rest if not line.startswith("      ") else line.strip())
    for d in [*snap.get("damaged", []), *snap.get("cut_at_end", []), *snap.get("dropped", [])]:
        t.add_row("rows", Text(d, style="yellow"))
    if snap.get("runs_note"):
        t.add_row("runs", snap["runs_note"])
    for n in snap.get("read_notes", []):
        t.add_row("read", Text(n, style="yellow"))
    # the notes (a log truncated, removed, unreadable now) first: a panel taller than the terminal loses its
    # last lines, and below the table they were lost in a terminal of 24 or 30 rows, the fit shown as current
    body = Group(Text("\n".join(notes), style="dim"), t) if notes else t
    return Panel(body, title=_title(path), subtitle=f"refreshed {when}")


def _title(path: Path) -> str:
    """The panel's title: the log's path, or its name where the path would be cut at the terminal's width."""
    title = f"entropylaw watch {path}"
    return title if len(title) <= plumbing.width() - 6 else f"entropylaw watch {path.name or path}"


def _kept(new: dict, old: dict | None, notes: list) -> dict:
    """``new``, or, where it has no fit and ``old`` had one (a log truncated or rotated and read
    again from its start), ``new`` over ``old``: the fit and forecast a refresh without a fit
    lacks stay on show, said."""
    if "a" in new:
        return {**new, "fitted_at": time.strftime("%H:%M:%S")}
    if old is None or "a" not in old:
        return new
    notes.append(f"the log now holds too few points ({new.get('fit_error', 'no fit')}): the fit of "
                 f"{old.get('fitted_at', 'the last refresh')} stays on show")
    return {**old, **{k: v for k, v in new.items() if k not in FORECAST_KEYS}}  # the forecast of that fit's log


# what a refresh says of the forecast: kept with the fit on show when a refresh has none
FORECAST_KEYS = {"forecast", "forecast_error", "forecast_step", "forecast_from", "forecast_warnings", "decision",
                 "decision_lines", "sweep_lines", "default_method", "regime", "regime_why", "law_on_window",
                 "total_note", "y_key"}


class TargetError(EntropyLawError):
    """--target outside the score's range: an error of the command line, never a state to wait out."""


def run(args) -> int:
    if "://" in args.path:  # a Path would fold its "//" and call it a missing folder
        raise EntropyLawError(f"{args.path}: watch follows a local log file or folder, not a URI (give the run's "
                              "local folder: W&B's wandb/run-*/, an mlruns/ directory; `forecast` reads the URI)")
    path = Path(args.path)
    if not path.exists() and not path.parent.is_dir():  # a log not written yet is waited for; its folder exists
        raise EntropyLawError(f"{path}: no such file or directory, nor its folder {path.parent} (watch waits for "
                              "a log that a trainer has yet to write, in a folder that exists)")
    if args.run and len(args.run) > 1:  # the option is repeatable elsewhere; watch follows one run
        raise EntropyLawError(f"--run given {len(args.run)} times ({', '.join(args.run)}): watch follows one run; "
                              "give one (run `watch` once per run to follow several)")
    if args.entropy_convention:  # a user's mistake, not a state of the log: said once, not waited on
        plumbing.parse_entropy_convention(args.entropy_convention)
    live = None
    if not args.plain and sys.stdout.isatty():
        try:
            from rich.live import Live

            live = Live(render_rich(None, [], "", path), refresh_per_second=4, transient=False)
        except ImportError:
            live = None
    last_sig, last_change, snap, refreshes, notes, when = None, time.monotonic(), None, 0, [], ""
    seen: dict = {}  # the paragraphs a plain refresh said: a later one cuts them to what changed (once)
    waited: dict = {}  # why a refresh could not read the log (its numbers masked) -> (when, which refresh) said it
    # (a panel, which keeps its last 4 notes, says each in full)
    interrupted = False  # Ctrl-C: the user stopped it; a limit reached having read nothing is said (below)
    try:
        if live is not None:
            live.start()
        waiting = False
        while True:
            if not path.exists():  # started before the trainer wrote its log, or the log removed: waited for,
                if not waiting:  # said once each time it goes
                    said = f"{time.strftime('%H:%M:%S')} " + (
                        f"{path} was removed: waiting for it to appear again (Ctrl-C to stop)" if last_sig is not None
                        else f"waiting for {path} to appear (Ctrl-C to stop)")
                    if live is not None:  # the last fit stays on show, with the removal under it
                        live.update(render_rich(snap, [*notes, said], when, path))
                    else:
                        print(said, flush=True)
                    waiting = True
                if args.exit_idle is not None and time.monotonic() - last_change >= args.exit_idle:
                    break
                time.sleep(args.interval)
                continue
            waiting = False
            sig = Signature.of(path)
            if sig != last_sig:
                if last_sig is not None:
                    for name, what in sig.shrunk(last_sig):
                        notes.append(f"{time.strftime('%H:%M:%S')} {name} was {what}: read again from the start")
                last_change = time.monotonic()
                when = time.strftime("%H:%M:%S")
                ok = False
                try:
                    snap, ok = _kept(snapshot(args, path), snap, notes), True
                    waited.clear()  # read: a wait after it is said in full
                    notes = notes[-3:]
                    if snap.get("target_error"):  # outside the score's range, found before any fit
                        raise TargetError(snap["target_error"])
                    bad = plumbing.target_out_of_range([snap.get("decision")])
                    if bad:  # a user's mistake, not a state of the log: said once, as an error
                        raise TargetError(f"--target {args.target:g}: {bad}")
                except TargetError:
                    raise
                except (EntropyLawError, OSError, ValueError) as err:
                    said = getattr(args, "flags", str)(str(err))
                    said = said.splitlines()[0] if said else type(err).__name__
                    shape = re.sub(r"\d+", "#", said)  # "no step lines in 5 lines", then in 15: the same wait
                    first = waited.setdefault(shape, (when, refreshes)) if live is None else (when, refreshes)
                    notes.append(f"{when} waiting: " + (f"as at {first[0]}" if first[1] != refreshes else said))
                    notes = notes[-4:]
                refreshes += 1
                if live is not None:
                    live.update(render_rich(snap, notes, when, path))
                else:
                    print(render_plain(snap, notes, when, seen) if ok else "\n".join(notes), flush=True)
                    notes = []
                last_sig = sig
                last_change = time.monotonic()  # idle from the refresh's end: a change during a slow one is still read
                if args.max_refreshes is not None and refreshes >= args.max_refreshes:
                    break
            if args.exit_idle is not None and time.monotonic() - last_change >= args.exit_idle:
                break
            time.sleep(args.interval)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if live is not None:
            live.stop()
    print(f"stopped watching {path} after {refreshes} refresh{'es' if refreshes != 1 else ''}", file=sys.stderr)
    if snap is None and not interrupted:  # stopped by --max-refreshes or --exit-idle having read nothing: a script
        # that watches for a bounded time learns it from the exit code, not only from the "waiting" lines
        print(f"entropylaw: error: no refresh could read {path}: nothing was shown", file=sys.stderr)
        return 2
    return 0
