"""Findings of the TRL GRPO run (analysis/trl_run.py): does entropy collapse, does the law fit, how early?

    .venv/bin/python analysis/trl_findings.py [--table data/trl/smollm2_grpo.parquet] [--out data/trl]

Reads the tidy table that ``trl_run.py --export`` wrote from TRL's own files and writes
``findings.json`` and three figures (``fig_trl_run.png``: entropy and held-out accuracy by
step; ``fig_trl_law.png``: accuracy against entropy with the fitted law; ``fig_trl_early.png``:
the ceiling fitted from the first K steps against K, with the accuracy finally reached).
Every fit is the one pipeline (:func:`entropylaw.fit.run.fit_run`); a cut-off K uses only
the rows at steps <= K. ``fit_eval_entropy`` is the same law with the entropy of the held-out
completions themselves (TRL's ``eval_entropy``) in place of the training entropy.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw import table  # noqa: E402
from entropylaw.errors import EntropyLawError  # noqa: E402
from entropylaw.fileio import atomic_write, write_json  # noqa: E402
from entropylaw.fit.run import fit_run  # noqa: E402

TABLE = ROOT / "data" / "trl" / "smollm2_grpo.parquet"


def _fit(df, run_id, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit_run(df, run_id, warn=False, **options)


def summarise_fit(fit) -> dict:
    return {"a": fit.a_, "b": fit.b_, "ceiling": fit.ceiling_, "ceiling_ci": list(fit.ceiling_ci_), "r2": fit.r2_,
            "n": fit.n_, "trust": fit.trust_, "reasons": list(fit.trust_reasons_), "y_key": fit.meta_.get("y_key"),
            "score_kind": fit.meta_.get("score_kind")}


def findings(df, run_id: str, cutoffs=None) -> dict:
    ent = table.series(df, run_id, table.ENTROPY)
    full = _fit(df, run_id)
    y_key = full.meta_["y_key"]
    acc = table.series(df, run_id, y_key)
    head, tail = ent.iloc[:5].mean(), ent.iloc[-5:].mean()
    final_acc = float(acc.iloc[-3:].mean())
    out = {"run_id": run_id, "steps": int(ent.index.max()), "entropy_first5": float(head),
           "entropy_last5": float(tail), "entropy_ratio_last_to_first": float(tail / head),
           "score_key": y_key, "score_first": float(acc.iloc[0]), "score_last3_mean": final_acc,
           "score_max": float(acc.max()), "fit_full": summarise_fit(full), "early": []}
    last = int(ent.index.max())
    cutoffs = cutoffs or [k for k in (20, 30, 40, 50, 75, 100, 125, 150, 175) if k < last]
    for k in cutoffs:
        sub = df[df["step"] <= k]
        row = {"cutoff": int(k)}
        try:
            f = _fit(sub, run_id)
            lo, hi = f.ceiling_ci_
            row.update(summarise_fit(f), error_vs_final=float(f.ceiling_ - final_acc),
                       final_inside_ci=bool(lo <= final_acc <= hi),
                       error_vs_full_fit=float(f.ceiling_ - full.ceiling_))
        except EntropyLawError as err:
            row["error"] = str(err)
        out["early"].append(row)
    if len(table.series(df, run_id, "eval_entropy")):
        # the law on the held-out samples alone: each evaluation's accuracy against the entropy of
        # the same completions, so the base model's evaluation (step 0, before any training
        # entropy is logged) is a point too
        try:
            out["fit_eval_entropy"] = summarise_fit(_fit(df, run_id, x="eval_entropy"))
        except EntropyLawError as err:
            out["fit_eval_entropy"] = {"error": str(err)}
    live = "entropylaw/ceiling"
    if live in set(df.loc[df["run_id"] == run_id, "metric"]):  # what EntropyLawCallback said during training
        s = table.series(df, run_id, live)
        out["callback_ceiling"] = {int(k): float(v) for k, v in s.items()}
    return out


def figures(df, run_id: str, res: dict, out: Path) -> list:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ent = table.series(df, run_id, table.ENTROPY)
    y_key = res["score_key"]
    acc = table.series(df, run_id, y_key)
    fit = res["fit_full"]
    paths = []
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.plot(ent.index, ent.values, lw=1, color="C0", label="entropy (TRL `entropy`)")
    ax.set_xlabel("training step")
    ax.set_ylabel("entropy (nats)", color="C0")
    ax2 = ax.twinx()
    ax2.plot(acc.index, acc.values, "o-", ms=3, color="C1", label=f"held-out accuracy ({y_key})")
    ax2.axhline(fit["ceiling"], color="C1", ls="--", lw=1, label=f"law ceiling {fit['ceiling']:.3f}")
    ax2.set_ylabel("held-out sampled accuracy", color="C1")
    fig.legend(loc="lower center", ncol=3, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    paths.append(_save(fig, out / "fig_trl_run.png"))
    fig, ax = plt.subplots(figsize=(4.5, 3.6))
    steps = [s for s in acc.index if s in ent.index]
    H, R = ent.loc[steps].to_numpy(), acc.loc[steps].to_numpy()
    sc = ax.scatter(H, R, c=steps, s=14, cmap="viridis")
    grid = np.linspace(min(0.0, H.min()), H.max() * 1.05, 100)
    ax.plot(grid, fit["b"] - fit["a"] * np.exp(grid), "k-", lw=1,
            label=f"R = -{fit['a']:.3f} exp(H) + {fit['b']:.3f} (R² {fit['r2']:.2f})")
    ax.set_xlabel("entropy H")
    ax.set_ylabel("held-out accuracy R")
    ax.legend(fontsize=7, frameon=False)
    fig.colorbar(sc, ax=ax, label="step")
    fig.tight_layout()
    paths.append(_save(fig, out / "fig_trl_law.png"))
    early = [r for r in res["early"] if "ceiling" in r]
    if early:
        fig, ax = plt.subplots(figsize=(5, 3.4))
        k = [r["cutoff"] for r in early]
        c = np.array([r["ceiling"] for r in early])
        lo = np.array([r["ceiling_ci"][0] for r in early])
        hi = np.array([r["ceiling_ci"][1] for r in early])
        ax.fill_between(k, lo, hi, color="C2", alpha=0.25, lw=0)
        ax.plot(k, c, "o-", color="C2", ms=3, label="ceiling fitted on steps <= K")
        ax.axhline(res["score_last3_mean"], color="k", ls="--", lw=1, label="accuracy reached (last 3 evals)")
        ax.set_xlabel("K (last step used)")
        ax.set_ylabel("predicted ceiling")
        ax.set_ylim(max(-0.05, float(np.nanmin(lo)) - 0.05), min(1.05, float(np.nanmax(hi)) + 0.05))
        ax.legend(fontsize=7, frameon=False)
        fig.tight_layout()
        paths.append(_save(fig, out / "fig_trl_early.png"))
    return paths


def _save(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt

    with atomic_write(path) as tmp:
        fig.savefig(tmp, dpi=150)
    plt.close(fig)
    return path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--table", default=str(TABLE))
    p.add_argument("--out", default=str(TABLE.parent))
    args = p.parse_args(argv)
    df = table.read(args.table)
    [run_id] = table.run_ids(df)[:1]
    res = findings(df, run_id)
    out = Path(args.out)
    write_json(out / "findings.json", res, indent=2)
    for path in figures(df, run_id, res, out):
        print(f"wrote {path}")
    f = res["fit_full"]
    print(f"entropy {res['entropy_first5']:.3f} -> {res['entropy_last5']:.3f}; {res['score_key']} "
          f"{res['score_first']:.3f} -> {res['score_last3_mean']:.3f}; law a={f['a']:.4g} b={f['b']:.4g} "
          f"ceiling {f['ceiling']:.3f} [{f['ceiling_ci'][0]:.3f}, {f['ceiling_ci'][1]:.3f}] R² {f['r2']:.3f} "
          f"({f['trust']})")
    g = res.get("fit_eval_entropy", {})
    if "ceiling" in g:
        print(f"held-out samples' own entropy (eval_entropy, step 0 included): a={g['a']:.4g} b={g['b']:.4g} "
              f"ceiling {g['ceiling']:.3f} [{g['ceiling_ci'][0]:.3f}, {g['ceiling_ci'][1]:.3f}] R² {g['r2']:.3f} "
              f"n {g['n']} ({g['trust']})")
    for r in res["early"]:
        if "ceiling" in r:
            lo, hi = r["ceiling_ci"]
            print(f"  K={r['cutoff']:>4}: ceiling {r['ceiling']:.3f} [{lo:.3f}, {hi:.3f}]  vs reached "
                  f"{res['score_last3_mean']:.3f}  ({r['trust']})")
        else:
            print(f"  K={r['cutoff']:>4}: {r['error']}")
    print(json.dumps({"wrote": str(out / "findings.json")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
