"""``entropylaw probe``: per-token covariance, intervention targeting and the entropy-change ladder.

Writes ``OUT/tokens.parquet`` (one row per valid response token) and ``OUT/summary.json``
(``table1``, ``selection``, ``ladder``, ``whatif``) and prints Table 1 and the ladder.
Multi-process: ``torchrun --nproc_per_node K -m entropylaw probe ...``.
"""

from __future__ import annotations

import argparse
import json

from entropylaw.errors import EntropyLawError
from entropylaw.fileio import check_writable


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("probe", help="token covariance, interventions and the entropy-change ladder",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="transformers model directory, or a .gguf file (dequantised to "
                   "--dtype; auto = float32)")
    p.add_argument("--rollouts", help="what training produced, the format recognised: a veRL rollout dump "
                   "(trainer.rollout_data_dir: a directory of <step>.jsonl, or one of them), a TRL completions log "
                   "(OUTPUT_DIR/completions/, one completions_<step>.parquet, a W&B run with a completions table), "
                   "or the project's JSONL/parquet (prompt_id, prompt|prompt_ids, response|response_ids, reward, "
                   "optional advantage, old_logprobs)")
    p.add_argument("--step", type=int, default=None, help="the training step whose rollouts to probe (default: "
                   "the last one the dump or log holds)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--tokenizer", help="tokenizer directory (default: the model's)")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--estimator", default="grpo", choices=["grpo", "rloo", "reinforce++", "reinforce"])
    p.add_argument("--eps", type=float, default=1e-6, help="advantage std epsilon")
    p.add_argument("--chunk-size", type=int, default=8192, help="vocabulary chunk of the streamed statistics")
    p.add_argument("--batch-tokens", type=int, default=4096, help="padded tokens per forward batch")
    p.add_argument("--microbatch-tokens", type=int, default=16384,
                   help="token budget of a micro-batch (per-micro-batch covariance scope)")
    p.add_argument("--clamp-p", type=float, default=0.3, help="AEnt clamp fraction")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="intervention setting, e.g. clip_cov_ratio=0.001 (repeatable)")
    p.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto")
    p.add_argument("--dtype", default="auto", help="auto, float32, float64 (precise ladder on CPU), bfloat16, float16")
    p.add_argument("--device-map", default=None, help='e.g. "auto": one model spread over the devices of one '
                   'process (accelerate; with max memory per device from --max-memory)')
    p.add_argument("--max-memory", action="append", default=[], metavar="DEVICE=SIZE",
                   help='with --device-map: e.g. 0=20GiB, cpu=60GiB (repeatable)')
    p.add_argument("--shard", action="store_true", help="FSDP2: shard each decoder layer's weights across the "
                   "torchrun processes (for a policy that does not fit one device); every process runs every "
                   "sequence, so the result is the one-process result")
    p.add_argument("--no-ladder", action="store_true", help="skip the update and the entropy-change ladder")
    p.add_argument("--lr", type=float, default=None, help="fix the ladder's step (eta, eta/2, eta/4) instead of "
                   "searching for a first-order one")
    p.add_argument("--rel-step", type=float, default=1e-3, help="first step of the search, as a fraction of "
                   "|theta|/|grad| (halved until Lemma 1's error falls as eta^2)")
    p.add_argument("--optimizer", default="sgd", choices=["sgd", "adam"])
    p.add_argument("--scope", default="batch", choices=["batch", "microbatch"],
                   help="covariance scope of the what-if selections")
    p.add_argument("--whatif", default="none,clip_cov,kl_cov,steer,aent,entropy_bonus")
    p.add_argument("--generate", type=int, default=0, metavar="G", help="sample G responses per prompt instead "
                   "of reading --rollouts (needs --prompts)")
    p.add_argument("--prompts", help="prompt file for --generate")
    p.add_argument("--reward", default="numeric_answer", help="module:function scoring (response, answer)")
    p.add_argument("--max-new-tokens", type=int, default=256)
    p.add_argument("--min-informative", type=int, default=0, metavar="K",
                   help="with --generate: keep sampling (DAPO-style) the groups with no learning signal until K "
                   "groups have one, at most --max-rounds rounds")
    p.add_argument("--max-rounds", type=int, default=4, help="budget of --min-informative: rounds of G responses "
                   "per prompt (default 4)")
    p.add_argument("--chat-template", action=argparse.BooleanOptionalAction, default=None,
                   help="put text prompts through the tokenizer's chat template (default: --prompts text when the "
                   "tokenizer has one; --rollouts text only when asked, as rollouts hold what the policy saw)")
    p.add_argument("--save-rollouts", metavar="FILE", help="write the probed batch (generated or read) as a "
                   "rollout file (.jsonl or .parquet) that --rollouts reads back")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None)
    p.set_defaults(func=run)


