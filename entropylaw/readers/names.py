"""Run names: from a file's path (its stem, or the directory for generic names), the model
named in a file name or a checkpoint's path, and names made unique within one source."""

from __future__ import annotations

import math
import re
from pathlib import PurePath
from typing import Iterable

from entropylaw.readers.compressed import strip_compression
from entropylaw.readers.datasets import BENCHMARKS, same_as
from entropylaw.readers.model_size import params_from_name
from entropylaw.readers.verl_config import unquote

# a tracker's bookkeeping, not metrics: W&B's run clock, a CSV export's index column
BOOKKEEPING = re.compile(r"^(_runtime|_timestamp|_wandb.*|wall_time|Wall time|timestamp|Unnamed: \d+)$")
# a step counter as trainers name it, first found first (nanoGPT's iter_num, a from-scratch loop's it or update)
STEP_NAMES = ("step", "global_step", "iteration", "iter", "iter_num", "it", "update")
# veRL's timing_s/step and perf/time_per_step are seconds a step takes, however step-like their names
_TIMING = re.compile(r"^(timing|perf/time|time)")


# a terminal acts on these: C0 and C1 controls (ESC starts a colour or a cursor move), DEL, and the
# bidirectional overrides that print a name in another order than it is stored
_CONTROLS = {c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"
             for c in [*range(0x20), 0x7F, *range(0x80, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)]}


def printable(text: str) -> str:
    """``text`` with the characters a terminal acts on written as escapes: a run named in a shared
    W&B project or a file name ``run\\x1b[31mRED`` is printed as what it is, not as a colour.

    >>> printable("run\\x1b[31mRED"), printable("lr1e-05_seed42")
    ('run\\\\x1b[31mRED', 'lr1e-05_seed42')
    """
    return str(text).translate(_CONTROLS)


def names_a_step_axis(key: str) -> bool:
    """A step metric's name as trainers declare them to W&B: ``grpo_step``, ``eval_step``,
    ``train/step``, ``val/step`` (``define_metric("val/*", step_metric="val/step")``).

    >>> [names_a_step_axis(c) for c in ("val/step", "eval_step", "val/steps_per_second", "step_time", "timing_s/step")]
    [True, True, False, False, False]
    """
    return key.endswith(("_step", "/step")) and not _TIMING.match(key)


def unique_run_ids(names: Iterable[str]) -> list[str]:
    """Make names unique by suffixing ``-2``, ``-3``... in order, never onto a name taken.

    >>> unique_run_ids(["a-2", "a", "a", "a"])
    ['a-2', 'a', 'a-3', 'a-4']
    """
    names = list(names)
    taken = set(names)
    count: dict[str, int] = {}
    used: set[str] = set()
    out = []
    for name in names:
        if name not in used:
            out.append(name)
            used.add(name)
            continue
        n = count.get(name, 1)
        while True:
            n += 1
            new = f"{name}-{n}"
            if new not in taken and new not in used:
                break
        count[name] = n
        out.append(new)
        used.add(new)
    return out


def run_id_from_path(path) -> str:
    """A readable run id from a file name: its stem, or the directory for generic names.

    >>> run_id_from_path("logs/verl_grpo_deepseek-llm-7b-chat_gsm8k_mi300.log")
    'verl_grpo_deepseek-llm-7b-chat_gsm8k_mi300'
    >>> run_id_from_path("out/qwen-grpo/checkpoint-500/trainer_state.json")
    'qwen-grpo'
    """
    return _named(path)[0] or "run"


# a file that by its name holds a run's evaluations only, beside its training log in the run's folder
# (train.jsonl + eval.jsonl): named after the folder, its untyped rows read as eval rows (eval_beside_training)
EVAL_FILES = frozenset({"eval", "evals", "evaluation", "evaluations", "val", "valid", "validation", "eval_metrics",
                        "metrics_eval", "val_metrics", "metrics_val", "eval_log", "evaluation_metrics"})
# (a sweep's x/run.csv and y/run.csv are runs x and y, not run and run-2; progress.csv: Stable-Baselines' log)
_GENERIC_FILES = {"trainer_state", "metrics", "log", "train", "output", "events", "history", "runs", "logs", "wandb",
                  "train_metrics", "metrics_train", "train_log", "training", "run", "progress", "results", "stats",
                  "scalars", *EVAL_FILES}


# of the names that name no run, those that named one before (run.log was run "run"): a job's restarts, each
# writing one in a folder of its own (d1/run.log, d2/run.log), are still one run resumed (merge.py)
RESUMED_FILES = frozenset({"run", "progress", "results", "stats", "scalars"})


