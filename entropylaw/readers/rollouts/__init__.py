"""Rollouts: the responses a trainer sampled, read into one frame and encoded to token ids.

The rollout family of ingest (torch-free; the encoding takes any tokenizer object and
imports no transformers):

- :mod:`~entropylaw.readers.rollouts.formats`: the one registry of rollout formats and
  :func:`~entropylaw.readers.rollouts.formats.read_rollouts` (the format is recognised)
- :mod:`~entropylaw.readers.rollouts.common`: the one JSONL reader, group ids, the step checks
- :mod:`~entropylaw.readers.rollouts.verl_dump`: veRL rollout dumps (``<step>.jsonl``)
- :mod:`~entropylaw.readers.rollouts.trl_completions`: TRL completion logs (parquet) and the
  same table logged to W&B
- :mod:`~entropylaw.readers.rollouts.own`: the project's rollout file (JSONL/parquet) and prompt files
- :mod:`~entropylaw.readers.rollouts.encode`: rows to token ids (:class:`Sequence`), the
  chat-template rule shared by ``probe`` and ``audit``, micro-batches
- :mod:`~entropylaw.readers.rollouts.write`: writing sequences back as a rollout file

The probe's columns: ``prompt_id``; ``prompt`` (text or chat messages) or ``prompt_ids``;
``response`` or ``response_ids``; ``reward`` (finite number); optional ``advantage``,
``old_logprobs`` (one per response token), ``answer``. Responses of one ``prompt_id`` form
a group. Every problem is an :class:`~entropylaw.errors.EntropyLawError` naming file and row.
"""
