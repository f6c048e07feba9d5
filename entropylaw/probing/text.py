"""The probe's summary as the command prints it (``str(ProbeResult)``)."""

from __future__ import annotations

from entropylaw.terminal import wrap


def signal_lines(summary: dict) -> list[str]:
    """The first lines: what was probed, and how much of it carried a learning signal."""
    out = []
    add = out.append
    src, sig = summary.get("source", {}), summary["signal"]
    step = "" if src.get("step") is None else f" step {src['step']} ({src['why']})"
    add(f"rollouts: {src.get('format', '?')}{step}" + (f" from {src['file']}" if src.get("file") else
                                                           f" ({src.get('why', '')})"))
    for note in src.get("notes", []):
        add(f"  note: {note}")
    zero = ", ".join(f"{n} {k}" for k, n in sig["zero_variance_groups"].items())
    add(f"signal: {sig['informative_groups']} of {sig['groups']} prompt groups informative"
          + (f" (left out: {zero})" if zero else "") + f"; {sig['tokens_with_signal']} of {sig['tokens']} "
          f"response tokens carry a non-zero advantage; advantages {sig['advantages']}")
    if "sampling" in summary:
        sm = summary["sampling"]
        add(f"sampling: {sm['rounds']} of at most {sm['max_rounds']} rounds, {sm['responses_generated']} "
              f"responses generated, {sm['informative_groups']} informative groups (asked {sm['min_informative']})")
    for name, c in summary.get("checks", {}).items():
        add(f"check {name}: {'enough signal' if c['enough_signal'] else 'NOT ENOUGH SIGNAL'} ({c['why']})")
    return out