def resumed_file(path) -> str:
    """The name of a file that one run's restarts may each write in a folder of their own, else "".

    >>> resumed_file("job2/run.log"), resumed_file("job2/metrics.jsonl"), resumed_file("job2/qwen.log")
    ('run', '', '')
    """
    name = _stem(PurePath(str(path)).name).lower()
    return name if name in RESUMED_FILES else ""


# the splits a key's first part (val/acc) or a table's split column names
SPLITS = frozenset({"train", "eval", "evaluation", "val", "valid", "validation", "test"})
# every word that names a split, as the kind of row it holds (a split column's values, a document's lists)
SPLIT_WORDS = {**dict.fromkeys(("train", "training"), "train"),
               **dict.fromkeys(("eval", "evals", "evaluation", "evaluations", "evaluate", "val", "valid", "validation",
                                "test", "testing"), "eval")}


def typed_key(kind: str, key: str) -> str:
    """A key of a row of type ``kind`` (a JSON line's ``"type": "eval"``, a table's split column, an
    evaluations-only file) as the table names it: ``<kind>/<key>``, unless its first part names its
    split already or the row has no type.

    >>> typed_key("eval", "accuracy"), typed_key("eval", "val/acc"), typed_key("eval", "math/accuracy")
    ('eval/accuracy', 'val/acc', 'eval/math/accuracy')
    >>> typed_key("", "entropy"), typed_key("train", "train/reward"), typed_key("eval", "eval_acc")
    ('entropy', 'train/reward', 'eval_acc')
    """
    if (not kind or key.startswith(kind + "/") or ("/" in key and key.split("/", 1)[0].lower() in SPLITS)
            or (kind.lower() in SPLITS - {"train"} and key.lower().startswith(kind.lower() + "_"))):  # eval_acc
        return key
    return f"{kind}/{key}"


def eval_file(path) -> bool:
    """Whether a file's name says it holds evaluations only (:data:`EVAL_FILES`).

    >>> eval_file("runs/a/eval.jsonl"), eval_file("runs/a/Validation.jsonl.gz"), eval_file("runs/a/train.jsonl")
    (True, True, False)
    """
    return _stem(PurePath(str(path)).name).lower() in EVAL_FILES


def _suffix(name: str) -> str:
    name = strip_compression(name)
    return name[len(_stem(name)):].lower()


def eval_beside_training(path) -> bool:
    """Whether a file holds a run's evaluations only: named so (:func:`eval_file`) with another log of
    the run of its format beside it in its folder (train.jsonl beside eval.jsonl, not a config.json).
    Alone (a ``val.csv`` of its own), it is a run of its own, its keys as written."""
    from pathlib import Path

    if not eval_file(path):
        return False
    here = Path(str(path))
    try:
        return any(p.is_file() and p != here and not eval_file(p) and not p.name.startswith(".")
                   and _suffix(p.name) == _suffix(here.name) for p in here.parent.iterdir())
    except OSError:
        return False


def _named(path) -> tuple[str, list[str], str]:
    """The part of ``path`` that names its run (:func:`run_id_from_path`), the folders above it,
    and the folder that holds it (where a sweep's runs lie side by side)."""
    p = PurePath(str(path))
    name = p.name.split(".tfevents")[0] if ".tfevents" in p.name else _first_segment(p)
    above = [q for q in p.parents if q.name]
    holder = p.parent
    while (name.lower() in _GENERIC_FILES or name.startswith(("checkpoint-", "events.out", "global_step_"))) and above:
        folder = above.pop(0)
        name, holder = folder.name, folder.parent
    return name, [q.name for q in above], str(holder)


# a resumed run's later file, named as its first with a mark: metrics_resumed.jsonl, log.1.txt, train.log.1; a
# number after a digit is a version's (llama3.1.log beside llama3.log, qwen2.5 beside qwen2: two models' runs)
_SEGMENT = re.compile(r"^(?P<base>.+?)(?:[._-](?:resumed|resume|restarted|restart|continued|cont)"
                      r"|(?<!\d)\.\d{1,3})$",
                      re.IGNORECASE)


def _first_segment(p) -> str:
    """The stem of a file's name, or of the file it continues where its name marks a resumed segment
    (``metrics_resumed``, ``log.1``) and that file lies beside it: the two are one run's, named alike, and
    read as a resume (:mod:`~entropylaw.readers.merge`). Alone, the name is its own (``grpo_resume.log``)."""
    from pathlib import Path

    stem = _stem(p.name)
    m = _SEGMENT.match(stem)
    if not m:
        return stem
    base = _stem(m.group("base"))
    try:
        beside = any(q.is_file() and q.name != p.name and _stem(q.name) == base for q in Path(str(p.parent)).iterdir())
    except OSError:
        return stem
    return base if beside else stem


