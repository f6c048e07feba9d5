"""A run's data set name, from what its log or config says it trained on.

One rule, read by every reader that finds data files (:mod:`.wandb_offline`'s config keys,
:mod:`.verl_console`'s launch command) and by the forecast's task grouping
(:mod:`entropylaw.fit.forecast.tasks`), so that one run gets one name whichever way it is read:

- lower case; a name that is not a file keeps its last part (``openai/gsm8k``: ``gsm8k``);
- a data file's stem less a split at its start or end (``math_train.jsonl``, ``train_math.jsonl``:
  ``math``);
- a file that is only a split (``train.parquet``, ``train-00000-of-00001.parquet``) takes the
  folder it lies in (``~/data/gsm8k/train.parquet``: ``gsm8k``), never a folder further up: above
  it lie the user's folders (``/opt/al/data/train.json`` names none), and neither a filler folder
  (``data``, ``processed``) nor a home folder (``~alice``) is a data set;
- several (a list, ``a,b`` or ``[a, b]``) are joined with ``+`` in order, each once;
- empty when none is known.

>>> dataset_name("~/data/gsm8k/train.parquet"), dataset_name("data/MATH/train.jsonl"), dataset_name("MATH")
('gsm8k', 'math', 'math')
>>> dataset_name(["~/data/gsm8k/train.parquet", "~/data/math/test.parquet"]), dataset_name("/opt/al/data/train.json")
('gsm8k+math', '')
"""

from __future__ import annotations

import re

# one data set under the names of its hub copies (veRL's preprocessors name MATH's folders after them):
# one task for the rates and priors learned from runs. A subset stays apart (MATH-500 is 500 of the test
# problems: another validation set, read with its own size)
SAME_AS = {"math-lighteval": "math", "hendrycks_math": "math", "hendrycks-math": "math", "competition_math": "math",
           "competition-math": "math"}


# benchmarks a run's name may name (``grpo_math_lr1e-5``, ``qwen2.5-7b_gsm8k``): where neither its log nor its
# config names the data, a name's part that is exactly one of these is taken for it, and said
# (:func:`entropylaw.readers.names.dataset_from_filename`)
BENCHMARKS = frozenset({"gsm8k", "math", "math500", "aime", "aime24", "aime25", "aime2024", "aime2025", "amc", "amc23",
                        "countdown", "humaneval", "mbpp", "livecodebench", "codecontests", "gpqa", "olympiadbench",
                        "deepscaler", "svamp", "asdiv"})


def same_as(name: str) -> str:
    """The name of the data set ``name`` is a copy of (:data:`SAME_AS`), else ``name``.

    >>> same_as("math-lighteval"), same_as("math500"), same_as("gsm8k")
    ('math', 'math500', 'gsm8k')
    """
    return SAME_AS.get(name, name)


# words that name a measure or a split, not a benchmark: a data set (or, in fit.forecast.tasks, a
# validation key) made only of them names no task
GENERIC = frozenset({"accuracy", "acc", "score", "scores", "reward", "rewards", "mean", "correct", "pass@1", "pass1",
                     "mean@1", "em", "exact_match", "success", "solve_rate", "val", "eval", "test", "validation",
                     "valid", "dev", "train", "data", "datasets", "dataset", "core", "val-core", "val-aux", "metrics",
                     "results", "unknown", "answer", "answers", "format", "correctness", "solved", "pass", "rate",
                     "avg", "average", "overall", "is_correct", "total", "maj", "best", "worst", "std", "func",
                     "reward_func", "rewards_func", "default", "percentage", "percent", "fraction", "share",
                     "percentage_of", "percent_of", "fraction_of", "share_of", "rate_of"})  # default: OpenRLHF with no datasource column
# a measure's or a split's suffix after a separator, taken off again and again (math_acc, answer_accuracy,
# format_reward, pass_rate, reward_mean, correctness_reward_func, gsm8k-test), and a sample count (acc@4, maj@8)
_MEASURE = re.compile(r"[_\-.](accuracy|acc|score|reward|rewards|pass1|correct|exact_match|mean|rate|avg|func|test|"
                      r"val|validation|dev|pct|percent|examples|answers|samples|problems|responses|predictions)$")
