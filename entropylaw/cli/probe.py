"""``entropylaw probe``: per-token covariance, intervention targeting and the entropy-change ladder.

Writes ``OUT/tokens.parquet`` (one row per valid response token) and ``OUT/summary.json``
(``table1``, ``selection``, ``ladder``, ``whatif``) and prints Table 1 and the ladder.
Multi-process: ``torchrun --nproc_per_node K -m entropylaw probe ...``.
"""

from __future__ import annotations

import argparse

from entropylaw import api
from entropylaw.api import plumbing
from entropylaw.cli.options import COUNT, REAL, SEED, TEMPERATURE, positive, settings, whole
from entropylaw.errors import EntropyLawError


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
    p.add_argument("--step", type=whole(0, "100"), default=None,
                   help="the training step whose rollouts to probe (default: "
                        "the last one the dump or log holds)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--tokenizer", help="tokenizer directory (default: the model's)")
    p.add_argument("--temperature", type=TEMPERATURE, default=1.0,
                   help="the temperature the policy sampled at: the statistics are the tempered policy's, "
                        "and --generate samples at it (default 1)")
    p.add_argument("--estimator", default="grpo", choices=plumbing.PROBE_ESTIMATORS,
                   help="the advantage estimator, where the rollouts carry no advantages of the trainer's "
                        "(default grpo)")
    p.add_argument("--eps", type=positive(), default=1e-6, help="advantage std epsilon")
    p.add_argument("--chunk-size", type=COUNT, default=8192, help="vocabulary chunk of the streamed statistics")
    p.add_argument("--batch-tokens", type=COUNT, default=4096, help="padded tokens per forward batch")
    p.add_argument("--microbatch-tokens", type=COUNT, default=16384,
                   help="token budget of a micro-batch (per-micro-batch covariance scope)")
    p.add_argument("--clamp-p", type=REAL, default=0.3, help="AEnt clamp fraction")
    p.add_argument("--seed", type=SEED, default=0, help="seed of --generate's sampling and of the ladder (default 0)")
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
    p.add_argument("--lr", type=positive(), default=None, help="fix the ladder's step (eta, eta/2, eta/4) instead of "
                   "searching for a first-order one")
    p.add_argument("--rel-step", type=positive(), default=1e-3, help="first step of the search, as a fraction of "
                   "|theta|/|grad| (halved until Lemma 1's error falls as eta^2)")
    p.add_argument("--optimizer", default="sgd", choices=plumbing.PROBE_OPTIMIZERS,
                   help="the ladder's one update (default sgd)")
    p.add_argument("--scope", default="batch", choices=plumbing.PROBE_SCOPES,
                   help="covariance scope of the what-if selections")
    p.add_argument("--whatif", default=plumbing.PROBE_WHATIF,
                   help="comma-separated interventions whose one-step entropy change is measured (default: "
                        + plumbing.PROBE_WHATIF + ")")
    p.add_argument("--generate", type=whole(0, "8"), default=0, metavar="G",
                   help="sample G responses per prompt instead "
                        "of reading --rollouts (needs --prompts)")
    p.add_argument("--prompts", help="prompt file for --generate")
    p.add_argument("--reward", default="numeric_answer", help="module:function scoring (response, answer)")
    p.add_argument("--max-new-tokens", type=COUNT, default=256,
                   help="longest response --generate samples, in tokens (default 256)")
    p.add_argument("--min-informative", type=whole(0, "4"), default=0, metavar="K",
                   help="with --generate: keep sampling (DAPO-style) the groups with no learning signal until K "
                   "groups have one, at most --max-rounds rounds")
    p.add_argument("--max-rounds", type=COUNT, default=4, help="budget of --min-informative: rounds of G responses "
                   "per prompt (default 4)")
    p.add_argument("--chat-template", action=argparse.BooleanOptionalAction, default=None,
                   help="put text prompts through the tokenizer's chat template (default: --prompts text when the "
                   "tokenizer has one; --rollouts text only when asked, as rollouts hold what the policy saw)")
    p.add_argument("--save-rollouts", metavar="FILE", help="write the probed batch (generated or read) as a "
                   "rollout file (.jsonl or .parquet) that --rollouts reads back")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar (default: when stderr is a terminal)")
    p.set_defaults(func=run)


def _max_memory(items) -> dict | None:
    out = settings(items, "--max-memory", json_values=False)
    if any(not size for size in out.values()):
        raise EntropyLawError(f"--max-memory {' '.join(items)}: expected DEVICE=SIZE, e.g. 0=20GiB or cpu=60GiB")
    return {int(key) if key.isdigit() else key: size for key, size in out.items()} or None


def run(args) -> int:
    res = api.probe(args.model, args.rollouts, out=args.out, step=args.step, tokenizer=args.tokenizer,
                    temperature=args.temperature, estimator=args.estimator, eps=args.eps, chunk_size=args.chunk_size,
                    batch_tokens=args.batch_tokens, microbatch_tokens=args.microbatch_tokens, clamp_p=args.clamp_p,
                    seed=args.seed, settings=settings(args.set), device=args.device, dtype=args.dtype,
                    device_map=args.device_map, max_memory=_max_memory(args.max_memory), shard=args.shard,
                    no_ladder=args.no_ladder, lr=args.lr, rel_step=args.rel_step, optimizer=args.optimizer,
                    scope=args.scope, whatif=args.whatif, generate=args.generate, prompts=args.prompts,
                    reward=args.reward, max_new_tokens=args.max_new_tokens, min_informative=args.min_informative,
                    max_rounds=args.max_rounds, chat_template=args.chat_template, save_rollouts=args.save_rollouts,
                    progress=args.progress)
    if str(res):
        print(args.flags(str(res)))
    return 0
