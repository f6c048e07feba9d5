"""``entropylaw fit INPUT...``: fit R = -a exp(H) + b per run (or ``--pool`` for one family).

Prints a and b with standard errors, the ceiling b - a with its interval, the trust flag
(good fit / weak fit / law does not apply) with its reasons beside the ceiling, R^2,
RMSE, the residual autocorrelation and which functional form wins by AIC; ``--json`` for
machines (with the row accounts), ``--plot FILE`` for the figure.
"""

from __future__ import annotations

import sys
import warnings

from entropylaw import api
from entropylaw.api import plumbing
from entropylaw.cli.options import add_fit_arguments, print_warning
from entropylaw.cli.sources import dump_json, fit_options, read_runs
from entropylaw.errors import EntropyLawError, EntropyLawWarning

COLUMNS = [("run", "run_id"), ("n", "n"), ("a", "a"), ("a_se", "a_stderr"), ("b", "b"), ("b_se", "b_stderr"),
           ("ceiling", "ceiling"), ("ceiling_ci", "ceiling_ci"), ("trust", "trust"), ("r2", "r2"),
           ("rmse", "rmse"), ("resid_ac1", "residual_autocorr"), ("best_form", "best_form_aic"), ("y_key", "y_key")]
# what a narrow terminal leaves out first (--json has every column)
OPTIONAL = ("rmse", "resid_ac1", "best_form", "y_key", "r2", "n", "a_se", "b_se")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("fit", help="fit the entropy-performance law R = -a exp(H) + b",
                              description="Fit R = -a*exp(H) + b to each run: a, b, the ceiling b - a with its "
                                          "interval, goodness of fit, alternative forms by AIC/BIC.")
    add_fit_arguments(p, json_help="print JSON instead of a table: {fits: [one object per run], row_accounts, "
                                   "left_out (run: why) where a run was}, one run or many (--pool: the family's "
                                   "one object)")
    g = p.add_argument_group("model")
    g.add_argument("--form", choices=plumbing.FIT_FORMS, default="exp",
                   help="functional form fitted (default exp: the law)")
    g.add_argument("--robust", choices=plumbing.ROBUST_LOSSES, help="robust loss against outlier steps")
    g.add_argument("--eiv", action="store_true", help="errors-in-variables (scipy.odr): entropy is noisy too")
    g.add_argument("--pool", action="store_true", help="fit all runs as one family (one shared a, b)")
    p.set_defaults(func=run)


def run(args) -> int:
    df = read_runs(args)
    with warnings.catch_warnings(record=True) as caught:  # said once, grouped, after the table
        warnings.simplefilter("always", EntropyLawWarning)
        fits = api.fit_all(df, pool=args.pool, form=args.form, robust=args.robust, errors_in_variables=args.eiv,
                           skip_errors=not (args.strict or args.pool), **fit_options(args))
    left_out = getattr(fits, "left_out", {})
    if not fits:
        raise EntropyLawError(plumbing.left_out_line(left_out, "nothing fitted"))
    for w in caught:
        if not issubclass(w.category, EntropyLawWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    # each run's own messages (a grouped warning keeps those it stands for)
    messages = [m for w in caught if issubclass(w.category, EntropyLawWarning)
                for m in getattr(w.message, "messages", [str(w.message)])
                if not m.startswith(tuple(f"run {r!r} not fitted" for r in left_out))]  # said below, once
    rows = [f.to_dict() for f in fits]
    if args.plot:  # said on stderr: stdout may be --json
        written = plumbing.save_fit_figures(df, fits, args.plot, pooled=args.pool)
        print(plumbing.wrap("wrote " + ", ".join(map(str, written))), file=sys.stderr)
    if args.json:
        # one shape however many runs: {"fits": [...]} (one run: a list of one); --pool: the one family's fit
        out = rows[0] if args.pool else {"fits": rows}
        if left_out:
            out["left_out"] = left_out
        print(args.flags(dump_json(plumbing.with_accounts(out, df))))
        return 0
    print(plumbing.wrap(f"{plumbing.FORM_MODELS[args.form]} ({args.form}); {rows[0]['interval_method']}; "
                        f"{args.conf * 100:g} % intervals"))
    print(plumbing.fmt_table(rows, COLUMNS, optional=OPTIONAL))
    print_notes(rows, [] if args.quiet else messages, args.flags)
    if left_out:
        print(plumbing.wrap(args.flags(plumbing.left_out_line(left_out))))
    return 0


def print_notes(rows: list[dict], messages: list[str], flags=str) -> None:
    """Per run, what qualifies its numbers (trust reasons, warnings not already in them), then
    the runs fitted on the training score, in one line."""
    training = [d["run_id"] for d in rows if d.get("score_kind") == "training score"]
    for d in rows:
        rid, lines = d["run_id"], []
        if d.get("trust") != "good fit" and d.get("trust_reasons"):
            lines.append(f"{d['trust']}: {'; '.join(d['trust_reasons'])}")
        said = " ".join(lines)
        for w in d.get("warnings", []):
            if not (w.startswith(("fitted a =", "a = ", "only ")) and said):  # the trust line has it
                lines.append(w)
        if d.get("dropped"):
            lines.append("dropped scores: " + ", ".join(f"{k}: {v}" for k, v in d["dropped"].items()))
        for line in lines:
            print(plumbing.wrap(flags(f"{rid}: {line}")))
    if training:
        print(plumbing.wrap(f"fitted on the training score (no validation score logged): {', '.join(training)}"))
    fit_said = {w for d in rows for w in d.get("warnings", [])}
    left = [m for m in messages
            if not any(w in m for w in fit_said) and "no validation score" not in m and "does not apply" not in m]
    for line, _ in plumbing.group_repeats(left):
        print_warning(flags(line))
