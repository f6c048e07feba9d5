"""The lab's RL loop: rollouts, verifiable rewards, PPO-clip updates, logs, checkpoints.

One step (veRL's order): sample ``prompts_per_step`` training prompts, ``group_size``
responses each at temperature T; reward them exactly; optionally drop the groups that are
all correct or all wrong; advantages from the shared estimator
(:func:`entropylaw.probing.advantages.advantages`); score the batch under the rollout policy
(old log-probs, token entropies: ``actor/entropy`` is their token-mean); then
``ppo_epochs`` passes over ``minibatches`` shuffled minibatches, each one optimiser step on
the shared :func:`entropylaw.probing.losses.policy_loss` with the run's intervention; finally
re-score the same batch to log the measured entropy change ``actor/entropy_delta``.
Validation runs at step 0 and every ``val_every`` steps, after that step's update, on a
fixed validation set: ``val-core/<task>/acc/mean@k`` is the accuracy of ``val_samples``
samples per prompt at temperature T (veRL's meaning of ``mean@k``; the main validation
accuracy, which ``entropylaw ingest`` maps to ``val/<task>``), ``val-aux/<task>/acc/greedy``
the greedy accuracy (kept under its own name; it is the sampled accuracy's H -> 0 limit).

Checkpoints (``checkpoints/global_step_<n>/``: HF model + tokenizer + ``trainer_state.pt``
with optimiser and RNG states) are written every ``ckpt_every`` steps and at the end; logs
are flushed right after each one, so an interrupted run resumes from its last checkpoint
bit-for-bit and duplicates nothing. A finished run writes ``done.json``.
"""

from __future__ import annotations

import json
import shutil
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.lab.config import RunConfig
from entropylaw.lab.export import run_meta
from entropylaw.lab.loggers import MultiLogger, silent_steps_logged, truncate_after
from entropylaw.lab.metrics import (covariance_by_difficulty, covariance_summary, metric_keys,
                                    response_level_covariance, seq_mean_token_mean)
from entropylaw.lab.models import build_model, check_fits, size_spec
from entropylaw.lab.task import SumTask, prompt_lines
from entropylaw.lab.theory import batch_predictions
from entropylaw.lab.tokenizer import CharTokenizer
from entropylaw.lab.warmstart import WarmStartConfig, load_or_train
from entropylaw.readers.lab_rundir import DONE_JSON, RUN_JSON, read_run_json, write_run_json

DONE = DONE_JSON


def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def latest_checkpoint(out_dir: Path) -> Path | None:
    ckpts = sorted((out_dir / "checkpoints").glob("global_step_*/trainer_state.pt"),
                   key=lambda p: int(p.parent.name.rsplit("_", 1)[1]))
    return ckpts[-1].parent if ckpts else None


