"""The text of :class:`~entropylaw.fit.law.EntropyLawFit`: its report (``fit_report``, ``str``) and
the words for each interval method."""

from __future__ import annotations

from entropylaw.terminal import wrap

INTERVAL_TEXT = {
    "ar1": "t interval, least-squares covariance under AR(1) residuals (REML, phi averaged)",
    "block-bootstrap": "moving-block residual bootstrap, percentile",
    "run-bootstrap": "bootstrap over runs, percentile",
    "iid": "t interval, textbook least-squares covariance (independent residuals)",
}


def fit_report(fit) -> str:
    """A plain-text report, like ``lmfit``'s: estimates, intervals, fit quality, trust, warnings."""
    pct = f"{100 * fit.conf:g} %"
    meta = getattr(fit, "meta_", {})
    law = "R = -a*exp(H) + b" if fit.form == "exp" else f"R = b - a*f(H), form {fit.form}"
    lines = [f"[[EntropyLawFit]] {getattr(fit, 'run_id_', None) or fit.where_}: {law}"]
    if meta.get("y_key"):
        kind = meta.get("score_kind", "")
        lines.append(f"    score       {meta['y_key']}{f' ({kind})' if kind else ''} vs "
                     f"{meta.get('x_key') or 'entropy'}, pairing {meta.get('pairing')}")
    lines.append(f"    points      {fit.n_}" + (f" in {fit.n_runs_} runs" if fit.n_runs_ > 1 else "")
                 + f", entropy {fit.H_.min():.4g}-{fit.H_.max():.4g} nats")
    lines.append(f"[[Estimates]] {pct} intervals: {INTERVAL_TEXT[fit.interval]}")
    for name, v, s, ci in (("a", fit.a_, fit.a_stderr_, fit.a_ci_), ("b", fit.b_, fit.b_stderr_, fit.b_ci_),
                           ("ceiling", fit.ceiling_, fit.ceiling_stderr_, fit.ceiling_ci_)):
        label = "ceiling b-a" if name == "ceiling" else name
        lines.append(f"    {label:<12}{v:10.4f} ± {s:.4f}   [{ci[0]:.4f}, {ci[1]:.4f}]")
    lines.append(f"[[Fit]] R² {fit.r2_:.3f}, RMSE {fit.rmse_:.4g}, residual AC(1) "
                 f"{fit.residual_autocorr_:.2f}, AR(1) phi {fit.phi_:.2f}")
    if getattr(fit, "best_form_aic_", None):
        lines.append(f"    best form   {fit.best_form_aic_} (AIC), {fit.best_form_bic_} (BIC)")
    trust, reasons = fit.trust()
    why = "; ".join(reasons)
    lines.append(f"[[Trust]] {trust or 'not judged'}" + (f": {why.removeprefix('not judged: ')}" if why else ""))
    if meta.get("note"):
        lines.append(f"    note        {meta['note']}")
    for w in fit.warnings_:
        lines.append(f"    warning     {w}")
    return wrap("\n".join(lines))
