"""What a custom loop printed of its own config before its first step: the model, the data, the planned steps and
the seed, read as a tracker's config is (:func:`~entropylaw.readers.config_meta.meta_from_config`).

A hand-written GRPO loop rarely saves a config file; it prints its arguments on its first lines, in one of three
shapes, which this module reads (values as Python literals, with :func:`ast.literal_eval`, never ``eval``):

- argparse's ``Namespace(model='Qwen/Qwen2.5-Math-1.5B', train_path='data/MATH/train.jsonl', n_grpo_steps=200)``;
- a printed dict, on one line or as ``pprint`` spreads it over several, behind a label or not
  (``config: {'model_name': ..., 'lr': 1e-05}``); JSON's ``true``/``null`` too;
- ``key='text'`` pairs on a line of another tool (vLLM's ``Initializing an LLM engine ... with config:
  model='Qwen/Qwen2.5-Math-1.5B', ...``): only quoted text is taken there, as another tool's numbers (its own
  ``seed=0``) are not the loop's.

The first config that names a value wins, the loop's own (a Namespace, a dict) over another tool's line: a judge's or
a reward model's engine printed before the policy's config names no run's model. Nor does a line of ``key='text'``
pairs that (or whose line above) names a judge, a reward model, a verifier, a grader, a critic, a teacher or a
reference model, nor a model's value of one bare word (``{'model': 'policy', 'n_correct': 120}``: a role, no name);
each model so passed over is said. Nothing else in the log is read as config: a line of numbers without a
step stays what the reader of the log says it is.

>>> header = PrintedConfig()
>>> for n, text in enumerate(["loading...", "Namespace(model='Qwen/Qwen2.5-Math-1.5B', n_grpo_steps=200, seed=1, train_path='data/MATH/train.jsonl')",
...                           "INFO engine with config: model='Qwen/Qwen2.5-Math-1.5B', seed=0"], 1):
...     header.feed(n, text)
>>> header.meta()
{'model': 'Qwen/Qwen2.5-Math-1.5B', 'seed': 1.0, 'dataset': 'math', 'config': {'total_steps': 200}}
>>> header.first
2
"""

from __future__ import annotations

import ast
import json
import re

from entropylaw.readers.config_meta import MODEL_KEYS, meta_from_config
from entropylaw.readers.key_names import is_accuracy, is_candidate, is_training_loss