class LabRun:
    """One RL run of the lab; ``run()`` trains (or resumes) and returns the summary."""

    def __init__(self, cfg: RunConfig, out_dir, loggers=("jsonl", "csv"), device: str | None = None,
                 warmstart_dir=None, progress: bool = True):
        self.cfg = cfg
        self.out_dir = Path(out_dir)
        self.loggers = list(loggers)
        self.device = device or default_device()
        self.warmstart_dir = Path(warmstart_dir) if warmstart_dir else self.out_dir / "warmstart"
        self.progress = progress
        self.task = SumTask(cfg.n_terms, cfg.digits)
        self.tok = CharTokenizer()
        self.spec = size_spec(cfg.size)
        self.max_new = self.task.max_response_len + 2
        batch_tokens = cfg.prompts_per_step * cfg.group_size * (self.task.prompt_len + 1 + self.max_new)
        check_fits(self.spec, self.tok.vocab_size, max(batch_tokens, cfg.val_size * cfg.val_samples * 8),
                   self.device)
        self.keys = metric_keys(cfg, self.task.name)
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # "Writing model shards" bars at every checkpoint

    # ---- set-up -------------------------------------------------------------------
    def _check_out_dir(self) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        mine = {"config": self.cfg.to_dict(), "task": self.task.config()}
        theirs = read_run_json(self.out_dir) if (self.out_dir / RUN_JSON).exists() else None
        if theirs is not None:  # settings added since that run was written take their defaults
            theirs = {**theirs, "config": {**RunConfig().to_dict(), **theirs["config"]}}
        if theirs is not None and {k: theirs.get(k) for k in mine} != mine:
            differ = [f"{k}: {theirs['config'].get(k)!r} there, {v!r} here" for k, v in mine["config"].items()
                      if theirs["config"].get(k) != v]
            if (theirs.get("task") or {}) != mine["task"]:
                differ.append("the task's settings")
            raise EntropyLawError(f"{self.out_dir}: holds a lab run with other settings ({'; '.join(differ[:4])}"
                                  f"{'; ...' if len(differ) > 4 else ''}; {self.out_dir / RUN_JSON}); a run resumes "
                                  "only with its own settings: choose another `out` or delete it")
        if theirs is None or "meta" not in theirs:  # new, or written before run.json carried meta
            write_run_json(self.out_dir, mine["config"], mine["task"], run_meta(mine["config"]))
        # the validation prompts, for `entropylaw probe-checkpoints --prompts`
        (self.out_dir / "val_prompts.jsonl").write_text(
            "".join(line + "\n" for line in prompt_lines(self.task, self.task.val_set(self.cfg.val_size), self.tok)))

    def _build(self):
        return build_model(self.spec, self.tok.vocab_size, self.tok.pad_id, self.tok.bos_id,
                           self.tok.eos_id, self.task.prompt_len + 1 + self.max_new)

    def warm_start(self):
        """(model, path): the cached warm start for this size and seed (trained if absent)."""
        ws_cfg = WarmStartConfig(sft_steps=self.cfg.sft_steps, error_rate=self.cfg.sft_error_rate)
        return load_or_train(self.warmstart_dir, self.cfg.size, self.cfg.seed, self.task, self.tok, ws_cfg,
                             self._build, self.device)

    def _init_state(self):
        import torch
        from transformers import AutoModelForCausalLM

        from entropylaw.probing.interventions import AEntCoefficient

        cfg = self.cfg
        self.icfg = cfg.intervention_config()
        self.aent = AEntCoefficient(coef=self.icfg.aent_coef, clamp_p=self.icfg.aent_clamp_p)
        self.np_rng = np.random.default_rng([cfg.seed, 2])
        self.gen = torch.Generator(device=self.device).manual_seed(cfg.seed + 7919)
        # Clip-Cov draws its tokens with torch.randperm on the CPU: on an accelerator it needs
        # a CPU generator of its own (on CPU the one stream serves both)
        cpu = torch.device(self.device).type == "cpu"
        self.select_gen = self.gen if cpu else torch.Generator().manual_seed(cfg.seed + 7927)
        ckpt = latest_checkpoint(self.out_dir)
        if ckpt is None:
            model, self.warmstart_path = self.warm_start()
            self.model = model.to(self.device)
            self.step = 0
            self.silent_steps_, self.silent_from_ = 0, 0
        else:
            try:  # a checkpoint missing a file, or truncated: torch's zip reader, transformers' loader
                self.model = AutoModelForCausalLM.from_pretrained(str(ckpt), attn_implementation="eager")
                state = torch.load(ckpt / "trainer_state.pt", weights_only=False)
            except Exception as err:  # noqa: BLE001 -- the boundary
                raise EntropyLawError(f"{ckpt}: cannot resume from this checkpoint ({type(err).__name__}: "
                                      f"{' '.join(str(err).split())[:160]}); delete it to resume from the one "
                                      "before") from None
            self.model.to(self.device)
            self.warmstart_path = None
        if cfg.optimizer == "sgd":  # plain SGD: the update the theorems describe
            self.opt = torch.optim.SGD(self.model.parameters(), lr=cfg.lr)
        else:
            self.opt = torch.optim.Adam(self.model.parameters(), lr=cfg.lr, betas=(0.9, 0.999), eps=1e-8)
        if ckpt is not None:
            self.opt.load_state_dict(state["optimizer"])
            self.gen.set_state(state["generator"])
            if self.select_gen is not self.gen:
                self.select_gen.set_state(state["select_generator"])
            self.np_rng.bit_generator.state = state["np_rng"]
            self.aent.coef_, self.aent.n_updates_ = state["aent"]
            self.step = int(state["step"])
            # the whole run's count, not this segment's: kept in the checkpoint, else read off the logs
            logged = state.get("silent_steps")
            # the step the count starts after (0: the whole run): a count that could not be read stays partial
            # through later resumes, and is said as such (a checkpoint's count read as the whole run's)
            self.silent_from_ = int(state.get("silent_from", 0))
            if logged is None:
                logged = silent_steps_logged(self.out_dir, self.step, cfg)
                if logged is None and self.step:  # said, not a count of 0 passed off as the run's
                    warnings.warn(f"{self.out_dir}: the steps without learning signal before step {self.step} are "
                                  "not known (a checkpoint written before it kept them, and no metrics.jsonl or "
                                  "metrics.csv holds every step's batch counters): counted from the resume",
                                  EntropyLawWarning, stacklevel=2)
                    self.silent_from_ = self.step
            self.silent_steps_ = logged or 0
        return ckpt

    # ---- one step -----------------------------------------------------------------
    def _prompts(self, terms):
        import torch

        ids = [self.tok.encode(self.task.prompt_text(t)) for t in terms]
        return torch.tensor(ids, dtype=torch.long, device=self.device)

    def _rewards(self, terms, rollout) -> np.ndarray:
        texts = [self.tok.decode(r) for r in rollout.responses.tolist()]
        ended = (rollout.responses == self.tok.eos_id).any(dim=1).tolist()
        return np.array([self.task.reward(t, x) if e else 0.0 for t, x, e in zip(terms, texts, ended)])

    def _train_step(self) -> dict:
        import torch

        from entropylaw.lab.rollout import Rollout, generate, score
        from entropylaw.probing.advantages import advantages
        from entropylaw.probing.interventions import clamped_entropy, token_covariance
        from entropylaw.probing.losses import policy_loss, token_mean

        cfg, G = self.cfg, self.cfg.group_size
        terms = np.repeat(self.task.sample(cfg.prompts_per_step, self.np_rng), G, axis=0)
        self.model.eval()
        ro = generate(self.model, self._prompts(terms), self.max_new, self.tok.eos_id, self.tok.pad_id,
                      cfg.temperature, generator=self.gen)
        rewards = self._rewards(terms, ro)
        group = np.repeat(np.arange(cfg.prompts_per_step), G)
        group_mean = rewards.reshape(-1, G).mean(axis=1)
        keep_groups = (group_mean > 0) & (group_mean < 1) if cfg.filter_groups else np.ones_like(group_mean, bool)
        valid_all = ro.mask.bool()
        with torch.no_grad():
            old_logp_all, old_ent_all, logits = score(self.model, ro, cfg.temperature)
            h_clamped = float(token_mean(clamped_entropy(logits / cfg.temperature, self.icfg.aent_clamp_p), valid_all))
        logits_before = logits
        m = {"actor/entropy": float(token_mean(old_ent_all, valid_all)),
             "actor/entropy_seq_mean": float(seq_mean_token_mean(old_ent_all, valid_all)),
             "actor/clamped_entropy": h_clamped,
             "critic/score/mean": float(rewards.mean()),
             "response_length/mean": float(ro.lengths().mean()),
             "response_length/max": float(ro.lengths().max()),
             "batch/groups_kept": float(keep_groups.sum()),
             "batch/groups_all_correct": float((group_mean == 1).sum()),
             "batch/groups_all_wrong": float((group_mean == 0).sum()),
             "actor/lr": cfg.lr, "intervention/aent_coef": self.aent.coef_}
        adv_all = advantages(torch.tensor(rewards), group.tolist(), cfg.algo, warn_singletons=False)
        adv_all = adv_all.to(torch.float32).to(self.device)[:, None]
        if cfg.filter_groups and cfg.algo == "reinforce++":  # batch statistics over the kept responses
            kept = keep_groups[group]
            adv_all = torch.zeros_like(adv_all)
            if kept.any():
                kept_adv = advantages(torch.tensor(rewards[kept]), group[kept].tolist(), cfg.algo)
                adv_all[torch.as_tensor(kept, device=self.device)] = kept_adv.to(adv_all)[:, None]
        cov = token_covariance(old_logp_all, adv_all, valid_all)
        m.update(covariance_summary(cov, valid_all))
        m["cov/response_level"] = response_level_covariance(old_logp_all, valid_all, adv_all, group)
        for name, c in covariance_by_difficulty(old_logp_all, valid_all, adv_all, group, group_mean[group]).items():
            m[f"cov/response_level/{name}"] = c
        rows = torch.as_tensor(np.nonzero(keep_groups[group])[0], device=self.device)
        self.silent_steps_ += int(not len(rows) or not bool(adv_all[rows].ne(0).any()))  # every advantage 0
        icfg = replace(self.icfg, aent_coef=self.aent.coef_) if cfg.intervention == "aent" else self.icfg
        if not cfg.ppo_clip:  # -A r: the ratio's gradient at r = 1 is vanilla policy gradient's
            icfg = replace(icfg, clip_low=float("inf"), clip_high=float("inf"), dual_clip_c=None)
        infos = []
        if len(rows):
            self.model.train()
            for _ in range(cfg.ppo_epochs):
                perm = rows[torch.randperm(len(rows), generator=self.gen, device=self.device)]
                for mb in perm.chunk(cfg.minibatches):
                    sub = Rollout(ro.prompts[mb], ro.responses[mb], ro.mask[mb])
                    logp, ent, logits = score(self.model, sub, cfg.temperature)
                    cl = (clamped_entropy(logits / cfg.temperature, icfg.aent_clamp_p)
                          if cfg.intervention == "aent" else None)
                    loss, info = policy_loss(logp, old_logp_all[mb], adv_all[mb], valid_all[mb], icfg,
                                             entropy=ent, clamped_entropy=cl, old_entropy=old_ent_all[mb],
                                             generator=self.select_gen)
                    self.opt.zero_grad(set_to_none=True)
                    loss.backward()
                    info["grad_norm"] = float(torch.nn.utils.clip_grad_norm_(
                        self.model.parameters(), cfg.max_grad_norm if cfg.max_grad_norm > 0 else float("inf")))
                    self.opt.step()
                    infos.append(info)
            self.model.eval()
        if cfg.intervention == "aent":
            self.aent.update(h_clamped)
        mean = (lambda k: float(np.mean([i[k] for i in infos]))) if infos else (lambda k: 0.0)
        m.update({"actor/pg_loss": mean("pg_loss"), "actor/pg_clipfrac": mean("clipfrac"),
                  "actor/ppo_kl": mean("ppo_kl"), "actor/grad_norm": mean("grad_norm"),
                  "intervention/n_selected": float(sum(i["n_selected"] for i in infos)),
                  "intervention/mean_weight": mean("mean_weight") if infos else 1.0})
        with torch.no_grad():
            _, new_ent, logits_after = score(self.model, ro, cfg.temperature)
        m["actor/entropy_after"] = float(token_mean(new_ent, valid_all))
        m["actor/entropy_delta"] = m["actor/entropy_after"] - m["actor/entropy"]
        m.update(batch_predictions(logits_before, logits_after, ro.responses, adv_all, valid_all, cfg.temperature,
                                   cfg.lr * len(infos)))
        return m

    def validate(self, step: int) -> dict:
        import torch

        from entropylaw.lab.rollout import generate, score
        from entropylaw.probing.losses import token_mean

        cfg, name = self.cfg, self.task.name
        terms = self.task.val_set(cfg.val_size)
        self.model.eval()
        greedy = generate(self.model, self._prompts(terms), self.max_new, self.tok.eos_id, self.tok.pad_id,
                          greedy=True)
        rep = np.repeat(terms, cfg.val_samples, axis=0)
        gen = torch.Generator(device=self.device).manual_seed(cfg.seed * 1_000_003 + step)
        sampled = generate(self.model, self._prompts(rep), self.max_new, self.tok.eos_id, self.tok.pad_id,
                           cfg.temperature, generator=gen)
        with torch.no_grad():
            _, ent, _ = score(self.model, sampled, cfg.temperature)
        return {f"val-core/{name}/acc/mean@{cfg.val_samples}": float(self._rewards(rep, sampled).mean()),
                f"val-aux/{name}/acc/greedy": float(self._rewards(terms, greedy).mean()),
                f"val-aux/{name}/entropy": float(token_mean(ent, sampled.mask.bool())),
                f"val-aux/{name}/response_length": float(sampled.lengths().mean())}

    # ---- checkpoints --------------------------------------------------------------
    def _rollout_lines(self, step: int) -> list[str]:
        """A fresh on-policy batch of the checkpoint's model in the probe's rollout format
        (prompt_id, prompt_ids, response_ids, reward, old_logprobs), so ``entropylaw probe``
        can replay it. Own RNG streams: training is unaffected."""
        import torch

        from entropylaw.lab.rollout import generate, score

        cfg = self.cfg
        terms = np.repeat(self.task.sample(cfg.prompts_per_step, np.random.default_rng([cfg.seed, 3, step])),
                          cfg.group_size, axis=0)
        gen = torch.Generator(device=self.device).manual_seed(cfg.seed * 1_000_033 + step + 3)
        self.model.eval()
        ro = generate(self.model, self._prompts(terms), self.max_new, self.tok.eos_id, self.tok.pad_id,
                      cfg.temperature, generator=gen)
        with torch.no_grad():
            old_logp = score(self.model, ro, cfg.temperature)[0]
        rewards = self._rewards(terms, ro)
        lines = []
        for i in range(len(terms)):
            n = int(ro.mask[i].sum())
            lines.append(json.dumps({"prompt_id": self.task.prompt_text(terms[i]), "prompt_ids": ro.prompts[i].tolist(),
                                     "response_ids": ro.responses[i, :n].tolist(), "reward": float(rewards[i]),
                                     "old_logprobs": [round(float(x), 7) for x in old_logp[i, :n]]}))
        return lines

    def save_checkpoint(self, step: int) -> Path:
        import torch

        final = self.out_dir / "checkpoints" / f"global_step_{step}"
        tmp = final.with_name(final.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        self.model.save_pretrained(str(tmp), safe_serialization=True)
        self.tok.save(tmp)
        (tmp / "lab.json").write_text(json.dumps({"step": step, "run": self.cfg.run_name, "task": self.task.config(),
                                                  "config": self.cfg.to_dict()}, indent=1))
        (tmp / "rollouts.jsonl").write_text("".join(line + "\n" for line in self._rollout_lines(step)))
        torch.save({"step": step, "optimizer": self.opt.state_dict(), "generator": self.gen.get_state(),
                    "select_generator": self.select_gen.get_state(),
                    "np_rng": self.np_rng.bit_generator.state, "aent": (self.aent.coef_, self.aent.n_updates_),
                    "silent_steps": self.silent_steps_, "silent_from": self.silent_from_},
                   tmp / "trainer_state.pt")
        shutil.rmtree(final, ignore_errors=True)
        tmp.rename(final)
        return final

    # ---- the loop -----------------------------------------------------------------
    def run(self, stop_after: int | None = None) -> dict:
        """Train to ``cfg.steps`` (resuming if a checkpoint exists). ``stop_after`` ends the
        process-equivalent early without finishing (what an interruption leaves behind)."""
        from entropylaw.progress import Progress

        done = self.out_dir / DONE
        self._check_out_dir()
        if done.exists():
            return json.loads(done.read_text())
        t_start = time.perf_counter()
        ckpt = self._init_state()
        log = MultiLogger(self.out_dir, self.loggers, self.keys, run_name=self.cfg.run_name,
                          config=self.cfg.to_dict(), resume=ckpt is not None)
        if ckpt is not None:
            truncate_after(self.out_dir, self.step)
        else:
            log.log(0, self.validate(0))
            self.save_checkpoint(0)
            log.flush()
        bar = Progress(self.cfg.steps, self.cfg.run_name, "steps", initial=self.step, enabled=self.progress)
        first = self.step
        last: dict = {}
        try:
            while self.step < self.cfg.steps:
                t0 = time.perf_counter()
                self.step += 1
                m = self._train_step()
                if self.step % self.cfg.val_every == 0 or self.step == self.cfg.steps:
                    m.update(self.validate(self.step))
                m["timing_s/step"] = time.perf_counter() - t0
                log.log(self.step, m)
                last.update(m)
                if self.step % self.cfg.ckpt_every == 0 or self.step == self.cfg.steps:
                    self.save_checkpoint(self.step)
                    log.flush()
                bar.update(1)
                bar.set_postfix(H=f"{m['actor/entropy']:.3f}", score=f"{m['critic/score/mean']:.2f}")
                if stop_after is not None and self.step >= stop_after and self.step < self.cfg.steps:
                    log.buffer.clear()  # what a killed process loses: rows after the last checkpoint
                    return {"interrupted_at": self.step}
        except BaseException:
            log.buffer.clear()  # never write rows past the last checkpoint
            raise
        finally:
            bar.close()
            log.close()
        summary = {"run": self.cfg.run_name, "steps": self.step, "device": self.device,
                   "wall_s": time.perf_counter() - t_start, "final": last,
                   "steps_trained": self.step - first, "steps_without_signal": self.silent_steps_,
                   "steps_without_signal_after": self.silent_from_}
        done.write_text(json.dumps(summary, indent=1))
        return summary
