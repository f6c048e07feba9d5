"""Offline resource report of the fused statistics kernel for sm_90a (H100/H200), no GPU needed.

Compiles every autotune config of entropylaw.probing.triton_kernels with the local Triton for a
Hopper target, runs the bundled ptxas with -v on the PTX, and prints per config: registers,
spill bytes, shared memory, and whether wgmma (Hopper's async tensor-core MMA) and cp.async are in
the PTX. The local Triton may differ from the device's (CPU CI: 3.9; the lent H100: 3.6), so the
numbers are leads, not the device's.

    python analysis/kernel_resources.py [--dtype bf16|fp32]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp32"])
    args = ap.parse_args(argv)
    if os.environ.get("TRITON_INTERPRET") == "1":
        print("kernel_resources: unset TRITON_INTERPRET (it compiles for the GPU)")
        return 1
    try:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
        from triton.runtime.jit import JITFunction
    except ImportError:
        print("kernel_resources: needs triton")
        return 0
    from entropylaw.probing import triton_kernels as tk

    bindir = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    ptxas = next((os.path.join(bindir, p) for p in ("ptxas-blackwell", "ptxas")
                  if os.path.exists(os.path.join(bindir, p))), None)
    fn = JITFunction(tk._stats_kernel)
    ty = "*bf16" if args.dtype == "bf16" else "*fp32"
    sig = {n: "i32" for n in fn.arg_names}
    sig.update(h_ptr=ty, w_ptr=ty, y_ptr="*i32", part_ptr="*fp32", inv_temp="fp32")
    consts = ("stride_hd", "stride_wd", "BLOCK_N", "BLOCK_V", "BLOCK_D", "FLATTEN", "GROUP_N", "USE_TMA",
              "PRECISION", "UPCAST", "TMA_OK")
    sig.update({n: "constexpr" for n in consts})
    div = [["tt.divisibility", 16]]
    attrs = {(i,): div for i, n in enumerate(fn.arg_names)
             if n in ("h_ptr", "w_ptr", "y_ptr", "part_ptr", "N", "V", "D", "stride_hn", "stride_wv", "chunk")}
    configs = (list(dict.fromkeys(tk.CONFIGS_16 + tk.CONFIGS_16_LARGE_D)) if args.dtype == "bf16"
               else tk.CONFIGS_32)
    print(f"triton {triton.__version__}, target sm_90a, {args.dtype} inputs, ptxas {ptxas or 'not found'}")
    print(f"{'block_n,v,d warps stages flatten group tma':<44}{'regs':>6}{'spill B':>9}{'smem KB':>9}  ptx")
    with tempfile.TemporaryDirectory() as tmp:
        for bn, bv, bd, nw, ns, flat, group, tma in configs:
            const = dict(stride_hd=1, stride_wd=1, BLOCK_N=bn, BLOCK_V=bv, BLOCK_D=bd, FLATTEN=flat, GROUP_N=group,
                         USE_TMA=tma, PRECISION=None if args.dtype == "bf16" else "ieee", UPCAST=False,
                         TMA_OK=int(tma))
            s = dict(sig)
            if tma:
                s.update(h_desc=f"tensordesc<bf16[{bn},{bd}]>", w_desc=f"tensordesc<bf16[{bv},{bd}]>")
            else:
                s.update(h_desc="constexpr", w_desc="constexpr")
                const.update(h_desc=None, w_desc=None)
            label = f"{bn},{bv},{bd} {nw} {ns} {flat} {group} {tma}"
            t0 = time.time()
            try:
                k = triton.compile(ASTSource(fn, s, const, attrs), target=GPUTarget("cuda", 90, 32),
                                   options={"num_warps": nw, "num_stages": ns})
            except Exception as err:  # report and go on: one config failing is itself the finding
                print(f"{label:<44}compile failed: {type(err).__name__}: {str(err).splitlines()[0][:100]}")
                continue
            ptx = k.asm["ptx"]
            regs = spill = "?"
            if ptxas:
                path = os.path.join(tmp, "k.ptx")
                with open(path, "w") as f:
                    f.write(ptx)
                r = subprocess.run([ptxas, "-v", "--gpu-name", "sm_90a", path, "-o", path + ".o"],
                                   capture_output=True, text=True)
                for line in (r.stdout + r.stderr).splitlines():
                    if "Used" in line and "registers" in line:
                        regs = line.split("Used")[1].split("registers")[0].strip()
                    if "spill stores" in line:
                        spill = line.split("bytes spill stores")[0].split(",")[-1].strip()
            feats = " ".join(f for f in ("wgmma", "cp.async", "cp.async.bulk.tensor") if f in ptx)
            print(f"{label:<44}{regs:>6}{spill:>9}{k.metadata.shared / 1024:>9.0f}  {feats} "
                  f"({time.time() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