def _parse_sets(items):
    out = {}
    for item in items:
        if "=" not in item:
            raise EntropyLawError(f"--set {item}: expected KEY=VALUE")
        key, value = item.split("=", 1)
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def _max_memory(items) -> dict | None:
    out = {}
    for item in items:
        key, sep, size = item.partition("=")
        if not sep or not size:
            raise EntropyLawError(f"--max-memory {item}: expected DEVICE=SIZE, e.g. 0=20GiB or cpu=60GiB")
        out[int(key) if key.isdigit() else key] = size
    return out or None


def load_inputs(args):
    """Model, tokenizer and checked sequences (every user error raised before any output)."""
    from transformers import AutoTokenizer

    from entropylaw.ingest.rollouts.encode import chat_template_for, encode
    from entropylaw.ingest.rollouts.formats import read_rollouts
    from entropylaw.ingest.rollouts.own import read_prompts_frame
    from entropylaw.ingest.rollouts.write import check_rollouts_path, write_rollouts
    from entropylaw.probe import dist
    from entropylaw.probe import model as M

    if args.generate <= 0 and not args.rollouts:
        raise EntropyLawError("probe: give --rollouts FILE, or --generate G with --prompts FILE")
    if args.generate > 0 and not args.prompts:
        raise EntropyLawError("--generate needs --prompts FILE")
    if args.save_rollouts:
        check_rollouts_path(args.save_rollouts)
    reward_fn = None
    if args.generate > 0:
        from entropylaw.probe.rewards import load_reward

        read_prompts_frame(args.prompts)  # a missing or malformed prompt file fails before the model loads
        reward_fn = load_reward(args.reward)
    # rollouts are parsed before the (slow) model load, so a typo fails in a second
    if args.step is not None and args.generate > 0:
        raise EntropyLawError("--step chooses among rollouts a trainer wrote (--rollouts), not --generate")
    if args.min_informative and args.generate <= 0:
        raise EntropyLawError("--min-informative keeps sampling: it needs --generate G with --prompts FILE")
    if args.min_informative < 0 or args.max_rounds < 1:
        raise EntropyLawError("--min-informative must be >= 0 and --max-rounds >= 1")
    rollouts = None if args.generate > 0 else read_rollouts(args.rollouts, args.step)
    device = M.resolve_device(args.device)
    from entropylaw.probe.memory import check as check_memory

    args.memory = check_memory(args.model, args.dtype, args.batch_tokens, not args.no_ladder)  # before the load
    if args.shard and args.device_map:
        raise EntropyLawError("--shard and --device-map: choose one (FSDP across processes, or one process "
                              "over several devices)")
    model, tokenizer = M.load_model(args.model, str(device), args.dtype, args.device_map, progress=args.progress,
                                    max_memory=_max_memory(args.max_memory))
    if args.shard:
        dist.shard_model(model)
    if not args.no_ladder and M.offloaded(model):
        raise EntropyLawError(f"--device-map {args.device_map}: some weights were offloaded past every device's "
                              "memory (to disk), and the ladder updates weights in place: use --no-ladder, more "
                              "--max-memory, or --shard across processes")
    if args.tokenizer:
        try:
            tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
        except (OSError, ValueError) as err:
            raise EntropyLawError(f"--tokenizer {args.tokenizer}: cannot load ({type(err).__name__})") from None
    M.check_tokenizer(model, tokenizer, "--tokenizer" if args.tokenizer else "--model")
    V = M.vocab_size(model)
    if args.generate > 0:
        from entropylaw.probe.generate import read_prompts, sample, sample_informative

        prompts = read_prompts(args.prompts, tokenizer, V, args.chat_template)
        kw = dict(temperature=args.temperature, max_new_tokens=args.max_new_tokens, tokenizer=tokenizer,
                  reward_fn=reward_fn, batch_tokens=args.batch_tokens, progress=args.progress)
        if args.min_informative:
            seqs, args.sampling = sample_informative(model, prompts, args.generate, args.min_informative,
                                                     args.max_rounds, args.estimator, args.eps, seed=args.seed, **kw)
        else:
            seqs = sample(model, prompts, args.generate, seed=args.seed, **kw)
        if not seqs:
            raise EntropyLawError(f"{args.prompts}: generation produced no non-empty responses")
        args.source = {"format": "generated", "step": None, "why": f"{args.generate} fresh responses per prompt "
                       f"of {args.prompts} at temperature {args.temperature:g}"}
    else:
        fmt = rollouts.attrs.get("format", "entropylaw")
        chat = chat_template_for(fmt, args.chat_template)
        seqs = encode(rollouts, args.rollouts, V, tokenizer, M.context_length(model), chat)
        step, steps = rollouts.attrs.get("step"), rollouts.attrs.get("steps") or []
        why = ("one batch" if step is None else f"--step {step}" if args.step is not None else
               f"the last of {len(steps)} steps ({steps[0]}..{steps[-1]}; --step to choose)" if len(steps) > 1
               else f"the only step ({step})")
        args.source = {"format": fmt, "file": rollouts.attrs.get("source", str(args.rollouts)), "step": step,
                       "why": why, "notes": list(rollouts.attrs.get("notes", []))}
    from entropylaw.probe.signal import NoSignal, no_signal_message, signal_report, with_advantages

    trainer = bool(seqs) and all(s.advantage is not None for s in seqs)
    signal = signal_report(with_advantages(seqs, args.estimator, args.eps),
                           "the trainer's (kept)" if trainer else f"computed ({args.estimator})")
    if signal["informative_groups"] == 0:  # before anything is written
        raise NoSignal(no_signal_message(signal, str(args.rollouts or args.prompts), args.generate > 0))
    if args.save_rollouts and dist.rank() == 0:
        write_rollouts(seqs, args.save_rollouts, tokenizer)
        print(f"wrote {args.save_rollouts} ({len(seqs)} responses)")
    return model, seqs


