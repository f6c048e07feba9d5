"""What a veRL log's launch command and config echo say, read as text: the shell variables it
sets, the training files, and the config the forecast reads (:func:`config_from_header`: the
train files in order, ``data.shuffle``, the planned total steps, the learning-rate schedule).
:mod:`.verl_console` reads the model, algorithm and data set with the same helpers."""

from __future__ import annotations

import re

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
SHELL_VAR = re.compile(r"^\s*(?:\++\s*)?(?:export\s+)?([A-Za-z_]\w*)=(.*?)\s*(?:#.*)?$")
TRAIN_FILES = re.compile(r"(?:data\.train_files=|'train_files':\s*|^\s*(?:\++\s*)?(?:export\s+)?train_files=)(.*)")
PARQUET = re.compile(r"[^\s'\"\[\],=]+\.(?:parquet|jsonl?|arrow)")
VAR_REF = re.compile(r"\$\{?([A-Za-z_]\w*)\}?")


def unquote(text: str) -> str:
    return text.strip().strip("'\"").replace("'\\''", "'")


def expand(text: str, variables: dict[str, str], depth: int = 3) -> str:
    for _ in range(depth):
        new = VAR_REF.sub(lambda m: variables.get(m.group(1), m.group(0)), text)
        if new == text:
            break
        text = new
    return text


# the config keys the forecast reads: on the command line (``data.shuffle=False``), or in the
# config echo inside their block (``'shuffle': False`` under ``'data'``: the actor's and the
# critic's own ``'shuffle'`` are their mini-batches', not the data's)
_CONFIG_KEYS = {  # key: (command-line argument, echo key, echo block)
    "shuffle": (r"data\.shuffle", "shuffle", "data"),
    "total_steps": (r"trainer\.total_training_steps", "total_training_steps", "trainer"),
    "total_epochs": (r"trainer\.total_epochs", "total_epochs", "trainer"),
    "lr": (r"actor_rollout_ref\.actor\.optim\.lr", "lr", "actor_rollout_ref"),
    "lr_warmup_steps_ratio": (r"actor_rollout_ref\.actor\.optim\.lr_warmup_steps_ratio", "lr_warmup_steps_ratio",
                              "actor_rollout_ref"),
    "lr_schedule": (r"actor_rollout_ref\.actor\.optim\.(?:warmup_style|lr_scheduler_type)",
                    "(?:warmup_style|lr_scheduler_type)", "actor_rollout_ref"),
}
_CONFIG_ARGS = {k: re.compile(rf"(?:^|\s){cli}=['\"]?([\w.+-]+)") for k, (cli, _, _) in _CONFIG_KEYS.items()}
_CONFIG_ECHO = {k: re.compile(rf"'{echo}':\s*'?([\w.+-]+)") for k, (_, echo, _) in _CONFIG_KEYS.items()}
_RAY_PREFIX = re.compile(r"^\(\w+ pid=\d+(?:, ip=[\d.]+)?\)")
_ECHO_BLOCK = re.compile(r"^\s{0,2}\{?'(\w+)': \{")  # a top-level block of the echo (indented 0-2)


def _config_value(key: str, value: str):
    """The value of a config key, or None where it is not one (``None``, a word for a number)."""
    if key == "shuffle":
        return {"true": True, "false": False}.get(value.lower())
    if key in ("total_steps", "total_epochs"):
        return int(value) if value.isdigit() else None
    if key == "lr_schedule":
        return value if value != "None" else None
    try:
        return float(value)
    except ValueError:
        return None


def config_from_header(header_lines: list[bytes]) -> dict:
    """What the launch command and the config echo say of the data and the schedule: the
    train files in order (``train_files``), ``shuffle`` (True/False), ``total_steps`` or
    ``total_epochs``, the learning rate and its schedule; a key not printed is left out.

    >>> config_from_header([b"python3 -m verl.trainer.main_ppo data.train_files=['/d/gsm8k/train.parquet',"
    ...                     b"'/d/math/train.parquet'] data.shuffle=False trainer.total_training_steps=400"])
    {'train_files': ['/d/gsm8k/train.parquet', '/d/math/train.parquet'], 'shuffle': False, 'total_steps': 400}
    """
    variables: dict[str, str] = {}
    out: dict = {}
    block, files = "", None  # the echo's current top-level block; a train-files list still open
    for raw in header_lines:
        if b"=" not in raw and b"'" not in raw:
            continue
        line = ANSI.sub(b"", raw).decode("utf-8", "replace").rstrip()
        echo = _RAY_PREFIX.sub("", line)
        m = SHELL_VAR.match(line)
        if m and " " not in m.group(1):
            variables[m.group(1)] = unquote(m.group(2))
        if (m := _ECHO_BLOCK.match(echo)):
            block = m.group(1)
        if files is not None:  # the echo's list goes on over the next lines, up to its "]"
            files += PARQUET.findall(echo.split("]")[0])
            if "]" in echo:
                out.setdefault("train_files", list(dict.fromkeys(files)))
                files = None
        elif "train_files" not in out and (m := TRAIN_FILES.search(line)):
            text = expand(m.group(1).split("data.val_files")[0].split("'val_files'")[0], variables)
            found = PARQUET.findall(text.split("]")[0] if "'train_files'" in line else text)
            if "'train_files'" in line and "[" in text and "]" not in text:
                files = found
            elif found:
                out["train_files"] = list(dict.fromkeys(found))
        for key in _CONFIG_KEYS:
            if key in out:
                continue
            m = _CONFIG_ARGS[key].search(line)
            if m is None and block == _CONFIG_KEYS[key][2]:
                m = _CONFIG_ECHO[key].search(echo)
            if m is not None and (value := _config_value(key, m.group(1).strip("'\""))) is not None:
                out[key] = value
    return out
