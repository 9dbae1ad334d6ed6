#!/usr/bin/env python3
"""Cross-check two independent measurements of NCCL all-reduce on the same GPU node.

`fleetsim bundle compare-collectives` judges the collective model on aiconfigurator's
nccl-tests tables. When a table disagrees with the model, the first question is whether the
table is the GPU's or one host's. Vidur's profiles time the same operation on other DGX
nodes (torch.distributed.all_reduce, eager, fp16; its own harness and NCCL version), so this
script reads both, in place under ../shared/data, and prints Vidur's median time over the
nccl-tests time (log-log interpolated between the table's sizes) per GPU count and size
band. Only sizes from 1 MiB: below it an eager call's host cost (Vidur's floor is 20-46 us)
hides the device time.

    scripts/crosscheck_allreduce.py [--data ../shared/data]

Exit code 2 when a file is missing or a row cannot be read.
"""

import argparse
import bisect
import csv
import math
import statistics
import sys
from pathlib import Path

# (Vidur node, aiconfigurator system): the same SXM boards, 8 GPUs behind NVSwitch.
PAIRS = [("a100_dgx", "a100_sxm"), ("h100_dgx", "h100_sxm")]
# Size bands, MiB: [lo, hi), the last one closed (Vidur stops at 64 MiB).
BANDS_MIB = [(1, 4), (4, 16), (16, 64)]


def fail(message):
    print(f"crosscheck_allreduce: {message}", file=sys.stderr)
    sys.exit(2)


def nccl_tests_all_reduce(system_dir):
    """{gpus: ([bytes], [us])} from the system's nccl_perf.csv (latency in ms)."""
    tables = sorted(system_dir.glob("nccl_*/nccl_perf.csv"))
    if not tables:
        fail(f"{system_dir}: no nccl_*/nccl_perf.csv")
    path = tables[0]
    points = {}
    with path.open(newline="") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            if row.get("op_name") != "all_reduce":
                continue
            try:
                width = {"half": 2, "int8": 1}[row["nccl_dtype"]]
                size = int(row["message_size"]) * width
                points.setdefault(int(row["num_gpus"]), {})[size] = float(row["latency"]) * 1e3
            except (KeyError, ValueError) as e:
                fail(f"{path}:{line}: {e}")
    return path, {n: (sorted(p), [p[s] for s in sorted(p)]) for n, p in points.items()}


def vidur_all_reduce(node_dir):
    """{gpus: [(bytes, median us)]}, one node only (devices_per_node == num_workers)."""
    path = node_dir / "all_reduce.csv"
    if not path.exists():
        fail(f"{path}: missing")
    rows = {}
    with path.open(newline="") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            try:
                n = int(row["num_workers"])
                if int(row["devices_per_node"]) != n or int(row["rank"]) != 0:
                    continue
                us = float(row["time_stats.all_reduce.median"]) * 1e3
                rows.setdefault(n, []).append((int(row["size"]), us))
            except (KeyError, ValueError) as e:
                fail(f"{path}:{line}: {e}")
    return path, rows


def interpolate(sizes, times, size):
    i = bisect.bisect_left(sizes, size)
    if i == 0 or i == len(sizes):
        return None
    if sizes[i] == size:
        return times[i]
    x0, x1 = math.log(sizes[i - 1]), math.log(sizes[i])
    t = (math.log(size) - x0) / (x1 - x0)
    return math.exp(math.log(times[i - 1]) + t * (math.log(times[i]) - math.log(times[i - 1])))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared/data"))
    args = parser.parse_args()
    data = Path(args.data)
    pairs = [(node, *nccl_tests_all_reduce(data / "profiles/aiconfigurator" / system),
              *vidur_all_reduce(data / "profiles/vidur/network" / node)) for node, system in PAIRS]
    print("Vidur median / nccl-tests, all-reduce, one node (ratio > 1: Vidur's host is slower)")
    print(f"{'node':10} {'gpus':>4} {'MiB':>9} {'sizes':>6} {'median':>7} {'min':>6} {'max':>6}")
    for node, table_path, table, vidur_path, vidur in pairs:
        for n in sorted(vidur):
            if n not in table:
                continue
            sizes, times = table[n]
            for band, (lo, hi) in enumerate(BANDS_MIB):
                closed = band == len(BANDS_MIB) - 1
                ratios = []
                for size, us in vidur[n]:
                    if lo * 2**20 <= size and (size < hi * 2**20 or (closed and size == hi * 2**20)):
                        ref = interpolate(sizes, times, size)
                        if ref:
                            ratios.append(us / ref)
                if ratios:
                    print(f"{node:10} {n:>4} {f'{lo}-{hi}':>9} {len(ratios):>6} "
                          f"{statistics.median(ratios):>7.2f} {min(ratios):>6.2f} {max(ratios):>6.2f}")
        print(f"  ({vidur_path} against {table_path})")


if __name__ == "__main__":
    main()
