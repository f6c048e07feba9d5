"""One probe, end to end: read the rollouts (or sample them), load the policy, measure, write.

:func:`probe` is ``entropylaw probe`` (and ``el.probe``): every user error is raised before any
output, the slow model load comes after the rollouts are read, and ``out`` (``tokens.parquet``,
``summary.json``) appears whole or not at all. Multi-process (``torchrun``): every rank runs,
rank 0 writes and its result holds the summary.

>>> res = el.probe("model_dir", "rollouts.jsonl", out="probe_out", dtype="float64")  # doctest: +SKIP
>>> print(res)                       # the signal, Table 1, the ladder, the what-ifs  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import resource
import sys
import warnings
from dataclasses import dataclass

from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.fileio import check_out_dir, check_writable
from entropylaw.probing import dist
from entropylaw.probing import model as M
from entropylaw.probing.core import ProbeConfig
from entropylaw.probing.ladder import LadderConfig
from entropylaw.probing.interventions import INTERVENTIONS
from entropylaw.probing.losses import InterventionConfig
from entropylaw.readers.rollouts.encode import chat_template_for, encode
from entropylaw.readers.rollouts.formats import read_rollouts
from entropylaw.readers.rollouts.own import read_prompts_frame
from entropylaw.readers.rollouts.write import check_rollouts_path, write_rollouts
from entropylaw.probing.runner import run_probe, write_outputs
from entropylaw.probing.signal import (NoSignal, check_one_prompt_per_group, no_signal_message, signal_report,
                                      with_advantages)
from entropylaw.probing.text import report_text

WHATIF = "none,clip_cov,kl_cov,steer,aent,entropy_bonus"


@dataclass
class ProbeOptions:
    """What a probe can be told besides the measurement's own settings (:class:`ProbeConfig`:
    temperature, estimator, eps, chunk_size, batch_tokens, microbatch_tokens, clamp_p, seed,
    and ``settings`` for its interventions); the command's options, by the same names."""

    step: int | None = None  # the training step whose rollouts to probe (default: the last)
    tokenizer: str | None = None
    device: str = "auto"
    dtype: str = "auto"
    device_map: str | None = None
    max_memory: dict | None = None
    shard: bool = False
    no_ladder: bool = False
    lr: float | None = None
    rel_step: float = 1e-3
    optimizer: str = "sgd"
    scope: str = "batch"
    whatif: str | tuple = WHATIF
    generate: int = 0
    prompts: str | None = None
    reward: str = "numeric_answer"
    max_new_tokens: int = 256
    min_informative: int = 0
    max_rounds: int = 4
    chat_template: bool | None = None
    save_rollouts: str | None = None
    progress: bool | None = None


@dataclass
class ProbeResult:
    """The per-token ``frame`` and the ``summary`` (rank 0; None on the other ranks), where they
    were written, and the rollouts saved. ``str()`` is what ``entropylaw probe`` prints."""

    frame: object = None
    summary: dict | None = None
    out: str | None = None
    saved: str | None = None
    n_saved: int = 0
    out_note: str | None = None  # what writing ``out`` replaced

    def __str__(self) -> str:
        lines = [f"wrote {self.saved} ({self.n_saved} responses)"] if self.saved else []
        if self.summary is not None:
            lines.append(report_text(self.summary))
            if self.out:
                lines.append(f"wrote {self.out}/tokens.parquet and {self.out}/summary.json"
                             + (f" ({self.out_note})" if self.out_note else ""))
        return "\n".join(lines)


def _options(options: dict) -> tuple[ProbeOptions, ProbeConfig]:
    options = dict(options)
    settings = options.pop("settings", None) or {}
    try:  # names and values checked early
        InterventionConfig.from_dict({"name": "none", **settings})
    except EntropyLawError as err:
        raise EntropyLawError(f"`settings`: {str(err).removeprefix('intervention none: ')}") from None
    mine = {f.name for f in dataclasses.fields(ProbeOptions)}
    measured = {f.name for f in dataclasses.fields(ProbeConfig)} - {"overrides"}
    unknown = sorted(set(options) - mine - measured)
    if unknown:
        raise EntropyLawError(f"probe: unknown option {unknown[0]!r} (expected one of "
                              f"{', '.join(sorted(mine | measured | {'settings'}))})")
    cfg = ProbeConfig(**{k: v for k, v in options.items() if k in measured}, overrides=dict(settings))
    return ProbeOptions(**{k: v for k, v in options.items() if k in mine}), cfg