def report_text(summary: dict) -> str:
    """What ``entropylaw probe`` prints of a summary: the signal, Table 1, the ladder, the what-ifs."""
    out = signal_lines(summary)
    add = out.append
    t, paper = summary["table1"], summary["table1_paper"]
    add(f"tokens {summary['n_tokens']}  responses {summary['n_responses']}  prompts {summary['n_prompts']}  "
          f"micro-batches {summary['n_microbatches']}  entropy (token-mean) {summary['entropy_token_mean']:.4f}")
    add("Table 1: mean covariance over the top fraction of tokens")
    add(f"  {'group':<10}{'tokens':>8}{'whole batch':>14}{'micro-batch':>14}{'paper 7B':>10}")
    n_all, under = summary["n_tokens"], []
    for key in t:
        label = "all" if key == "all" else f"top {float(key) * 100:g}%"
        n = n_all if key == "all" else max(1, int(float(key) * n_all))  # core.table1's count
        if key != "all" and float(key) * n_all < 1:
            under.append(f"{float(key) * 100:g}%")
        add(f"  {label:<10}{n:>8}{t[key]:>14.5g}{summary['table1_microbatch'][key]:>14.5g}{paper[key]:>10}")
    if under:
        add(f"  top {', '.join(under)} of {n_all} tokens {'are' if len(under) > 1 else 'is'} under one token: "
            f"{'each row is' if len(under) > 1 else 'its row is'} the top token alone, not that fraction "
            "(the paper's rows are over millions of tokens)")
    ones, over = summary.get("microbatches_of_one_response", 0), summary.get("sequences_over_microbatch_budget", 0)
    if ones:
        add(f"  micro-batch: {ones} of {summary['n_microbatches']} micro-batches hold one response"
            + (f" ({over} sequence{'s' if over != 1 else ''} longer than the micro-batch budget of "
               f"{summary['config']['microbatch_tokens']} tokens)" if over else "")
            + ": its advantage is constant there, so its micro-batch covariance is 0 and the micro-batch "
            "column and selections see no signal from it")
    sel = summary["selection"]
    for name in ("clip_cov", "kl_cov"):
        s = sel[name]
        add(f"  {name}: selects {s['whole_batch']} (whole batch) / {s['micro_batch']} (micro-batch), "
              f"{s['both']} in both, jaccard {s['jaccard']:.3f}")
    st = sel["steer"]
    add(f"  steer: mean weight {st['mean_weight']:.4f} / {st['mean_weight_mb']:.4f}, mean |change| "
          f"{st['mean_abs_weight_change']:.4g}")
    if "ladder" in summary:
        lad = summary["ladder"]
        chk = lad["eta_squared_check"]
        how = _search_words(chk, lad.get("config", {})) if chk.get("search") else "fixed by `lr`"
        add(f"Entropy-change ladder (one {lad['config']['optimizer']} step, eta {lad['eta']:.4g} {how}; "
              f"measured batch-mean dH {lad['estimators']['lemma1']['measured_mean']:.4g})")
        if chk.get("bound"):
            add(f"  the step search hit its bound: {chk['bound']}")
        for r in chk.get("too_large", []) + [r for r in chk.get("search", []) if "too_large" in r][:3]:
            add(f"  eta {r['eta']:.3g} is not a step: {r['too_large']}")
        add(f"  {'estimator':<18}{'pearson':>9}{'spearman':>9}{'sign':>7}{'slope':>10}{'pred mean':>12}")
        fmt = lambda v, f: "n/a" if v is None else format(v, f)  # noqa: E731
        for name, r in lad["estimators"].items():
            add(f"  {name:<18}{fmt(r['pearson'], '.3f'):>9}{fmt(r['spearman'], '.3f'):>9}"
                  f"{fmt(r['sign_agreement'], '.2f'):>7}{fmt(r['slope'], '.3g'):>10}"
                  f"{fmt(r['predicted_mean'], '.3g'):>12}")
        etas = chk["etas"]
        add("  Lemma 1 |error| at eta x " + ", ".join(f"{e / etas[0]:g}" for e in etas) + ": "
              + ", ".join(f"{e:.3g}" for e in chk["lemma1_mean_abs_error"])
              + (f"  (log-log slope {chk['loglog_slope']:.2f}; 2 = first-order exact)" if "loglog_slope" in chk else "")
              + ("  first order: yes" if chk["first_order"] else "  NOT FIRST ORDER (see the warning)"))
        add("What-if (batch-mean dH after one step): measured / Lemma 1 / sampled-token")
        for name, r in summary["whatif"].items():
            add(f"  {name:<14}{r['measured_mean_dH']:>12.4g}{r['lemma1_mean_dH']:>12.4g}"
                f"{r['sampled_token_mean_dH']:>12.4g}")
        add("  (nats; sampled-token and the theorems' estimators assume tabular logits: in a network the logits "
            "move through shared weights, so they give the sign and the order of the tokens, not the size; "
            "Lemma 1 with the update's own logit change is the first-order term)")
    return wrap("\n".join(out))


def _search_words(chk: dict, config: dict) -> str:
    """How the automatic step was found: cuts by the search's factor while the step was too large
    (no rung measured), then halvings; a window that never came first order says so.

    >>> _search_words({"search": [{"eta": 0.333, "too_large": "x"}] * 3
    ...                           + [{"eta": 8e-5, "lemma1_mean_abs_error": 1}] * 4,
    ...                "first_order": True}, {"shrink": 16.0})
    'searched from 0.333: 3 cuts by 16 while too large, then 3 halvings'
    """
    search = chk["search"]
    cuts = sum(1 for r in search if "lemma1_mean_abs_error" not in r)
    halvings = max(sum(1 for r in search if "lemma1_mean_abs_error" in r) - 1, 0)
    text = f"searched from {search[0]['eta']:.3g}: "
    text += (f"{cuts} cut{'s' if cuts != 1 else ''} by {config.get('shrink', 16):g} while too large, then "
             if cuts else "")
    text += f"{halvings} halving{'s' if halvings != 1 else ''}"
    return text + ("" if chk.get("first_order") else "; no window was first order: the closest is shown")
