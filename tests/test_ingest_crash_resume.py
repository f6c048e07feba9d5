"""Custom trainers' logs that crashed, were resumed, or were put together wrongly.

- a printed log (a loop's ``step 10 | entropy 0.5`` lines, veRL's console) that ends in a Python
  traceback or ``Killed``: the run stopped there, said by the row account and every command. Before,
  nothing said it, and a forecast of where the run "ends" read as one of a run that finished;
- a run folder's ``metrics.jsonl`` beside the trainer's ``output.log``/``stderr`` holding the traceback:
  said of the run. Before, a run folder given alone with its console output failed to read at all;
"""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from entropylaw.api.reading import row_accounts

OOM = ('Traceback (most recent call last):\n  File "train.py", line 120, in <module>\n    main()\n'
       '  File "train.py", line 88, in main\n    loss.backward()\n'
       'RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n')


def _h(s):
    return 0.8 * math.exp(-s / 20) + 0.05


def _r(s):
    return 0.1 + 0.5 * (1 - math.exp(-s / 20))


def _printed(steps=range(1, 41), loss=lambda s: 0.1):
    return "".join(f"step {s} | loss {loss(s)} | entropy {_h(s):.4f} | reward {_r(s):.4f}\n" for s in steps)


def _notes(df):
    return [n for a in row_accounts(df) for n in a["notes"]]


def _ends(df):
    return [n for n in _notes(df) if n.startswith("the log ends in an error")]


@pytest.mark.parametrize("tail,line,what", [
    (OOM, 41, "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"),
    ("Killed\n", 41, "Killed"),
    ("/bin/bash: line 1:  4242 Killed                  python train.py\n", 41, "Killed"),
    ("slurmstepd: error: *** JOB 77 ON gpu-3 CANCELLED AT 2026-01-02T03:04:05 DUE TO TIME LIMIT ***\n", 41,
     "the scheduler cancelled the job (time limit)"),
])
def test_a_printed_log_that_ends_in_an_error_says_so(tmp_path, tail, line, what):
    path = tmp_path / "train.log"
    path.write_text(_printed() + tail)
    df = el.load(path, warn=False)
    [end] = _ends(df)
    assert end.startswith(f"the log ends in an error at line {line}, after its last step 40: {what}"), end
    assert len(df[df["metric"] == "entropy"]) == 40  # nothing read differently


def test_the_commands_say_the_error_a_log_ends_in(tmp_path, cli):
    path = tmp_path / "train.log"
    path.write_text(_printed() + OOM)
    for command in ("summary", "forecast"):
        out = cli(command, str(path))
        assert out.returncode == 0, out.stderr
        said = " ".join(out.stderr.split())
        assert ("the log ends in an error at line 41, after its last step 40: RuntimeError: CUDA out of memory"
                in said), out.stderr


def test_a_nan_loss_crash_is_said_with_the_values_it_dropped(tmp_path):
    path = tmp_path / "train.log"
    nan_tail = ('Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n'
                '    raise FloatingPointError(f"loss is {loss}")\nFloatingPointError: loss is nan\n')
    path.write_text(_printed(range(1, 41), loss=lambda s: "nan" if s > 37 else 0.1) + nan_tail)
    df = el.load(path, warn=False)
    [account] = row_accounts(df)
    assert account["dropped"] == {"non-finite value": 3}
    [end] = _ends(df)
    assert "line 41, after its last step 40: FloatingPointError: loss is nan" in end


@pytest.mark.parametrize("tail", [
    # a traceback a loop caught and printed, the run going on
    OOM.replace("RuntimeError", "ValueError") + _printed(range(41, 46)),
    # Python's note of an error it went past at exit: the run finished
    "training done\nException ignored in: <function Pool.__del__ at 0x7f>\nTraceback (most recent call last):\n"
    '  File "pool.py", line 3, in __del__\nAttributeError: NoneType object has no attribute close\n',
    "training done\n",
])
def test_a_log_that_goes_on_or_finishes_is_no_crash(tmp_path, tail):
    path = tmp_path / "train.log"
    path.write_text(_printed() + tail)
    assert _ends(el.load(path, warn=False)) == []


def test_a_verl_console_log_ending_in_a_workers_traceback(tmp_path):
    lines = [f"(TaskRunner pid=71) step:{s} - actor/entropy:{_h(s):.4f} - critic/score/mean:{_r(s):.4f}"
             for s in range(1, 31)]
    ray = "\x1b[2m\x1b[36m(TaskRunner pid=71)\x1b[0m "  # Ray's coloured prefix of a worker's lines
    tail = [ray + "Traceback (most recent call last):",
            ray + '  File "verl/trainer/ppo/ray_trainer.py", line 900, in fit',
            ray + "    output = self.actor_rollout_wg.update_actor(batch)",
            ray + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB",
            "Error executing job with overrides: []", "Traceback (most recent call last):",
            '  File "main_ppo.py", line 30, in main', "ray.exceptions.RayTaskError(OutOfMemoryError): ray::run()"]
    path = tmp_path / "verl_grpo.log"
    path.write_text("\n".join(lines + tail) + "\n")
    [end] = _ends(el.load(path, warn=False))
    assert end.startswith("the log ends in an error at line 31, after its last step 30: torch.OutOfMemoryError: "
                          "CUDA out of memory"), end


@pytest.mark.parametrize("console", ["output.log", "stderr"])
def test_a_run_folders_metrics_beside_its_console_output_that_ends_in_an_error(tmp_path, console):
    """A run folder given alone: before, its console output (no metrics in it) failed the whole read."""
    run = tmp_path / "grpo_run"
    run.mkdir()
    (run / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "entropy": _h(s), "reward": _r(s)}) + "\n"
                                               for s in range(1, 41)))
    (run / console).write_text("loading model\nstarting training\n" + OOM)
    for where in (run, tmp_path):  # given alone, and as a sweep's run folder
        df = el.load(where, warn=False)
        assert el.run_ids(df) == ["grpo_run"]
        [end] = _ends(df)
        assert end.startswith(f"the log ends in an error ({console} beside it, line 3): RuntimeError: CUDA out of "
                              "memory"), end
        [account] = [a for a in row_accounts(df) if a["source"].endswith("metrics.jsonl")]
        assert account["rows_read"] == account["rows_kept"] == 80


def test_a_run_folders_console_output_that_ends_well_says_nothing(tmp_path):
    run = tmp_path / "grpo_run"
    run.mkdir()
    (run / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "entropy": _h(s), "reward": _r(s)}) + "\n"
                                               for s in range(1, 41)))
    (run / "output.log").write_text("loading model\n" + OOM + "retrying with a smaller batch\n" * 300 + "done\n")
    assert _ends(el.load(run, warn=False)) == []
