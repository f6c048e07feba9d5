"""The size law's words and numbers: its report text and its JSON (one source for both)."""

from __future__ import annotations

from entropylaw.fit.size_forms import WHAT
from entropylaw.fit.size_spread import FLOOR_SOURCE
from entropylaw.terminal import some_names

RECIPE = ("algorithm", "dataset")  # what a size series holds fixed, where its runs name it


def size_text(n) -> str:
    """A parameter count in words, to 3 digits, in the unit that writes it without an exponent.

    >>> size_text(1.5e9), size_text(3.6e8), size_text(1e12), size_text(1.5e12), size_text(123e9)
    ('1.5B', '360M', '1T', '1.5T', '123B')
    """
    n = float(n)
    if n >= 1e12:
        return f"{n / 1e12:.3g}T"
    return f"{n / 1e9:.3g}B" if n >= 1e9 else f"{n / 1e6:.3g}M"


def mixed_recipes(rows) -> str | None:
    """Why one size law cannot be fitted to ``rows`` (a frame with ``run_id`` and :data:`RECIPE`'s
    columns): runs of several algorithms or training data sets (where they name one) put the
    recipe's difference on the size axis. None where they share one.

    >>> import pandas as pd
    >>> print(mixed_recipes(pd.DataFrame({"run_id": ["a", "b", "c"], "algorithm": ["grpo", "grpo", "ppo"],
    ...                                   "dataset": ["", "", ""]})))
    the runs come from 2 algorithms (grpo: a, b; ppo: c): a size law is one recipe at several sizes (choose its runs with `run`)
    """
    for what, word in zip(RECIPE, ("algorithms", "training data sets")):
        named = rows[rows[what].fillna("").astype(str) != ""] if what in rows else rows.iloc[:0]
        kinds = sorted(set(named[what])) if len(named) else []
        if len(kinds) > 1:
            by = "; ".join(f"{k}: {some_names(named.loc[named[what] == k, 'run_id'])}" for k in kinds)
            return (f"the runs come from {len(kinds)} {word} ({by}): a size law is one recipe at several sizes "
                    "(choose its runs with `run`)")
    return None


def _span(law, k) -> str:
    return f"{size_text(law.sizes_[0])}-{size_text(law.sizes_[k - 1])}"


def law_dict(law) -> dict:
    """The JSON of a fitted :class:`~entropylaw.fit.size_scores.FinalScoreLaw`."""
    spread = None
    if law.interval_:
        spread = {"formula": "sd(d) = sqrt(noise^2 (1 + leverage) + (per_decade * d)^2) on the logit scale, "
                             "d = decades beyond the sizes fitted",
                  "noise_logit": law.noise_, "per_decade": dict(law.per_decade_),
                  "per_decade_measured": dict(law.per_decade_measured_), "per_decade_floor": law.floor,
                  "floor_source": FLOOR_SOURCE, "t_df": law.df_}
    return {"what": law.what, "form": law.form_, "conf": law.conf, "bounds": list(law.bounds_), "rule": law.rule(),
            "forms": [{"form": f, "equation": WHAT[f], "weight": law.weights_[f], "params": law.params_[f]}
                      for f in law.combined_],
            "not_combined": dict(law.excluded_),
            "weights_scored_on": [{"fitted": _span(law, k), "predicted": size_text(law.sizes_[j])}
                                  for k, j in law.scored_pairs_],
            "spread": spread,
            "sizes": [{"n_params": float(s), "score": float(v), "runs": int(k)}
                      for s, v, k in zip(law.sizes_, law.scores_, law.n_runs_)],
            "forward_chaining": [{"form": r["form"], "fitted": _span(law, r["fitted"]),
                                  "predicted_size": size_text(law.sizes_[r["target"]]),
                                  "n_params": float(law.sizes_[r["target"]]), "distance_decades": r["distance"],
                                  "predicted": r["predicted"], "observed": float(law.scores_[r["target"]]),
                                  "logit_error": r["logit_error"]} for r in law.forward_],
            "backtest": [{"fitted": _span(law, r["fitted"]), "predicted_size": size_text(r["n_params"]),
                          "n_params": r["n_params"], "distance_decades": r["distance"], "predicted": r["predicted"],
                          "lo": r["lo"], "hi": r["hi"], "observed": r["observed"], "covered": r["covered"]}
                         for r in law.backtest()]}


def law_report(law) -> str:
    """The text of a fitted law: its forward-chaining table, the forms combined, the spread."""
    head = (f"{law.what.replace('_', ' ')} vs size over {len(law.sizes_)} sizes "
            f"({', '.join(size_text(s) for s in law.sizes_)})")
    if not law.interval_:
        return head + f": {law.rule()}"
    lines = [head + ":"]
    forms = law.combined_
    pct = f"{100 * law.conf:g} %"
    if law.forward_ or law.backtest():
        lines.append("  forward chaining: fit the smaller sizes, predict the larger ones (each form's logit error; "
                     "this rule's interval)")
        # at most 3 forms: 113 columns, inside a pipe's 120 (a wrapped row would lose its alignment)
        lines.append(f"    {'fitted':<12}{'predicts':>9}{'decades':>8}" + "".join(f"{f:>14}" for f in forms)
                     + f"{'this rule [' + pct + ']':>24}{'observed':>9}{'in?':>5}")
        err = {(r["form"], r["fitted"], r["target"]): r["logit_error"] for r in law.forward_}
        back = {(r["fitted"], r["target"]): r for r in law.backtest()}
        for k, j in sorted({(r["fitted"], r["target"]) for r in law.forward_} | set(back)):
            cells = "".join(f"{err[(f, k, j)]:>+14.3f}" if (f, k, j) in err else f"{'-':>14}" for f in forms)
            b = back.get((k, j))
            rule = "-" if b is None else f"{b['predicted']:.3f} [{b['lo']:.3f}, {b['hi']:.3f}]"
            lines.append(f"    {_span(law, k):<12}{size_text(law.sizes_[j]):>9}"
                         f"{law.u_[j] - law.u_[k - 1]:>8.2f}{cells}{rule:>24}{law.scores_[j]:>9.3f}"
                         f"{'-' if b is None else ('yes' if b['covered'] else 'NO'):>5}")
    else:
        lines.append(f"  forward chaining: {len(law.sizes_)} sizes hold none out (needs 4): the extrapolation error "
                     "cannot be measured; the floor per decade is used")
    how = ("weighted by their held-out errors at " + ", ".join(
        f"{size_text(law.sizes_[j])} from {_span(law, k)}" for k, j in law.scored_pairs_)) if law.scored_pairs_ \
        else "nothing held out that every form predicted: equal weights" if len(forms) > 1 else "one form"
    lines.append(f"  forms combined ({how}): " + ", ".join(f"{f} {100 * law.weights_[f]:.0f} %" for f in forms))
    for f, why in law.excluded_.items():
        lines.append(f"  not combined: {f}: {why}")
    per = ", ".join(f"{f} {law.per_decade_[f]:.3f}" + (" (floor)" if law.per_decade_measured_.get(f) is None
                                                      or law.per_decade_measured_[f] < law.floor else "")
                    for f in forms)
    lines.append(f"  spread (logit scale): each form's sd(d) = sqrt({law.noise_:.3f}^2 (1 + leverage) + (s1 d)^2), "
                 f"d = decades beyond the sizes fitted; the mixture of the forms' t ({law.df_} df)")
    lines.append(f"    s1 per decade, forward-chained, at least {law.floor:g} (published extrapolation errors): {per}")
    return "\n".join(lines)
