"""A lab run's settings, validated before anything starts.

>>> cfg = RunConfig(size="xs", algo="rloo", intervention="clip_cov", steps=5)
>>> cfg.run_name
'xs-rloo-clip_cov-s0'
>>> RunConfig.from_dict({"size": "xs", "stesp": 5})
Traceback (most recent call last):
...
entropylaw.errors.EntropyLawError: run settings: unknown key 'stesp' (did you mean 'steps'?); valid keys: size, algo, intervention, steps, seed, n_terms, digits, prompts_per_step, group_size, ppo_epochs, minibatches, lr, temperature, filter_groups, val_every, val_size, val_samples, ckpt_every, sft_steps, sft_error_rate, intervention_args, optimizer, max_grad_norm, ppo_clip, tag
>>> RunConfig(size="xs", optimizer="sgd", ppo_clip=False, tag="theory").run_name
'xs-grpo-none-theory-s0'
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, field, fields

from entropylaw.errors import EntropyLawError
from entropylaw.lab.models import size_spec

ALGORITHMS = ("grpo", "rloo", "reinforce++", "reinforce")
OPTIMIZERS = ("adam", "sgd")


def _did_you_mean(name: str, options) -> str:
    close = difflib.get_close_matches(name, list(options), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def run_name(size: str, algo: str, intervention: str, seed: int, tag: str = "") -> str:
    """``<size>-<algo>-<intervention>[-<tag>]-s<seed>``: a run's name and its table ``run_id``."""
    return f"{size}-{algo}-{intervention}{'-' + tag if tag else ''}-s{seed}"


@dataclass
class RunConfig:
    size: str = "s"
    algo: str = "grpo"
    intervention: str = "none"
    steps: int = 100
    seed: int = 0
    n_terms: int = 4
    digits: int = 1
    prompts_per_step: int = 16
    group_size: int = 8
    ppo_epochs: int = 1
    minibatches: int = 4
    lr: float = 1e-4
    temperature: float = 1.0
    filter_groups: bool = False
    val_every: int = 10
    val_size: int = 128
    val_samples: int = 4
    ckpt_every: int = 50
    sft_steps: int = 300
    sft_error_rate: float = 0.5
    intervention_args: dict = field(default_factory=dict)
    # the update rule, so a run can match the theorems (sgd, one minibatch, no clipping)
    optimizer: str = "adam"
    max_grad_norm: float = 1.0    # 0 turns gradient-norm clipping off
    ppo_clip: bool = True         # False: the loss is -A r with no PPO (or dual) clip
    tag: str = ""                 # appended to the run's name: s-grpo-none-<tag>-s0

    def __post_init__(self):
        from entropylaw.probing.interventions import INTERVENTIONS  # torch

        size_spec(self.size)  # raises for an unknown size
        if self.algo not in ALGORITHMS:
            raise EntropyLawError(f"unknown algorithm {self.algo!r}{_did_you_mean(self.algo, ALGORITHMS)}; "
                                  f"valid: {', '.join(ALGORITHMS)}")
        if self.intervention not in INTERVENTIONS:
            raise EntropyLawError(f"unknown intervention {self.intervention!r}"
                                  f"{_did_you_mean(self.intervention, INTERVENTIONS)}; "
                                  f"valid: {', '.join(INTERVENTIONS)}")
        positive = ["steps", "prompts_per_step", "group_size", "ppo_epochs", "minibatches", "val_every",
                    "val_size", "val_samples", "ckpt_every"]
        for name in positive:
            if int(getattr(self, name)) < 1:
                raise EntropyLawError(f"run setting {name}={getattr(self, name)}: expected an integer >= 1")
        if self.group_size < 2 and self.algo in ("grpo", "rloo"):
            raise EntropyLawError(f"{self.algo} needs group_size >= 2 (got {self.group_size})")
        if (self.prompts_per_step * self.group_size) % self.minibatches:
            raise EntropyLawError(f"prompts_per_step*group_size = {self.prompts_per_step * self.group_size} "
                                  f"is not divisible by minibatches={self.minibatches}")
        for name in ("lr", "temperature"):  # TOML reads `lr = inf`: NaN weights, then an internal error
            if not 0 < getattr(self, name) < float("inf"):
                raise EntropyLawError(f"run setting {name}={getattr(self, name)}: expected a finite number > 0")
        if self.optimizer not in OPTIMIZERS:
            raise EntropyLawError(f"run setting optimizer={self.optimizer!r}: expected one of {', '.join(OPTIMIZERS)}"
                                  f"{_did_you_mean(self.optimizer, OPTIMIZERS)}")
        if not self.max_grad_norm >= 0:
            raise EntropyLawError(f"run setting max_grad_norm={self.max_grad_norm}: expected >= 0 (0 = no clipping)")
        if self.tag and not all(c.isalnum() or c in "._+-" for c in self.tag):
            raise EntropyLawError(f"run setting tag={self.tag!r}: use letters, digits and . _ + - "
                                  "(it becomes part of a directory name)")
        if self.sft_steps < 0 or not 0 <= self.sft_error_rate <= 1:
            raise EntropyLawError("run settings: sft_steps must be >= 0 and sft_error_rate in [0, 1]")
        self.intervention_config()  # validates intervention_args

    @property
    def run_name(self) -> str:
        return run_name(self.size, self.algo, self.intervention, self.seed, self.tag)

    @property
    def algorithm_label(self) -> str:
        """The table's ``algorithm``: ``grpo`` for no intervention, else ``grpo+clip_cov``."""
        return self.algo if self.intervention == "none" else f"{self.algo}+{self.intervention}"

    def intervention_config(self):
        from entropylaw.probing.losses import InterventionConfig

        args = dict(self.intervention_args)
        if "name" in args:
            raise EntropyLawError("intervention_args must not contain 'name' (use intervention)")
        return InterventionConfig.from_dict({"name": self.intervention, **args})

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict, where: str = "run settings") -> "RunConfig":
        names = [f.name for f in fields(cls)]
        for key in d:
            if key not in names:
                raise EntropyLawError(f"{where}: unknown key {key!r}{_did_you_mean(key, names)}; "
                                      f"valid keys: {', '.join(names)}")
        types = {f.name: f.type for f in fields(cls)}
        clean = {}
        for key, value in d.items():
            want = types[key]
            ok = {"int": isinstance(value, int) and not isinstance(value, bool),
                  "float": isinstance(value, (int, float)) and not isinstance(value, bool),
                  "bool": isinstance(value, bool), "str": isinstance(value, str),
                  "dict": isinstance(value, dict)}.get(want.split("[")[0] if isinstance(want, str) else "", True)
            if not ok:
                noun = {"int": "a whole number", "float": "a number", "bool": "true or false", "str": "text",
                        "dict": "a table of settings"}.get(str(want).split("[")[0], f"a {want}")
                raise EntropyLawError(f"{where}: {key} = {value!r}: expected {noun}")
            clean[key] = value
        return cls(**clean)
