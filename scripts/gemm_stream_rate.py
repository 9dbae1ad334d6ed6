#!/usr/bin/env python3
r"""How fast a measured bundle's GEMMs read memory, as a fraction of the GPU's nominal rate.

A GEMM of m tokens with a k x n weight moves (m k + k n + m n) 16-bit values. At few
tokens it is bound by memory, so those bytes over its measured time is the rate the
kernel read at. This prints that rate, over the catalog's nominal memory bandwidth, for
each of a dense table's GEMMs (qkv_proj, o_proj, gate_up_proj, down_proj) at 1 to 128
tokens. The analytic model streams weights at the catalog's `memory_stream_efficiency`
where a GPU has one (else the fitted `memory_efficiency`); where the figures below sit
under it, the analytic GEMMs are fast there.

    scripts/gemm_stream_rate.py BUNDLE_TP_DIR MODEL HARDWARE
    scripts/gemm_stream_rate.py ../shared/data/profiles/llmservingsim/perf/RTX4090/meta-llama/Llama-3.1-8B/bf16/tp1 \
        llama-3.1-8b RTX-4090

MODEL is a folder of models/ (its config.json), HARDWARE a file of
cluster_configs/hardware/. Reads the bundle in place; exit code 2 on a missing file,
kernel or field. TP 1 tables only: the shapes are the whole model's.
"""

import csv
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOKENS = (1, 2, 4, 8, 16, 32, 64, 128)
BYTES_PER_VALUE = 2


def fail(message):
    print(f"gemm_stream_rate: {message}", file=sys.stderr)
    sys.exit(2)


def gemm_shapes(model):
    path = ROOT / "models" / model / "config.json"
    try:
        config = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        fail(f"{path}: {error}")
    try:
        hidden = config["hidden_size"]
        heads = config["num_attention_heads"]
        kv_heads = config.get("num_key_value_heads", heads)
        head_dim = config.get("head_dim") or hidden // heads
        inter = config["intermediate_size"]
    except KeyError as error:
        fail(f"{path}: lacks {error}")
    # (k, n) of each projection, as vLLM fuses them (QKVParallelLinear, MergedColumnParallelLinear).
    return {
        "qkv_proj": (hidden, (heads + 2 * kv_heads) * head_dim),
        "o_proj": (heads * head_dim, hidden),
        "gate_up_proj": (hidden, 2 * inter),
        "down_proj": (inter, hidden),
    }


def nominal_bandwidth(hardware):
    path = ROOT / "cluster_configs" / "hardware" / f"{hardware}.yaml"
    try:
        text = path.read_text()
    except OSError as error:
        fail(f"{path}: {error}")
    match = re.search(r"^memory_bandwidth_bytes_per_s:\s*\{value:\s*([0-9.eE+]+)", text, re.M)
    if not match:
        fail(f"{path}: no memory_bandwidth_bytes_per_s value")
    stream = re.search(r"^memory_stream_efficiency:\s*\{value:\s*([0-9.eE+]+)", text, re.M)
    return float(match.group(1)), float(stream.group(1)) if stream else None


def dense_times(tp_dir):
    path = Path(tp_dir) / "dense.csv"
    try:
        with path.open(newline="") as file:
            return {(row["layer"], int(row["tokens"])): float(row["time_us"])
                    for row in csv.DictReader(file)}
    except (OSError, KeyError, ValueError) as error:
        fail(f"{path}: {error}")


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0)
    if len(sys.argv) != 4:
        fail("usage: scripts/gemm_stream_rate.py BUNDLE_TP_DIR MODEL HARDWARE (--help)")
    tp_dir, model, hardware = sys.argv[1:]
    shapes = gemm_shapes(model)
    bandwidth, stream = nominal_bandwidth(hardware)
    times = dense_times(tp_dir)
    note = f", the catalog streams at {stream}" if stream else ""
    print(f"{tp_dir}: bytes moved over measured time / {bandwidth / 1e9:.0f} GB/s nominal{note}")
    print(f"{'kernel':<14}{'k':>7}{'n':>7}  " + "".join(f"{f'm={m}':>7}" for m in TOKENS))
    for kernel, (k, n) in shapes.items():
        cells = []
        for m in TOKENS:
            us = times.get((kernel, m))
            if us is None:
                cells.append(f"{'-':>7}")
                continue
            moved = (m * k + k * n + m * n) * BYTES_PER_VALUE
            cells.append(f"{moved / (us * 1e-6) / bandwidth:>7.2f}")
        if all(c.strip() == "-" for c in cells):
            fail(f"{tp_dir}/dense.csv: no rows of kernel '{kernel}'")
        print(f"{kernel:<14}{k:>7}{n:>7}  " + "".join(cells))


if __name__ == "__main__":
    main()