def model_from_filename(path) -> str:
    """The model named in a file name, when one ``_``-separated part clearly is one; for a file
    of a generic name (``metrics.jsonl``), in its run folder's name (:func:`run_id_from_path`).

    >>> model_from_filename("verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512.log")
    'qwen2.5-0.5b-instruct'
    >>> model_from_filename("run_7.log"), model_from_filename("runs/qwen2.5-math-1.5b_lr1e-5/metrics.jsonl")
    ('', 'qwen2.5-math-1.5b')
    >>> model_from_filename("runs/tokens-2M_grpo/metrics.jsonl")   # a count of tokens, not a model's size
    ''
    """
    stem = run_id_from_path(path)
    hits = [part for part in re.split(r"[_\s]+", stem)
            if re.search(r"[A-Za-z]{2,}", part) and not math.isnan(params_from_name(part))
            and re.split(r"[-.\d]", part.lower(), maxsplit=1)[0] not in _COUNTED]
    return hits[0] if len(hits) == 1 else ""


def dataset_from_filename(path) -> str:
    """The benchmark a run's name names (its file's stem, or its run folder's for a file of a
    generic name), else the one its sweep folder's name names (the folder above): a part of the
    name, split at ``_``, ``+`` and spaces, that is exactly one of
    :data:`~entropylaw.readers.datasets.BENCHMARKS` (``MATH-500``, ``math_500`` and
    ``MATH-lighteval`` as their benchmark); several in order, joined with ``+``; '' when none is.
    A hyphen joins one name's words (``qwen2.5-math-1.5b``, ``open-r1-math``): no part of it
    alone is a data set. A guess, for a run whose log and config name no data set
    (:mod:`entropylaw.readers.dataset_guess`).

    >>> (dataset_from_filename("runs/grpo_math_lr1e-5/metrics.jsonl"),
    ...  dataset_from_filename("qwen2.5-math-1.5b_lr2e-5.csv"))
    ('math', '')
    >>> dataset_from_filename("sweeps/gsm8k_grpo/seed1/metrics.jsonl"), dataset_from_filename("run_MATH-500_gsm8k.log")
    ('gsm8k', 'math500+gsm8k')
    """
    return dataset_named(path)[0]


def dataset_named(path) -> tuple[str, str, str]:
    """:func:`dataset_from_filename`, the name that named it, and the folder that holds the
    run's name (its runs' folder: where a sweep's runs lie side by side).

    >>> dataset_named("s/math_sweep/lr1/metrics.jsonl"), dataset_named("s/a_gsm8k.log")
    (('math', 'math_sweep', 's/math_sweep'), ('gsm8k', 'a_gsm8k', 's'))
    """
    name, parents, holder = _named(path)
    for text in [name] + parents[:1]:
        joined = _JOINED.sub(lambda m: m.group(1) + m.group(2), text.lower())
        found = [same_as(w) for w in re.split(r"[_\s+]+", joined) if same_as(w) in BENCHMARKS]
        if found:
            return "+".join(dict.fromkeys(found)), text, holder
    return "", "", holder


# RL algorithms a run's name may state, as one ``_``-separated part (hyphens join one name's words)
ALGORITHM_WORDS = frozenset({"grpo", "ppo", "rloo", "reinforce", "reinforce++", "remax", "dapo", "gpg", "dr-grpo",
                             "drgrpo", "gspo", "vapo", "prime", "opo"})
# what trainers write for an algorithm, by its usual name: veRL's ``adv_estimator=gae`` trains a critic, PPO
ALGORITHM_ALIASES = {"gae": "ppo", "reinforce_plus_plus": "reinforce++", "dr_grpo": "dr-grpo", "drgrpo": "dr-grpo"}


def algorithm_name(value) -> str:
    """An algorithm as trainers write it, by its usual name (lower case, aliases resolved).

    >>> algorithm_name("GAE"), algorithm_name("grpo"), algorithm_name("reinforce_plus_plus"), algorithm_name(None)
    ('ppo', 'grpo', 'reinforce++', '')
    """
    text = str(value or "").strip().lower()
    return ALGORITHM_ALIASES.get(text, text)