def _check(o: ProbeOptions, rollouts) -> None:
    """Option combinations, before anything is read."""
    if o.generate <= 0 and not rollouts:
        raise EntropyLawError("probe: give `rollouts` FILE, or `generate` G with `prompts` FILE")
    if o.generate > 0 and not o.prompts:
        raise EntropyLawError("`generate` needs `prompts` FILE")
    if o.step is not None and o.generate > 0:
        raise EntropyLawError("`step` chooses among rollouts a trainer wrote (`rollouts`), not `generate`")
    if o.min_informative and o.generate <= 0:
        raise EntropyLawError("`min_informative` keeps sampling: it needs `generate` G with `prompts` FILE")
    if o.min_informative < 0 or o.max_rounds < 1:
        raise EntropyLawError("`min_informative` must be >= 0 and `max_rounds` >= 1")
    if o.shard and o.device_map:
        raise EntropyLawError("`shard` and `device_map`: choose one (FSDP across processes, or one process "
                              "over several devices)")


def _ladder(o: ProbeOptions, seed: int) -> LadderConfig | None:
    if o.no_ladder:
        return None
    whatif = [str(w).strip() for w in (o.whatif.split(",") if isinstance(o.whatif, str) else list(o.whatif))]
    if "" in whatif:  # "none,,steer": a name lost between the commas, not one to leave out unsaid
        raise EntropyLawError(f"`whatif` {','.join(whatif)!r}: an empty name between its commas (expected names of "
                              f"{', '.join(INTERVENTIONS)}, parted by commas)")
    whatif = tuple(dict.fromkeys(whatif))  # a name given twice is probed once
    if "none" not in whatif:
        whatif = ("none",) + whatif
    for w in whatif:
        if w not in INTERVENTIONS:
            raise EntropyLawError(f"`whatif` {w}: unknown intervention (expected one of {', '.join(INTERVENTIONS)})")
    return LadderConfig(lr=o.lr, rel_step=o.rel_step, optimizer=o.optimizer, scope=o.scope, whatif=whatif, seed=seed)


def _load_model(model_path: str, o: ProbeOptions):
    from transformers import AutoTokenizer

    model, tokenizer = M.load_model(model_path, str(M.resolve_device(o.device)), o.dtype, o.device_map,
                                    progress=o.progress, max_memory=o.max_memory)
    if o.shard:
        dist.shard_model(model)
    if not o.no_ladder and M.offloaded(model):
        raise EntropyLawError(f"`device_map` {o.device_map}: some weights were offloaded past every device's "
                              "memory (to disk), and the ladder updates weights in place: use `no_ladder`, more "
                              "`max_memory`, or `shard` across processes")
    if o.tokenizer:
        try:
            tokenizer = AutoTokenizer.from_pretrained(o.tokenizer)
        except (OSError, ValueError) as err:
            raise EntropyLawError(f"`tokenizer` {o.tokenizer}: cannot load ({type(err).__name__})") from None
    M.check_tokenizer(model, tokenizer, "`tokenizer`" if o.tokenizer else "`model`")
    return model, tokenizer


def _sample(model, tokenizer, o: ProbeOptions, cfg: ProbeConfig, reward_fn):
    from entropylaw.probing.generate import cut_note, read_prompts, sample, sample_informative

    prompts = read_prompts(o.prompts, tokenizer, M.vocab_size(model), o.chat_template)
    kw = dict(temperature=cfg.temperature, max_new_tokens=o.max_new_tokens, tokenizer=tokenizer, reward_fn=reward_fn,
              batch_tokens=cfg.batch_tokens, progress=o.progress)
    sampling = None
    if o.min_informative:
        seqs, sampling = sample_informative(model, prompts, o.generate, o.min_informative, o.max_rounds,
                                            cfg.estimator, cfg.eps, seed=cfg.seed, **kw)
    else:
        seqs = sample(model, prompts, o.generate, seed=cfg.seed, **kw)
    if not seqs:
        raise EntropyLawError(f"{o.prompts}: generation produced no non-empty responses")
    source = {"format": "generated", "step": None, "why": f"{o.generate} fresh responses per prompt of {o.prompts} "
              f"at temperature {cfg.temperature:g}", "notes": [n for n in [cut_note(seqs, o.max_new_tokens)] if n]}
    return seqs, source, sampling


