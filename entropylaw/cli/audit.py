"""``entropylaw audit``: is the entropy your trainer logged the entropy of your policy?

Recomputes, from the checkpoint that produced step K and that step's rollouts, the exact
per-token entropy of the policy (with the sampling temperature) and aggregates it under
every convention trainers use (token-mean, seq-mean-token-mean, sums, micro-batch means,
padding or prompt tokens included, the mask shifted by one, veRL's dynamic-batch
reordering bug); compares each with the value the log recorded at step K and says which
matches within the tolerance, or that none does. The tolerance is a model of the trainer's
rounding (``--trainer-precision``, bf16 by default: logits and entropy arithmetic rounded to
2^-8, sized from the float32 recomputation; see entropylaw.auditing.numerics), stated in the output.
The checkpoint of step K: in TRL GRPO (and veRL) the entropy logged at step K comes from the policy before step
K's update, the checkpoint after K - 1 steps (the base model at step 1).

``--json`` prints one object: logged, conventions, matched, tolerance, correction (and
step, n_rollouts, n_tokens, temperature, within, gaps, verdict, relative_tolerance and
tolerance_model: what the tolerance assumes).
"""

from __future__ import annotations

import argparse

from entropylaw import api
from entropylaw.api import plumbing
from entropylaw.cli.options import COUNT, REAL, TEMPERATURE, positive, whole

PRECISIONS = plumbing.PRECISIONS


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("audit", help="check the logged entropy against the policy's own",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="the checkpoint that produced step K (transformers directory "
                   "or .gguf)")
    p.add_argument("--rollouts", required=True, help="step K's rollouts (JSONL/parquet: prompt_id, "
                   "prompt|prompt_ids, response|response_ids, reward)")
    p.add_argument("--log", help="the run's log (any format entropylaw reads)")
    p.add_argument("--step", type=whole(0, "100"), help="the step K audited (with --log)")
    p.add_argument("--logged", type=REAL, help="the logged entropy itself, instead of --log")
    p.add_argument("--entropy-key", help="the log's entropy key (default: detected)")
    p.add_argument("--temperature", type=TEMPERATURE, default=1.0, help="the trainer's sampling temperature")
    p.add_argument("--micro-batch-size", type=COUNT, help="sequences per micro-batch (adds microbatch-mean)")
    p.add_argument("--token-budget", type=COUNT, help="tokens per micro-batch, veRL dynamic batch size "
                   "(adds microbatch-mean)")
    p.add_argument("--horizon", type=COUNT, help="padded response length of seq-mean-token-sum-norm (veRL "
                   "max_response_length; default the longest response)")
    p.add_argument("--trainer-precision", default="bf16", metavar="|".join(PRECISIONS), help="what the trainer "
                   "computed its logits and entropy in: the tolerance models its rounding (default bf16)")
    p.add_argument("--tolerance", type=positive(), help="relative tolerance (default: the --trainer-precision model)")
    p.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N")
    p.add_argument("--chat-template", action=argparse.BooleanOptionalAction, default=None,
                   help="put text prompts through the tokenizer's chat template (default, as entropylaw probe: a "
                   "veRL dump's or TRL log's prompts as the trainer templated them, the project's file as it is)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--out", metavar="DIR", help="also write DIR/summary.json ({\"audit\": ...}); 'entropylaw report "
                   "--probe DIR/summary.json' adds its section to the report")
    p.set_defaults(func=run)


def run(args) -> int:
    r = api.audit(args.model, args.rollouts, args.log, args.step, logged=args.logged, temperature=args.temperature,
                  micro_batch_size=args.micro_batch_size, token_budget=args.token_budget, horizon=args.horizon,
                  tolerance=args.tolerance, entropy_key=args.entropy_key, device=args.device,
                  chat_template=args.chat_template, trainer_precision=args.trainer_precision, out=args.out)
    if args.json:
        print(plumbing.dumps(r, indent=1))
    else:
        print(args.flags(plumbing.audit_text(r)))
        if args.out:
            print(f"wrote {args.out}/summary.json"
                  + (f" ({r['out_note'].split(': ', 1)[1]})" if r.get("out_note") else ""))
    return 0