# not eval: human-eval; correct_examples: the share of the examples correct
_AT = re.compile(r"@\d+$")

DATA_FILES = (".parquet", ".jsonl", ".json", ".csv", ".arrow", ".txt", ".jsonl.gz", ".json.gz")
_SPLITS = r"(train|training|test|validation|val|dev)"
_SHARD = re.compile(r"^(train|training|test|validation|val|dev|eval)(-\d+-of-\d+)?$")
_SPLIT_END = re.compile(rf"[_\-]{_SPLITS}$")
_SPLIT_START = re.compile(rf"^{_SPLITS}[_\-]")
# folders that hold data files without naming them (veRL's examples keep parquet files in ~/data/<name>/,
# some preprocessing scripts add a processed/ or parquet/ level): a split file in one names no data set
_FILLER = frozenset({"processed", "parquet", "training"})
_VERSION = re.compile(r"^v\d+(\.\d+)*$")  # gsm8k/v1/train.parquet: a version is a filler too
_HOMES = frozenset({"home", "users"})  # /home/<user>, C:\Users\<user>: a folder under one is a person


def measure_stem(part: str) -> str:
    """A key's or a name's part less its sample count and measure suffixes, lower case.

    >>> measure_stem("correctness_reward_func"), measure_stem("math_acc@4")
    ('correctness', 'math')
    """
    part = _AT.sub("", part.lower())
    while True:
        cut = _MEASURE.sub("", part)
        if cut == part:
            return part
        part = cut


def dataset_name(dataset) -> str:
    """A data set's name from a path, a name or several of them (the rule: the module docstring).

    >>> dataset_name("s3://b/gsm8k/train-00000-of-00001.parquet"), dataset_name("math_train.jsonl,openai/gsm8k")
    ('gsm8k', 'math+gsm8k')
    >>> dataset_name("~/data/gsm8k/processed/train.parquet"), dataset_name("~alice/train.parquet")
    ('', '')
    """
    if isinstance(dataset, (list, tuple)):
        items = [str(d) for d in dataset]
    else:
        items = str(dataset if dataset is not None else "").split(",")
    if len(items) > 1:
        return "+".join(dict.fromkeys(n for n in map(dataset_name, items) if n))
    # a Hydra list or a config's repr brackets and quotes its items: "['a.parquet', 'b.parquet']"
    text = items[0].strip().strip("[]()'\" ").lower() if items else ""
    if text in ("", "nan", "none"):
        return ""
    parts = [p for p in text.replace("\\", "/").split("/") if p and p not in (".", "..", "~")]
    if not parts:
        return ""
    name = parts[-1]
    ext = next((e for e in DATA_FILES if name.endswith(e)), None)
    if ext is None:  # a name, not a file; a hub id's config after a colon is no part of it (openai/gsm8k:main)
        name = name.split(":", 1)[0]
        return "" if measure_stem(name) in GENERIC or _is_home(parts, len(parts) - 1) else name
    stem = name[: -len(ext)]
    if _SHARD.match(stem) or stem in GENERIC:  # a split: the folder names the data
        if len(parts) < 2 or _is_home(parts, len(parts) - 2):
            return ""
        folder = measure_stem(parts[-2])
        return "" if not folder or folder in GENERIC or folder in _FILLER or _VERSION.match(folder) else parts[-2]
    stem = measure_stem(_SPLIT_START.sub("", _SPLIT_END.sub("", stem)))
    return "" if stem in GENERIC else stem


def _is_home(parts: list[str], i: int) -> bool:
    """Whether ``parts[i]`` is a person's home folder: its name is the user's, not the data's."""
    return parts[i].startswith("~") or (i > 0 and parts[i - 1] in _HOMES) or (i == 0 and parts[i] == "root")