def _encoded(rollouts, frame, model, tokenizer, o: ProbeOptions):
    fmt = frame.attrs.get("format", "entropylaw")
    chat = chat_template_for(fmt, o.chat_template)
    seqs = encode(frame, rollouts, M.vocab_size(model), tokenizer, M.context_length(model), chat)
    step, steps = frame.attrs.get("step"), frame.attrs.get("steps") or []
    why = ("one batch" if step is None else f"`step` {step}" if o.step is not None else
           f"the last of {len(steps)} steps ({steps[0]}..{steps[-1]}; `step` to choose)" if len(steps) > 1
           else f"the only step ({step})")
    return seqs, {"format": fmt, "file": frame.attrs.get("source", str(rollouts)), "step": step, "why": why,
                  "notes": list(frame.attrs.get("notes", []))}


def _inputs(model_path, rollouts, o: ProbeOptions, cfg: ProbeConfig):
    """Model and checked sequences (every user error raised before any output), what was probed
    (``source``), the sampling account, the memory estimate, the rollouts saved."""
    from entropylaw.probing.memory import check as check_memory

    if o.save_rollouts:
        check_rollouts_path(o.save_rollouts)
    reward_fn = None
    if o.generate > 0:
        from entropylaw.probing.rewards import load_reward

        from entropylaw.probing.rewards import check_answers

        said = check_answers(read_prompts_frame(o.prompts), o.reward, o.prompts)  # fails before the model loads
        if said:
            warnings.warn(said, EntropyLawWarning, stacklevel=2)
        reward_fn = load_reward(o.reward)
    frame = None if o.generate > 0 else read_rollouts(rollouts, o.step)  # parsed before the (slow) model load
    memory = check_memory(model_path, o.dtype, cfg.batch_tokens, not o.no_ladder)  # before the load
    model, tokenizer = _load_model(model_path, o)
    sampling = None
    if o.generate > 0:
        seqs, source, sampling = _sample(model, tokenizer, o, cfg, reward_fn)
    else:
        seqs, source = _encoded(rollouts, frame, model, tokenizer, o)
        check_one_prompt_per_group(seqs, source["file"])
    trainer = bool(seqs) and all(s.advantage is not None for s in seqs)
    signal = signal_report(with_advantages(seqs, cfg.estimator, cfg.eps),
                           "the trainer's (kept)" if trainer else f"computed ({cfg.estimator})")
    if signal["informative_groups"] == 0:  # before anything is written; a cut answer may be why: said in the line
        cut = "; ".join(source.get("notes") or []) if o.generate > 0 else ""
        raise NoSignal(no_signal_message(signal, str(rollouts or o.prompts), o.generate > 0)
                       + (f"; note: {cut}" if cut else ""))
    saved = 0
    if o.save_rollouts and dist.rank() == 0:
        write_rollouts(seqs, o.save_rollouts, tokenizer)
        saved = len(seqs)
    return model, seqs, source, sampling, memory, saved


def probe(model: str, rollouts=None, *, out=None, **options) -> ProbeResult:
    """Probe ``model`` (a transformers directory or a .gguf file) on ``rollouts`` (a veRL dump, a
    TRL completions log, or the project's JSONL/parquet) or on fresh samples (``generate=G``,
    ``prompts=FILE``); write ``out`` when given. ``options``: the fields of :class:`ProbeOptions`
    and of :class:`~entropylaw.probing.core.ProbeConfig` (``settings``: its interventions' settings)."""
    o, cfg = _options(options)
    path = str(model)
    _check(o, rollouts)
    if out is not None:
        check_out_dir(out)  # before loading a model
    if o.save_rollouts:
        check_writable(o.save_rollouts)
    ladder = _ladder(o, cfg.seed)
    dist.init(M.resolve_device(o.device))
    try:
        o.progress = sys.stderr.isatty() if o.progress is None else o.progress
        policy, seqs, source, sampling, memory, saved = _inputs(path, rollouts, o, cfg)
        frame, summary = run_probe(policy, seqs, cfg, ladder, progress=o.progress,
                                   where=str(rollouts or o.prompts), generated=o.generate > 0)
        result = ProbeResult(saved=o.save_rollouts if saved else None, n_saved=saved)
        if dist.rank() == 0:
            head = {"source": source, **({"sampling": sampling} if sampling else {})}
            top = {k: summary.pop(k) for k in ("signal", "checks")}
            if memory:  # the estimate beside this process's measured peak
                top["memory_gib"] = {"estimate": memory, "peak_rss": round(
                    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20, 3)}
            result.summary = {**head, **top, **summary, "model": path,
                              "rollouts": str(rollouts or o.prompts)}
            result.frame = frame
            if out is not None:
                result.out_note = write_outputs(out, frame, result.summary)
                result.out = str(out)
        return result
    finally:
        dist.finish()