def print_signal(summary: dict) -> None:
    """The first lines: what was probed, and how much of it carried a learning signal."""
    src, sig = summary.get("source", {}), summary["signal"]
    step = "" if src.get("step") is None else f" step {src['step']} ({src['why']})"
    print(f"rollouts: {src.get('format', '?')}{step}" + (f" from {src['file']}" if src.get("file") else
                                                           f" ({src.get('why', '')})"))
    for note in src.get("notes", []):
        print(f"  note: {note}")
    zero = ", ".join(f"{n} {k}" for k, n in sig["zero_variance_groups"].items())
    print(f"signal: {sig['informative_groups']} of {sig['groups']} prompt groups informative"
          + (f" (left out: {zero})" if zero else "") + f"; {sig['tokens_with_signal']} of {sig['tokens']} "
          f"response tokens carry a non-zero advantage; advantages {sig['advantages']}")
    if "sampling" in summary:
        sm = summary["sampling"]
        print(f"sampling: {sm['rounds']} of at most {sm['max_rounds']} rounds, {sm['responses_generated']} "
              f"responses generated, {sm['informative_groups']} informative groups (asked {sm['min_informative']})")
    for name, c in summary.get("checks", {}).items():
        print(f"check {name}: {'enough signal' if c['enough_signal'] else 'NOT ENOUGH SIGNAL'} ({c['why']})")


