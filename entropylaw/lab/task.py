"""The lab's verifiable reasoning task: add a list of numbers, showing running sums.

A prompt lists ``n_terms`` numbers of ``digits`` digits each (zero-padded, so every
prompt of one task has the same length and needs no padding)::

    prompt    3+5+9+4:
    response  8,17,21>21<eos>

The response writes the running sums (the "reasoning", several tokens) and then the
answer after ``>``. The reward is exact: 1 when the text after ``>`` is the true sum and
the response ended with ``<eos>`` inside the token budget, else 0. The difficulty knob is
``n_terms`` (more steps of reasoning, more chances to slip) and ``digits``.

Train and validation prompts never overlap: a prompt belongs to validation when the
CRC-32 of its text falls in the ``val_frac`` bucket, so the split is fixed by the task,
not by a seed.

>>> task = SumTask(n_terms=4, digits=1)
>>> task.solution([3, 5, 9, 4])
'8,17,21>21'
>>> task.reward([3, 5, 9, 4], "8,17,21>21"), task.reward([3, 5, 9, 4], "8,17,20>20")
(1.0, 0.0)
>>> task.prompt_text([3, 5, 9, 4])
'3+5+9+4:'
>>> answer_reward("8,17,21>21", "21"), answer_reward("8,17,21", "21")
(1.0, 0.0)
"""

from __future__ import annotations

import re
import zlib
from dataclasses import asdict, dataclass

import numpy as np

from entropylaw.errors import EntropyLawError

_ANSWER = re.compile(r">(\d+)$")


@dataclass(frozen=True)
class SumTask:
    """Running-sum addition with an exact-answer reward (see module docstring)."""

    n_terms: int = 5
    digits: int = 1
    val_frac: float = 0.1

    def __post_init__(self):
        if not 2 <= self.n_terms <= 12:
            raise EntropyLawError(f"task n_terms={self.n_terms}: expected 2..12")
        if not 1 <= self.digits <= 3:
            raise EntropyLawError(f"task digits={self.digits}: expected 1..3")
        if not 0.0 < self.val_frac < 0.5:
            raise EntropyLawError(f"task val_frac={self.val_frac}: expected in (0, 0.5)")

    @property
    def name(self) -> str:
        """Benchmark name used in log keys, e.g. ``sum5x1``."""
        return f"sum{self.n_terms}x{self.digits}"

    @property
    def prompt_len(self) -> int:
        """Characters in every prompt (terms, ``+`` signs, final ``:``)."""
        return self.n_terms * self.digits + self.n_terms

    @property
    def max_response_len(self) -> int:
        """Characters of the longest correct response, ``<eos>`` included."""
        sum_digits = len(str(self.n_terms * (10 ** self.digits - 1)))
        return (self.n_terms - 1) * (sum_digits + 1) + 1 + sum_digits + 1

    def config(self) -> dict:
        return asdict(self)

    def prompt_text(self, terms) -> str:
        return "+".join(str(int(t)).zfill(self.digits) for t in terms) + ":"

    def solution(self, terms) -> str:
        sums = np.cumsum(np.asarray(terms, dtype=np.int64))
        return ",".join(str(s) for s in sums[1:]) + f">{sums[-1]}"

    def reward(self, terms, response: str) -> float:
        """1.0 when the answer after ``>`` is the exact sum, else 0.0 (``response`` excludes ``<eos>``)."""
        m = _ANSWER.search(response)
        return float(m is not None and int(m[1]) == int(np.sum(terms)))

    def is_val(self, terms) -> bool:
        bucket = zlib.crc32(self.prompt_text(terms).encode()) % 10_000
        return bucket < self.val_frac * 10_000

    def sample(self, n: int, rng: np.random.Generator, split: str = "train") -> np.ndarray:
        """``n`` prompts (rows of terms) drawn uniformly from one split."""
        if split not in ("train", "val"):
            raise ValueError(f"split must be 'train' or 'val', got {split!r}")
        want_val = split == "val"
        out: list[np.ndarray] = []
        while len(out) < n:
            cand = rng.integers(0, 10 ** self.digits, size=(2 * n + 8, self.n_terms))
            out.extend(row for row in cand if self.is_val(row) == want_val)
        return np.stack(out[:n])

    def val_set(self, n: int, seed: int = 12345) -> np.ndarray:
        """A fixed validation set (the same for every run of this task)."""
        return self.sample(n, np.random.default_rng(seed), split="val")

    def demonstration(self, terms, rng: np.random.Generator, error_rate: float) -> str:
        """An imperfect demonstration: with probability ``error_rate`` one running sum
        slips by a small amount and the slip carries through to the answer (what a weak
        base model's reasoning looks like)."""
        sums = np.cumsum(np.asarray(terms, dtype=np.int64))[1:].copy()
        if rng.random() < error_rate:
            at = int(rng.integers(0, len(sums)))
            slip = int(rng.choice([-10, -2, -1, 1, 2, 10]))
            sums[at:] += slip
            sums = np.maximum(sums, 0)
        return ",".join(str(s) for s in sums) + f">{sums[-1]}"


def answer_reward(response: str, answer) -> float:
    """The task's reward as ``fn(response_text, answer)``, for ``entropylaw probe-checkpoints
    --reward entropylaw.lab.task:answer_reward`` (the text after the last ``>`` is the answer)."""
    m = _ANSWER.search(str(response).strip())
    return float(m is not None and int(m[1]) == int(answer))


def prompt_lines(task: SumTask, terms, tokenizer) -> list[str]:
    """JSONL lines in the probe's prompt-file format. ``prompt_ids`` carries the leading
    ``<bos>`` the policies were trained with (the probe tokenizes a text prompt without
    special tokens); ``prompt`` is the same prompt as text, for people."""
    import json

    return [json.dumps({"prompt_id": task.prompt_text(t), "prompt": task.prompt_text(t),
                        "prompt_ids": tokenizer.encode(task.prompt_text(t)), "answer": str(int(np.sum(t)))})
            for t in terms]
