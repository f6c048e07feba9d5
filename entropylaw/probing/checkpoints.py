"""Checkpoint probes: policy entropy (and accuracy) of saved checkpoints as a run table.

For each checkpoint directory, N responses per prompt are sampled; the token-mean entropy
of the sampled responses (streamed, temperature T) becomes metric ``entropy`` and, with a
reward function, their mean reward becomes ``val/<name>`` (or ``score``). The step comes
from the directory name (``checkpoint-40``, ``global_step_40``, ``step40``) or, failing
that, from the order given.

>>> step_from_name("outputs/checkpoint-40"), step_from_name("ckpt/global_step_120/actor"), step_from_name("final")
(40, 120, None)
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import entropylaw.table as table
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.probing import model as M
from entropylaw.probing.forward import collect_stats
from entropylaw.probing.generate import cut_note, read_prompts, sample
from entropylaw.probing.rewards import check_answers, load_reward
from entropylaw.readers.rollouts.own import read_prompts_frame

_STEP = re.compile(r"(?:checkpoint|global_step|step)[-_]?(\d+)", re.IGNORECASE)


def step_from_name(path: str) -> int | None:
    for part in reversed(Path(path).parts):
        m = _STEP.search(part)
        if m:
            return int(m.group(1))
    return None


def model_dir(path: str) -> str:
    """The transformers directory inside a checkpoint (veRL keeps it under actor/huggingface)."""
    p = Path(path)
    places = ("", "actor/huggingface", "huggingface")
    for cand in (p / where for where in places):
        if (cand / "config.json").exists():
            return str(cand)
    inside = sorted(c.name for c in p.iterdir() if c.is_dir() and any((c / w / "config.json").exists()
                                                                      for w in places)) if p.is_dir() else []
    if inside:  # the run's folder given for its checkpoints
        raise EntropyLawError(f"{p}: no config.json here, but {len(inside)} checkpoint folder"
                              f"{'s' if len(inside) != 1 else ''} inside ({', '.join(inside[:3])}"
                              f"{' ...' if len(inside) > 3 else ''}): give them ({p}/{inside[0]} ...)")
    return str(p)  # load_model reports what is missing


def probe_checkpoints(paths: list, prompts_path: str, samples: int = 4, temperature: float = 1.0,
                      max_new_tokens: int = 256, reward: str | None = None, metric: str | None = None,
                      run_id: str | None = None, device: str = "auto", dtype: str = "auto",
                      chunk_size: int = 8192, seed: int = 0, tokenizer_path: str | None = None,
                      table1: bool = False, chat_template: bool | None = None):
    """Run table (entropylaw.table schema) with one row per checkpoint and metric.

    ``table1``: also the token covariance of each checkpoint's own samples (GRPO advantages
    from the rewards), as ``cov_top_<p>%`` (mean over the top p % of tokens, the paper's
    Table 1) and ``cov_all``.
    """
    if table1 and not reward:
        raise EntropyLawError("`table1` needs `reward` (the covariance is with the advantage, from the rewards)")
    reward_fn = None
    if reward:
        said = check_answers(read_prompts_frame(prompts_path), reward, prompts_path)  # before any model loads
        if said:
            warnings.warn(said, EntropyLawWarning, stacklevel=2)
        reward_fn = load_reward(reward)
    metric = metric or f"val/{Path(prompts_path).stem}"
    if not (metric == "score" or metric.startswith("val/")):
        raise EntropyLawError(f"`metric` {metric}: expected score or val/<name>")
    for path in paths:  # every checkpoint's files, before the first is probed: not a failure an hour in
        M.check_files(model_dir(path), "checkpoint")
    steps = [step_from_name(p) for p in paths]
    if any(s is None for s in steps):
        unnamed = [Path(p).name for p, s in zip(paths, steps) if s is None]
        steps = list(range(len(paths)))
        if len(paths) > 1:
            warnings.warn(f"no step number in the name of {', '.join(unnamed[:3])}{' ...' if len(unnamed) > 3 else ''} "
                          f"(checkpoint-40, global_step_40, step40): the checkpoints are numbered 0..{len(paths) - 1} "
                          "in the order given", EntropyLawWarning, stacklevel=2)
    if len(set(steps)) != len(steps):
        raise EntropyLawError(f"checkpoints share a step number ({steps}); give distinct checkpoints")
    records, vocabs = [], {}
    tokenizer_override = None
    if tokenizer_path:
        from transformers import AutoTokenizer
        tokenizer_override = AutoTokenizer.from_pretrained(tokenizer_path)
    for path, step in sorted(zip(paths, steps), key=lambda t: t[1]):
        model, tokenizer = M.load_model(model_dir(path), device, dtype)
        tokenizer = tokenizer_override or tokenizer
        M.check_tokenizer(model, tokenizer, path)
        vocabs[path] = M.vocab_size(model)
        prompts = read_prompts(prompts_path, tokenizer, M.vocab_size(model), chat_template)
        seqs = sample(model, prompts, samples, temperature, max_new_tokens, seed=seed, tokenizer=tokenizer,
                      reward_fn=reward_fn, count="samples", where=path)
        if not seqs:
            raise EntropyLawError(f"{path}: generation produced no non-empty responses")
        said = cut_note(seqs, max_new_tokens, f"{path}: ")
        if said:
            warnings.warn(said, EntropyLawWarning, stacklevel=2)
        stats = collect_stats(model, seqs, temperature, chunk_size, clamp_p=0.3 if table1 else None, where=path)
        records.append((step, "entropy", float(stats["entropy"].double().mean())))
        if table1:
            from entropylaw.probing.core import ProbeConfig, analyse
            from entropylaw.probing.signal import signal_report, with_advantages

            # the advantages once, for analyse too: computed in both, a warning of theirs was said twice
            seqs = with_advantages(seqs)
            _, summary = analyse(seqs, stats, ProbeConfig(temperature=temperature, chunk_size=chunk_size))
            said = signal_report(seqs)
            signal = said["informative_groups"] > 0
            if not signal:  # every advantage 0: a covariance of exactly 0 that measures nothing
                warnings.warn(f"{path}: no learning signal: each of the {said['groups']} prompts' {samples} samples "
                              "got one reward, so every advantage is 0: its covariances say nothing and are left out "
                              "of the table (not written as 0); more `samples`, or prompts the policy gets right "
                              "only sometimes", EntropyLawWarning, stacklevel=2)
            for key, value in summary["table1"].items() if signal else ():
                records.append((step, "cov_all" if key == "all" else f"cov_top_{float(key) * 100:g}%", value))
        records.append((step, "response_length", float(sum(len(s.response_ids) for s in seqs) / len(seqs))))
        if reward_fn is not None:
            records.append((step, metric, sum(s.reward for s in seqs) / len(seqs)))
        del model
    if len(set(vocabs.values())) > 1:  # entropy is bounded by ln V: one run's checkpoints share V
        sizes = ", ".join(f"{Path(p).name} {v}" for p, v in vocabs.items())
        warnings.warn(f"the checkpoints' vocabularies differ ({sizes}): their entropies are bounded by different "
                      "ln V and are not one run's to compare", EntropyLawWarning, stacklevel=2)
    source = str(Path(paths[0]).resolve().parent)
    return table.from_records(records, run_id=run_id or Path(source).name, source=source, entropy_key="entropy",
                              score_key=metric if metric == "score" and reward_fn else "",
                              val_keys={metric: metric} if metric != "score" and reward_fn else {})