def print_report(summary: dict) -> None:
    print_signal(summary)
    t, paper = summary["table1"], summary["table1_paper"]
    print(f"tokens {summary['n_tokens']}  responses {summary['n_responses']}  prompts {summary['n_prompts']}  "
          f"micro-batches {summary['n_microbatches']}  entropy (token-mean) {summary['entropy_token_mean']:.4f}")
    print("Table 1: mean covariance over the top fraction of tokens")
    print(f"  {'group':<10}{'whole batch':>14}{'micro-batch':>14}{'paper 7B':>10}")
    for key in t:
        label = "all" if key == "all" else f"top {float(key) * 100:g}%"
        print(f"  {label:<10}{t[key]:>14.5g}{summary['table1_microbatch'][key]:>14.5g}{paper[key]:>10}")
    sel = summary["selection"]
    for name in ("clip_cov", "kl_cov"):
        s = sel[name]
        print(f"  {name}: selects {s['whole_batch']} (whole batch) / {s['micro_batch']} (micro-batch), "
              f"{s['both']} in both, jaccard {s['jaccard']:.3f}")
    st = sel["steer"]
    print(f"  steer: mean weight {st['mean_weight']:.4f} / {st['mean_weight_mb']:.4f}, mean |change| "
          f"{st['mean_abs_weight_change']:.4g}")
    if "ladder" in summary:
        lad = summary["ladder"]
        chk = lad["eta_squared_check"]
        how = (f"chosen by halving {len(chk['search'])} times from {chk['search'][0]['eta']:.3g}"
               if chk.get("search") else "fixed by --lr")
        print(f"Entropy-change ladder (one {lad['config']['optimizer']} step, eta {lad['eta']:.4g} {how}; "
              f"measured batch-mean dH {lad['estimators']['lemma1']['measured_mean']:.4g})")
        if chk.get("bound"):
            print(f"  the step search hit its bound: {chk['bound']}")
        for r in chk.get("too_large", []) + [r for r in chk.get("search", []) if "too_large" in r][:3]:
            print(f"  eta {r['eta']:.3g} is not a step: {r['too_large']}")
        print(f"  {'estimator':<18}{'pearson':>9}{'spearman':>9}{'sign':>7}{'slope':>10}{'pred mean':>12}")
        fmt = lambda v, f: "n/a" if v is None else format(v, f)  # noqa: E731
        for name, r in lad["estimators"].items():
            print(f"  {name:<18}{fmt(r['pearson'], '.3f'):>9}{fmt(r['spearman'], '.3f'):>9}"
                  f"{fmt(r['sign_agreement'], '.2f'):>7}{fmt(r['slope'], '.3g'):>10}{fmt(r['predicted_mean'], '.3g'):>12}")
        etas = chk["etas"]
        print("  Lemma 1 |error| at eta x " + ", ".join(f"{e / etas[0]:g}" for e in etas) + ": "
              + ", ".join(f"{e:.3g}" for e in chk["lemma1_mean_abs_error"])
              + (f"  (log-log slope {chk['loglog_slope']:.2f}; 2 = first-order exact)" if "loglog_slope" in chk else "")
              + ("  first order: yes" if chk["first_order"] else "  NOT FIRST ORDER (see the warning)"))
        print("What-if (batch-mean dH after one step): measured / Lemma 1 / sampled-token")
        for name, r in summary["whatif"].items():
            print(f"  {name:<14}{r['measured_mean_dH']:>12.4g}{r['lemma1_mean_dH']:>12.4g}{r['sampled_token_mean_dH']:>12.4g}")


def run(args) -> int:
    import sys

    from entropylaw.probe import dist
    from entropylaw.probe.core import ProbeConfig
    from entropylaw.probe.ladder import LadderConfig
    from entropylaw.probe.losses import InterventionConfig
    from entropylaw.probe.model import resolve_device
    from entropylaw.probe.runner import run_probe, write_outputs

    check_writable(args.out, directory=True)  # before loading a model
    if args.save_rollouts:
        check_writable(args.save_rollouts)
    overrides = _parse_sets(args.set)
    InterventionConfig.from_dict({"name": "none", **overrides})  # validate names/values early
    cfg = ProbeConfig(args.temperature, args.estimator, args.eps, args.chunk_size, args.batch_tokens,
                      args.microbatch_tokens, args.clamp_p, args.seed, overrides)
    ladder = None
    if not args.no_ladder:
        whatif = tuple(w.strip() for w in args.whatif.split(",") if w.strip())
        if "none" not in whatif:
            whatif = ("none",) + whatif
        for w in whatif:
            InterventionConfig(w)
        ladder = LadderConfig(lr=args.lr, rel_step=args.rel_step, optimizer=args.optimizer, scope=args.scope,
                              whatif=whatif, seed=args.seed)
    dist.init(resolve_device(args.device))
    try:
        progress = sys.stderr.isatty() if args.progress is None else args.progress
        args.progress = progress
        model, seqs = load_inputs(args)
        frame, summary = run_probe(model, seqs, cfg, ladder, progress=progress,
                                   where=str(args.rollouts or args.prompts), generated=args.generate > 0)
        if dist.rank() == 0:
            head = {"source": args.source}
            if getattr(args, "sampling", None):
                head["sampling"] = args.sampling
            import resource

            top = {k: summary.pop(k) for k in ("signal", "checks")}
            if getattr(args, "memory", None):  # the estimate beside this process's measured peak
                top["memory_gib"] = {"estimate": args.memory, "peak_rss": round(
                    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20, 3)}
            summary = {**head, **top, **summary, "model": str(args.model),
                       "rollouts": str(args.rollouts or args.prompts)}
            write_outputs(args.out, frame, summary)
            print_report(summary)
            print(f"wrote {args.out}/tokens.parquet and {args.out}/summary.json")
    finally:
        dist.finish()
    return 0