MAX_LINES = 400  # a printed dict longer than this is not a config's
MAX_HEADER = 20_000  # lines: a config is printed before the loop's first step, near the log's start
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_RAY = re.compile(r"^\s*\([^()]*pid=\d+[^()]*\)\s?")
_NAMESPACE = re.compile(r"\bNamespace\(")
_QUOTED = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)=('(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\")")
# a dict the line starts with, behind a short label or a logging prefix ("config: {", "INFO: args = {")
_DICT_START = re.compile(r"^[^{'\"]{0,80}?[:=]?\s*\{")
_JSON_WORDS = re.compile(r"\b(true|false|null)\b")
# another model than the policy, named on a line of key='text' pairs or the line above it ("Loading judge model")
_NOT_POLICY = re.compile(r"(?<![A-Za-z])(?:judge|judging|reward[\s_-]?model|rm|prm|orm|verifier|grader|critic|teacher"
                         r"|ref(?:erence)?[\s_-]?model|evaluator)(?![A-Za-z])", re.IGNORECASE)
_ROLE_WORD = re.compile(r"[A-Za-z]+")  # 'policy', 'actor', 'greedy': a role's or a mode's word, no model's name
_OTHER = "key='text' pairs"  # the shape of another tool's line: its model yields to the loop's own config


class PrintedConfig:
    """Feed a log's lines before its first step (``feed(lineno, text)``); :meth:`meta` is the run metadata they
    name, :attr:`first` the line of the first config that named some."""

    def __init__(self):
        self.config: dict = {}  # the loop's own config (a Namespace, a dict)
        self.other: dict = {}  # another tool's key='text' pairs (vLLM's engine line)
        self.passed: list[str] = []  # models not taken, each with its line and why
        self._last = ""  # the line before, where it printed anything
        self._role = None  # the words that name the config being read another model's than the policy ("judge")
        self.first: int | None = None
        self.shapes: list[str] = []
        self._open: list[str] = []  # a printed dict's lines while its braces are open
        self._start = 0
        self._seen = 0

    def feed(self, lineno: int, text: str) -> None:
        self._seen += 1
        if self._seen > MAX_HEADER:
            return
        line = _RAY.sub("", _ANSI.sub("", text.rstrip("\r\n")))
        above, self._last = self._last, (line if line.strip() else self._last)
        if self._open:
            self._open.append(line)
            self._close(lineno)
            return
        # a judge's or another model's config: named by the words before it, or by the line above where that
        # printed no pairs of its own ("Loading judge model...")
        above = "" if "{" in above or "Namespace(" in above or _QUOTED.search(above) else above
        # only a line that announces what follows ("Loading judge model...", "Judge config:"); one that names its
        # own model ("Loading judge model gpt-4o-mini") says nothing of the config under it
        above = above if above.rstrip().endswith(("...", ":", "…")) else ""
        if "Namespace(" in line:
            self._role = _NOT_POLICY.search(line[:line.find("Namespace(")]) or _NOT_POLICY.search(above)
            self._namespace(lineno, line)
        elif "{" in line and (m := _DICT_START.match(line)):
            self._role = _NOT_POLICY.search(line[:m.end() - 1]) or _NOT_POLICY.search(above)
            self._start, self._open = lineno, [line[m.end() - 1:]]
            self._close(lineno)
        elif "='" in line or '="' in line:
            self._role = _NOT_POLICY.search(line[:line.find("=")]) or _NOT_POLICY.search(above)
            self._take(lineno, {k: ast.literal_eval(v) for k, v in _QUOTED.findall(line)}, _OTHER)

    def meta(self) -> dict:
        """The run metadata the config names (model, algorithm, seed, data set; ``config``: the planned steps)."""
        return {**_named(self.other), **_named(self.config)}

    def said(self) -> str:
        """What was read and where, for the run's notes ('' where nothing was)."""
        meta = self.meta()
        passed = self.passed + [f"model={m!r} (another tool's line, the loop's own config names {meta['model']!r})"
                                for m in [_named(self.other).get("model")] if m and m != meta.get("model")]
        passed = f"; a model not taken: {', '.join(passed[:3])}" if passed else ""
        if not meta:
            return f"no config read from what the log printed before its first step{passed}" if passed else ""
        named = [f"model {meta['model']}" if "model" in meta else "", f"data set {meta['dataset']}"
                 if "dataset" in meta else "", f"algorithm {meta['algorithm']}" if "algorithm" in meta else "",
                 f"seed {meta['seed']:g}" if "seed" in meta else "",
                 f"{meta['config']['total_steps']} steps planned" if "config" in meta else ""]
        return (f"the run's config read from what the log printed before its first step ({', '.join(self.shapes)}, "
                f"the first at line {self.first}): " + ", ".join(n for n in named if n) + passed)

    def _namespace(self, lineno: int, line: str) -> None:
        text = line[_NAMESPACE.search(line).start():].rstrip().rstrip(",")
        try:
            call = ast.parse(text, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return
        if not isinstance(call, ast.Call):
            return
        values = {}
        for kw in call.keywords:
            try:
                values[kw.arg] = ast.literal_eval(kw.value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                continue  # device=device(type='cuda'): no literal, not a value of the run's
        self._take(lineno, values, "argparse's Namespace")

    def _close(self, lineno: int) -> None:
        text = "\n".join(self._open)
        depth = text.count("{") - text.count("}")
        if depth > 0 and len(self._open) < MAX_LINES:
            return
        self._open = []
        if depth != 0:
            return
        for parse in (ast.literal_eval, lambda t: ast.literal_eval(_JSON_WORDS.sub(
                lambda m: {"true": "True", "false": "False", "null": "None"}[m.group(1)], t)), json.loads):
            try:
                value = parse(text)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                continue
            if isinstance(value, dict) and not _measures(value):
                self._take(self._start, value, "a printed dict")
            return

    def _take(self, lineno: int, values: dict, shape: str) -> None:
        config = self.other if shape == _OTHER else self.config
        for key in MODEL_KEYS:  # a judge's model, or a role's word ('policy'): no run's model, said
            value = values.get(key)
            why = (f"a {self._role.group().lower()}'s config, no policy's" if self._role else
                   "a bare word, no model's name" if isinstance(value, str) and _ROLE_WORD.fullmatch(value) else "")
            if why and isinstance(value, str) and value.strip():
                self.passed.append(f"{key}={values.pop(key)!r} (line {lineno}: {why})")
        if self._role:
            return  # a judge's seed, data and steps are not the run's either
        values = {k: v for k, v in values.items() if isinstance(k, str) and k not in config}
        named = _named({**config, **values}) if values else None
        if not named or named == _named(config):
            return  # names nothing a run's metadata holds: a metrics dict, another tool's settings
        config.update(values)
        self.first = self.first or lineno
        if shape not in self.shapes:
            self.shapes.append(shape)


def _measures(record: dict) -> bool:
    """Whether a printed dict holds the run's measures (an evaluation before training, ``{'dataset': 'math500',
    'model': 'policy', 'accuracy': 0.12}``): a number under a score's, an entropy's, an accuracy's or the loss's name.
    Such a dict is a record of values, its text no config's (its data set is an evaluation's)."""
    return any(isinstance(v, (int, float)) and not isinstance(v, bool) and isinstance(k, str) and (
        is_candidate(k) or is_training_loss(k) or is_accuracy(f"eval/{k}")) for k, v in record.items())


def _named(config: dict) -> dict:
    """The run metadata ``config`` names (:func:`meta_from_config`), without what it names as nothing (a data set
    'train', a path that names none: ''); a seed of 0 is one."""
    return {k: v for k, v in meta_from_config(config).items() if v or k == "seed"}
