"""How trainers turn per-token entropies into the one number they log (pure arithmetic).

Input is a :class:`Tokens`: per sequence, in rollout order, the entropy (nats) of the
policy's next-token distribution at each response token (``response``: with the
sampling temperature; ``response_t1``: at temperature 1), at each prompt token after the
first (``prompt``), at the positions one to the right of each response token
(``shifted``) and at the padding positions of the right-padded step batch (``padding``).
Each convention below is one function ``Tokens -> float`` and cites where a trainer does it.

>>> import numpy as np
>>> t = Tokens(response=[np.array([1.0, 3.0]), np.array([2.0])])
>>> token_mean(t), seq_mean_token_mean(t), seq_mean_token_sum(t)
(2.0, 2.0, 3.0)
>>> t = Tokens(response=[np.array([1.0, 1.0, 1.0]), np.array([4.0])])
>>> token_mean(t), seq_mean_token_mean(t)
(1.75, 2.5)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Tokens:
    response: list
    response_t1: list | None = None
    prompt: list | None = None
    shifted: list | None = None
    padding: list | None = None
    # veRL's dynamic-batch packing order (sequence indices in packed order), for the PR #1943 bug
    packed_order: list | None = None
    extra: dict = field(default_factory=dict)

    def lengths(self) -> np.ndarray:
        return np.array([len(r) for r in self.response])


def _pool(parts) -> np.ndarray:
    return np.concatenate([np.asarray(p, dtype=np.float64) for p in parts]) if parts else np.zeros(0)


def token_mean(t: Tokens) -> float:
    """All response tokens of the step pooled.

    TRL GRPOTrainer._compute_loss, ``global_masked_mean(entropies)`` (one micro-batch, one
    process); veRL core_algos.agg_loss ``loss_agg_mode="token-mean"`` on the step's
    ``entropys`` (ray_trainer.fit, ``actor/entropy``); OpenRLHF >= 0.9.8 ``entropy_loss``
    (ActorPPOTrainer.ppo_train weighs each micro-batch's value by its token count; from 0.10.3
    the micro-batch value is aggregate_loss's masked sum over the step's token count); NeMo-RL
    ClippedPGLossFn ``approx_entropy`` (each micro-batch's sum over the global batch's valid
    tokens, the micro-batches summed), of the sampled tokens' importance-weighted surprisal;
    slime ``train/entropy_loss`` with ``--calculate-per-token-loss`` (train_metric_utils
    reduce_train_step_metrics divides the summed tokens' entropy by the step's token count);
    ROLL ``critic/entropy/mean`` (rlvr_pipeline's agg_loss ``"token-mean"`` of the recomputed old
    log-probs' entropy over the step's whole batch, before the update; 0 where it recomputes none);
    AReaL ``ppo_actor/update/entropy/avg`` (stats_tracker's ``_avg_of``: the masked entropy summed over
    every micro-batch of the update's ``ppo_n_minibatches`` and the data-parallel ranks, over the summed
    ``n_valid_tokens`` mask; each minibatch's forward pass after the earlier ones' optimizer steps).
    """
    return float(_pool(t.response).mean())


def seq_mean_token_mean(t: Tokens) -> float:
    """Each sequence's token mean, then the mean over sequences.

    veRL core_algos.agg_loss ``"seq-mean-token-mean"``; TRL's per-sequence ``masked_seq_mean``;
    slime ``train/entropy_loss`` by default (loss.py's ``sum_of_sample_mean`` of each sample's
    token mean, summed over the optimizer step's samples and divided by its global batch size).
    """
    return float(np.mean([np.mean(r) for r in t.response]))


def seq_mean_token_sum(t: Tokens) -> float:
    """Each sequence's token sum, then the mean over sequences: veRL agg_loss ``"seq-mean-token-sum"``."""
    return float(np.mean([np.sum(r) for r in t.response]))


def seq_mean_token_sum_norm(t: Tokens, horizon: int | None = None) -> float:
    """veRL agg_loss ``"seq-mean-token-sum-norm"`` (Dr. GRPO): all token sums over the padded
    response length (``loss_mask.shape[-1]``; ``horizon``, default the longest response),
    then the mean over sequences (veRL >= 0.5 divides each sequence's sum by
    ``loss_scale_factor`` and takes the sequence mean)."""
    T = horizon or int(t.lengths().max())
    return float(np.mean([np.sum(r) / T for r in t.response]))


def microbatch_mean(t: Tokens, groups: list) -> float:
    """Mean of the micro-batches' token means. ``groups``: micro-batch id per sequence.

    TRL GRPOTrainer.log averages ``_metrics["entropy"]`` over the gradient-accumulation
    micro-batches of a step; veRL dp_actor.update_policy appends each micro-batch's
    aggregated entropy to ``metrics`` and reduce_metrics takes their mean; OpenRLHF before
    0.9.8 logs ``entropy_loss`` as each micro-batch's masked_mean, averaged over the
    micro-batches (and PPO epochs) of the step by ActorPPOTrainer.ppo_train.
    """
    ids = sorted(set(groups))
    return float(np.mean([_pool([r for r, g in zip(t.response, groups) if g == i]).mean() for i in ids]))


def without_temperature(t: Tokens) -> float:
    """Token mean of the entropy at temperature 1 although the policy sampled at T != 1
    (a trainer that logs the entropy of the raw logits)."""
    return float(_pool(t.response_t1).mean())


def padding_included(t: Tokens) -> float:
    """Token mean over the right-padded response block, padding positions included:
    TRL PPOTrainer before PR #6121, OnlineDPOTrainer (TRL issue #6803), open-instruct (#756)."""
    return float(_pool(list(t.response) + list(t.padding)).mean())


def prompt_included(t: Tokens) -> float:
    """Token mean over the positions predicting every token after the first, prompt tokens
    included (a completion-only mask forgotten)."""
    return float(_pool(list(t.prompt) + list(t.response)).mean())


def shifted_by_one(t: Tokens) -> float:
    """Token mean with the response mask one position off: the distribution at each response
    token's own position (which predicts the next token) instead of the one before it."""
    return float(_pool(t.shifted).mean())


def sft_attention_mask(t: Tokens) -> float:
    """TRL SFTTrainer.compute_loss before PR #5620: ``entropy_from_logits(outputs.logits)``
    averaged under the *attention* mask, i.e. every position of the sequence (prompt tokens
    in, and the mask not shifted: the last position, which predicts past the end, counts too).
    """
    return float(_pool(list(t.prompt) + list(t.response) + [s[-1:] for s in t.shifted]).mean())


def dynamic_batch_unreordered(t: Tokens) -> float:
    """veRL before PR #1943: with ``use_dynamic_bsz`` the entropy rows come back in packed
    order (seqlen_balancing.rearrange_micro_batches) and were masked with the response mask
    of the original order. Row i holds sequence ``packed_order[i]``'s entropies (zeros past
    its end, as unpadded rows are re-padded), masked by sequence i's response length.

    >>> t = Tokens(response=[np.array([1.0, 1.0]), np.array([5.0])], packed_order=[1, 0])
    >>> dynamic_batch_unreordered(t)  # row 0: seq 1 [5, 0] under mask of length 2; row 1: seq 0 [1] under length 1
    2.0
    """
    total = 0.0
    for i, j in enumerate(t.packed_order):
        n = min(len(t.response[i]), len(t.response[j]))
        total += float(np.sum(t.response[j][:n]))
    return total / float(t.lengths().sum())
