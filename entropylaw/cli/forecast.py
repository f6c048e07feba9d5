"""``entropylaw forecast INPUT...``: where a run will end up and when it stops paying.

For each run: the score at a future step, the plateau, and the step by which 90 % of the
remaining change is made, each with an interval, using no information past the window
(:mod:`entropylaw.fit.forecast.core`). Windows are measured from the first logged step:

- live (default): everything logged so far; ``--at-step S`` or ``--horizon N`` (steps after
  the last logged one) says where to forecast, else as far ahead as the log is long;
- ``--fit-steps K``: only the first K steps (live, or to check a forecast);
- ``--fit-frac F``: a backtest of a finished run (its length is known only once it has
  finished): fit on the first fraction F, forecast the rest and show what was observed.

``--compare`` reports every method; ``--prior RUNS`` adds the ``prior`` method from
finished runs of the same family. ``predict`` keeps the paper's protocol (later scores read
off the observed later entropy); this command never reads later entropy.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from entropylaw.cli._fitargs import (add_entropy_convention, dump_json, fmt_table, parse_conf, parse_n_boot,
                                      parse_score, parse_seed, whole_number)
from entropylaw.errors import EntropyLawError, EntropyLawWarning


def _fraction(text: str) -> float:
    try:
        f = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a fraction such as 0.15") from None
    if not 0 < f < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: the fraction must lie strictly between 0 and 1")
    return f


def _steps(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number of steps such as 100") from None
    if not np.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be a positive number of steps")
    return v


def _step(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a training step such as 500") from None
    if not np.isfinite(v):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a finite training step")
    return v


def _problems(text: str) -> int:
    return whole_number(text, 1, 1319, "expected 1 problem or more")


def _gain(text: str) -> float:
    v = parse_score(text)
    if not v > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a gain above 0 such as 0.01")
    return v


def add_parser(subparsers) -> None:
    from entropylaw.fit.forecast.core import ALL_METHODS, DEFAULT, DEFAULT_BY_KIND, METHODS

    p = subparsers.add_parser("forecast", help="forecast a run's score, plateau and 90 %% step from its first steps",
                              description=__doc__.split("\n\n")[0].split(": ", 1)[1],
                              formatter_class=argparse.RawDescriptionHelpFormatter,
                              epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="run table (.parquet/.csv), log file, directory of them, or anything `ingest` reads")
    g = p.add_argument_group("forecast")
    g.add_argument("--run", metavar="ID", action="append", help="forecast only this run (repeatable)")
    where = g.add_mutually_exclusive_group()
    where.add_argument("--at-step", type=_step, metavar="S", help="forecast the score at training step S")
    where.add_argument("--horizon", type=_steps, metavar="N", help="forecast N steps after the window's end")
    window = g.add_mutually_exclusive_group()
    window.add_argument("--fit-frac", type=_fraction, metavar="F",
                        help="backtest a finished run: fit on its first fraction F (from the first logged step)")
    window.add_argument("--fit-steps", type=_steps, metavar="K", help="fit on the first K steps from the first "
                                                                     "logged step (default: everything logged)")
    g.add_argument("--method", choices=[DEFAULT, *ALL_METHODS], default=DEFAULT,
                   help="forecast method (default: the one chosen by a rule fixed in advance on the backtest of "
                        "real runs, for the run's kind of score: "
                        + ", ".join(f"{k} {v}" for k, v in DEFAULT_BY_KIND.items()) + "; see the README)")
    g.add_argument("--compare", action="store_true", help="report every method side by side")
    g.add_argument("--prior", nargs="+", metavar="RUNS",
                   help="finished runs of the same recipe (files, as INPUT): logit-drift learns its prior on the "
                        "climb's rate from them (with the model size as a covariate from 3 sizes), and the 'prior' "
                        "method its empirical-Bayes prior")
    g.add_argument("--prior-base", choices=list(METHODS), default="law+entropy",
                   help="the method the prior acts on (default law+entropy: priors on a, b and the entropy decay)")
    g.add_argument("--y-key", metavar="METRIC", help="score to forecast (default: val/mean, else the single "
                                                     "val/<bench>, else the training score)")
    g.add_argument("--x-key", default="entropy", metavar="METRIC", help="entropy metric (default: entropy)")
    g.add_argument("--conf", type=parse_conf, default=0.9, help="interval level, 0 < CONF < 1 (default 0.9)")
    g.add_argument("--n-boot", type=parse_n_boot, default=200, help="bootstrap draws, >= 2 (default 200)")
    g.add_argument("--seed", type=parse_seed, default=0, help="bootstrap seed, >= 0 (default 0)")
    g.add_argument("--json", action="store_true", help="print JSON (one object per run)")
    d = p.add_argument_group("can I stop it? will it get there?")
    d.add_argument("--target", type=parse_score, metavar="SCORE", help="the step at which the forecast reaches SCORE "
                                                                 "(e.g. 0.85), with its interval")
    d.add_argument("--n-problems", type=_problems, metavar="N", help="validation set size: the stop-paying threshold "
                   "is one binomial standard error of N problems (default: known benchmarks by name, else the "
                   "window's noise)")
    d.add_argument("--threshold", type=_gain, metavar="GAIN", help="stop paying when the expected gain over the "
                                                                   "next 10 %% of the run is below GAIN")
    d.add_argument("--total-steps", type=_steps, metavar="N", help="the run's planned last step (its 10 %% is the "
                                                                  "look-ahead; default: the last forecast step)")
    add_entropy_convention(g)
    try:
        from entropylaw.cli.sources import add_source_arguments
    except ImportError:
        from entropylaw.cli.ingest import add_source_arguments
    add_source_arguments(p)
    p.set_defaults(func=run)


COLUMNS = [("method", "method"), ("step", "step"), ("forecast", "forecast"), ("interval", "interval"),
           ("observed", "observed"), ("plateau", "plateau"), ("plateau_ci", "plateau_ci"), ("90%_step", "t90"),
           ("90%_step_ci", "t90_ci"), ("note", "note")]


def _check(args) -> None:
    """Option combinations argparse cannot express, before any file is read."""
    if args.method == "prior" and not args.prior:
        raise EntropyLawError("--method prior needs --prior RUNS (finished runs of the same family)")


def _load(args, sources, only=None):
    from entropylaw.cli._fitargs import load_inputs

    ns = argparse.Namespace(**{**vars(args), "inputs": list(sources), "only": only})
    return load_inputs(ns)


def run(args) -> int:
    import entropylaw.table as table
    from entropylaw.fit.forecast.core import ALL_METHODS, DEFAULT, PRIOR, decision_lines, default_method, forecast
    from entropylaw.fit.forecast.data import RunData

    _check(args)
    df = _load(args, args.inputs, args.run)
    prior_runs = []
    if args.prior:
        pdf = _load(args, args.prior)
        prior_runs = [RunData.from_table(pdf, r, x_key=args.x_key) for r in table.run_ids(pdf)]
    methods = [m for m in ALL_METHODS if m != PRIOR or prior_runs] if args.compare else [args.method]
    ids = table.run_ids(df)
    outputs = []
    for rid in ids:
        try:
            run_data = RunData.from_table(df, rid, y_key=args.y_key, x_key=args.x_key)
            end = run_data.last
            if args.fit_frac is not None or args.fit_steps is not None:
                from entropylaw.fit.forecast.data import window_end

                end = window_end(run_data, args.fit_frac, args.fit_steps)
            at = None
            if args.at_step is not None:
                at = [args.at_step]
            elif args.horizon is not None:
                at = [end + args.horizon]
            fc = forecast(run_data, fit_frac=args.fit_frac, fit_steps=args.fit_steps, at_steps=at, methods=methods,
                          conf=args.conf, prior_runs=prior_runs, prior_base=args.prior_base, n_boot=args.n_boot,
                          seed=args.seed, target=args.target, threshold=args.threshold,
                          n_problems=args.n_problems, total_steps=args.total_steps)
        except EntropyLawError as err:
            if len(ids) == 1:
                raise
            warnings.warn(f"run {rid!r} left out: {err}", EntropyLawWarning, stacklevel=1)
            continue
        outputs.append((run_data, fc))
    if not outputs:
        raise EntropyLawError("no run could be forecast (see the warnings above)")
    if args.json:
        docs = [{**_with_observed(rd, fc.to_dict()), "law_on_window": _law_verdict(rd, fc.window_end) or "applies"}
                for rd, fc in outputs]
        print(dump_json(docs if len(docs) > 1 else docs[0]))
        return 0
    for i, (rd, fc) in enumerate(outputs):
        if i:
            print()
        print(_header(rd, fc, args))
        print(fmt_table(_rows(rd, fc), COLUMNS))
        for r in fc.methods.values():
            for w in r.warnings:
                print(f"  {r.method}: {w}")
        for line in decision_lines(fc.decision):
            print(line[2:])
    if not args.compare and args.method == DEFAULT:
        kinds = sorted({fc.target_kind for _, fc in outputs})
        said = ", ".join(f"{default_method(k)} for {KIND_PLURAL.get(k, k)}" for k in kinds)
        print(f"\n(default method {said}, last-value where "
              "it cannot run: chosen by a rule fixed in advance on the backtest of the real runs at 15 % of their "
              "steps, which bounds the worst run's error as well as the median's, see analysis/bench_forecast.py; "
              "--compare shows every method, with the plateau and the 90 % step of the curve methods)")
    return 0


KIND_PLURAL = {"validation": "validation scores", "training score": "training scores"}


def _observed(rd, step):
    hit = np.nonzero(rd.target.steps == step)[0]
    return float(rd.target.values[hit[0]]) if len(hit) else None


def _with_observed(rd, d):
    d["observed"] = {str(s): _observed(rd, s) for s in d["at_steps"] if _observed(rd, s) is not None}
    return d


def _header(rd, fc, args) -> str:
    share = ""
    if args.fit_frac is not None:
        share = f" ({args.fit_frac:.0%} of the run, a backtest)"
    lines = [f"run {rd.run_id}: forecasting {fc.target_key} ({fc.target_kind}) from steps {fc.origin:g}..{fc.window_end:g}"
             f"{share}, {fc.n_window} point(s); the log starts at step {rd.origin:g} and ends at step {rd.last:g}; "
             f"{fc.conf:.0%} intervals; no information after step {fc.window_end:g} is used"]
    if fc.note:
        lines.append(f"note: {fc.note}")
    verdict = _law_verdict(rd, fc.window_end)
    if verdict:
        lines.append(verdict)
    return "\n".join(lines)


def _law_verdict(rd, end: float) -> str | None:
    """The law's verdict on the forecast window alone (no later information), when it does not
    apply: the curve methods' plateaus then describe a trend, not the law's ceiling."""
    from entropylaw.fit.applicability import DOES_NOT_APPLY, law_applies

    if rd.entropy is None:
        return None
    h_in, y_in = rd.entropy.steps <= end, rd.target.steps <= end
    verdict, reasons = law_applies(rd.entropy.steps[h_in], rd.entropy.values[h_in], rd.target.values[y_in],
                                   score_range=rd.bounds, score_steps=rd.target.steps[y_in])
    if verdict != DOES_NOT_APPLY:
        return None
    return f"law: does not apply to steps up to {end:g} ({'; '.join(reasons)}): read the plateau as a trend, not a ceiling"


def _rows(rd, fc):
    step = float(fc.at_steps[-1])
    rows = []
    for name, r in fc.methods.items():
        row = {"method": name}
        if not r.ok:
            row["note"] = f"cannot run: {r.reason}"
        else:
            f = r.forecast.iloc[-1]
            row.update(step=f"{f['step']:g}", forecast=float(f["forecast"]), interval=[float(f["lo"]), float(f["hi"])],
                       observed=_observed(rd, step), plateau=r.plateau, plateau_ci=r.plateau_ci,
                       t90=None if r.t90 is None else f"{r.t90:.0f}", t90_ci=_steps_ci(r.t90_ci), note=r.note)
            if "prior_shift" in r.forecast:
                row["note"] = f"prior moved the forecast by {float(f['prior_shift']):+.4f}"
        rows.append(row)
    return rows


def _steps_ci(ci):
    if ci is None:
        return None
    return "[" + ", ".join("inf" if v is None else f"{v:.0f}" for v in ci) + "]"
