"""``entropylaw probe-checkpoints CKPT... --prompts FILE --out TABLE``: entropy (and accuracy) per checkpoint.

The output is a tidy run table (parquet or csv) that ``entropylaw fit`` reads: metric
``entropy`` (token-mean over sampled responses), ``response_length`` and, with
``--reward``, the mean reward as ``val/<name>`` (default name: the prompt file's stem).
"""

from __future__ import annotations

import argparse

from entropylaw import api
from entropylaw.api import plumbing
from entropylaw.cli.options import COUNT, SEED, TEMPERATURE


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("probe-checkpoints", help="policy entropy / accuracy of saved checkpoints",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoints", nargs="+", metavar="CKPT", help="checkpoint directories (or .gguf files)")
    p.add_argument("--prompts", required=True, help="JSONL/parquet with prompt or prompt_ids, optional answer")
    p.add_argument("--out", required=True, help="run table to write (.parquet or .csv)")
    p.add_argument("--reward", default=None, help="module:function or numeric_answer / math_verify")
    p.add_argument("--metric", default=None, help="score or val/<name> (default val/<prompt file stem>)")
    p.add_argument("--samples", type=COUNT, default=4, help="responses per prompt")
    p.add_argument("--temperature", type=TEMPERATURE, default=1.0, help="sampling temperature (default 1)")
    p.add_argument("--max-new-tokens", type=COUNT, default=256, help="longest response, in tokens (default 256)")
    p.add_argument("--run-id", default=None,
                   help="the run's name in the table (default: the name of the folder that holds the checkpoints)")
    p.add_argument("--tokenizer", default=None, help="tokenizer directory (default: each checkpoint's)")
    p.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto")
    p.add_argument("--dtype", default="auto", help="auto, float32, float64, bfloat16, float16")
    p.add_argument("--chunk-size", type=COUNT, default=8192, help="vocabulary chunk of the streamed statistics")
    p.add_argument("--seed", type=SEED, default=0, help="sampling seed (default 0)")
    p.add_argument("--table1", action="store_true", help="also the token covariance of each checkpoint's samples "
                   "(cov_top_<p>%%: the paper's Table 1; needs --reward)")
    p.add_argument("--chat-template", action=argparse.BooleanOptionalAction, default=None,
                   help="text prompts through the tokenizer's chat template (default: when it has one)")
    p.set_defaults(func=run)


def run(args) -> int:
    t = api.probe_checkpoints(args.checkpoints, args.prompts, out=args.out, samples=args.samples,
                              temperature=args.temperature, max_new_tokens=args.max_new_tokens, reward=args.reward,
                              metric=args.metric, run_id=args.run_id, device=args.device, dtype=args.dtype,
                              chunk_size=args.chunk_size, seed=args.seed, tokenizer_path=args.tokenizer,
                              table1=args.table1, chat_template=args.chat_template)
    print(plumbing.wide(t, api.run_ids(t)[0]).to_string(float_format=lambda v: f"{v:.4f}"))
    print(f"wrote {args.out} ({plumbing.count(len(t), 'row')})")
    return 0
