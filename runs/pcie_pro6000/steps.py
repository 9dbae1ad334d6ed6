#!/usr/bin/env python3
"""Where each layout of the PCIe study spends its steps (README.md beside this file, "Why").

For every point of a finished sweep (study.sh's output), re-runs the point's kept run -- its
config at its highest passing rate, which `fleetsim sweep` documents to equal the point's own
run -- with --trace-steps, and prints per layout: the median duration of decode-only steps of
16-32 sequences (per instance, or per DP rank's batch), the median duration of steps carrying
2,048 or more prefill tokens per 1,000 of them, how many of the run's steps carry prefill,
the KV pool per instance and its peak use, and preemptions.
  /usr/bin/python3 runs/pcie_pro6000/steps.py [out folder, default runs/pcie_pro6000/out]
Needs h5py; FLEETSIM names the binary (default build/sim/fleetsim).
"""
import os
import statistics
import subprocess
import sys

import h5py

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
fleetsim = os.environ.get("FLEETSIM", os.path.join(root, "build/sim/fleetsim"))
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "out")
workload = os.path.join(here, "chat.yaml")

print("| model | layout | rate (req/s) | decode step, 16-32 seqs (ms) | prefill step per 1k tokens (ms) "
      "| steps with prefill | KV blocks per instance | peak KV use | preemptions |")
print("|---|---|---|---|---|---|---|---|---|")
for name in ("qwen32b", "qwen30b_a3b"):
    listing = subprocess.run([fleetsim, "sweep", os.path.join(here, f"sweep_{name}.yaml"), "--list"],
                             check=True, capture_output=True, text=True).stdout
    layouts = {int(line.split(":")[0].split()[1]): line.split(": ", 1)[1]
               for line in listing.splitlines() if line.startswith("point ")}
    for point, layout in sorted(layouts.items()):
        kept = os.path.join(out, name, "points", f"point-{point}.h5")
        with h5py.File(kept, "r") as f:
            rate = float(f["provenance"].attrs["rate_scale"])
        traced = os.path.join(out, name, "points", f"point-{point}.steps.h5")
        subprocess.run([fleetsim, "run", "--cluster", os.path.join(out, name, "points", f"point-{point}.yaml"),
                        "--workload", workload, "--rate-scale", repr(rate), "--duration", "60",
                        "--seed", "0", "--trace-steps", "--output", traced],
                       check=True, capture_output=True)
        with h5py.File(traced, "r") as f:
            s = f["steps"][:]
            pool = f["instances"]["pool_blocks"][:]
            dp = f["instances"]["dp"][:]
        # A lock-step of a DP instance has one row per rank, all with its duration: count it once.
        lock = {}
        for r in s:
            key = (int(r["instance"]), int(r["start_ns"]))
            step = lock.setdefault(key, {"d": int(r["duration_ns"]), "pf": 0, "dec": 0, "maxdec": 0})
            step["pf"] += int(r["prefill_tokens"])
            step["dec"] += int(r["decodes"])
            step["maxdec"] = max(step["maxdec"], int(r["decodes"]))
        steps = list(lock.values())
        decode = [x["d"] / 1e6 for x in steps if x["pf"] == 0 and 16 <= x["maxdec"] <= 32]
        prefill = [x["d"] / 1e6 / (x["pf"] / 1000) for x in steps if x["pf"] >= 2048]
        with_prefill = sum(1 for x in steps if x["pf"] > 0) / len(steps)
        per_instance = int(pool[0])  # pool_blocks of a DP instance sum its ranks
        med = lambda v: f"{statistics.median(v):.1f}" if v else "-"
        print(f"| {name} | {layout} | {rate * 10:.1f} | {med(decode)} | {med(prefill)} | {100 * with_prefill:.0f} % "
              f"| {per_instance:,}{' (' + str(int(dp[0])) + ' ranks)' if dp[0] > 1 else ''} "
              f"| {100 * max(s['kv_usage']):.0f} % | {int(sum(s['preemptions']))} |")