def algorithm_from_filename(path) -> str:
    """The algorithm a run's name states (:func:`run_id_from_path`; else the folder above it),
    where exactly one algorithm is named in it; '' where none is or several are (``grpo_vs_ppo``).

    >>> algorithm_from_filename("runs/run_ppo.csv"), algorithm_from_filename("grpo_grpo_clip_lr1e-05_epoch1.csv")
    ('ppo', 'grpo')
    >>> algorithm_from_filename("grpo_vs_ppo.log"), algorithm_from_filename("sweeps/dapo_qwen/seed1/metrics.jsonl")
    ('', 'dapo')
    >>> algorithm_from_filename("reinforce_plus_plus_gsm8k.log"), algorithm_from_filename("proppo.log")
    ('reinforce++', '')

    A name is parted at ``_`` and spaces; a part names an algorithm as a whole (``dr-grpo``) or by its first
    ``-``-joined word (``grpo-lora``: GRPO). ``prime`` is the PRIME algorithm only where it stands alone: followed by
    ``rl`` (``prime-rl``, ``prime_rl``: the framework) or by a word of one of prime-rl's processes (``prime_trainer``,
    ``prime_orchestrator``, ``prime_inference``), next part or next ``-``-joined word, it names no algorithm.

    >>> algorithm_from_filename("qwen_prime_gsm8k.log"), algorithm_from_filename("prime_trainer.log")
    ('prime', '')
    >>> algorithm_from_filename("prime-rl_run.log"), algorithm_from_filename("prime_rl_grpo.log")
    ('', 'grpo')
    """
    name, parents, _ = _named(path)
    for text in [name] + parents[:1]:  # a sweep's folder names what its runs share (``dapo_qwen/seed1/``)
        text = text.lower().replace("reinforce_plus_plus", "reinforce++").replace("dr_grpo", "dr-grpo")
        parts = re.split(r"[_\s]+", text)
        found = set()
        for i, part in enumerate(parts):
            first, _, rest = part.partition("-")
            word = part if part in ALGORITHM_WORDS else first  # grpo-lora: GRPO
            if word not in ALGORITHM_WORDS:
                continue
            after = rest.split("-")[0] if word == first and rest else parts[i + 1] if i + 1 < len(parts) else ""
            if after in _FRAMEWORK_AFTER.get(word, ()):
                continue  # prime-rl, prime_trainer: the framework, not the algorithm
            found.add(algorithm_name(word))
        if found:
            return found.pop() if len(found) == 1 else ""
    return ""


# an algorithm's word that, followed by one of these, names a framework: prime-rl (its trainer, orchestrator and
# inference processes' logs), not the PRIME algorithm
_FRAMEWORK_AFTER = {"prime": frozenset({"rl", "trainer", "orchestrator", "inference"})}


# a benchmark's number written apart (MATH-500, math_500, AIME-2024, aime_24): one name each
_JOINED = re.compile(r"(?<![a-z0-9])(math|aime|amc)[-_.]((?:20)?\d\d\d?)(?![a-z0-9])")


# words before a number that count something other than a model's parameters (tokens-2M, bs-1M, data-500M)
_COUNTED = frozenset({"tokens", "tok", "toks", "data", "bs", "batch", "samples", "examples", "steps", "seq", "ctx",
                      "context", "len", "lr", "n", "k", "size", "buffer", "budget", "prompts", "rollouts"})


_SUFFIXES = (".log", ".txt", ".out", ".err", ".jsonl", ".json", ".csv", ".tsv", ".parquet", ".wandb")


def model_name_from_path(path: str) -> str:
    """``Qwen/Qwen2.5-7B`` -> ``Qwen2.5-7B``; a Hugging Face cache path -> its model.

    >>> model_name_from_path("/hf/hub/models--Qwen--Qwen2-7B-Instruct/snapshots/"
    ...                      "f2826a00ceef68f0f2b946d945ecc0477ce4450c")
    'Qwen2-7B-Instruct'
    >>> model_name_from_path("~/models/deepseek-llm-7b-chat/")
    'deepseek-llm-7b-chat'
    """
    path = unquote(str(path))
    m = re.search(r"models--[^/]+--([^/]+)", path)
    if m:
        return m.group(1)
    parts = [p for p in path.rstrip("/").split("/") if p]
    while len(parts) > 1 and re.fullmatch(r"global_step_\d+|actor|huggingface|hf|snapshots|[0-9a-f]{40}|checkpoint-\d+",
                                          parts[-1]):
        parts.pop()
    return parts[-1] if parts else ""


def _stem(name: str) -> str:
    """File name without a known extension (``qwen2.5-7b`` keeps its dot)."""
    name = strip_compression(name)
    lower = name.lower()
    for suffix in _SUFFIXES:
        if lower.endswith(suffix):
            return name[: -len(suffix)]
    return name
