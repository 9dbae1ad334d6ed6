#!/usr/bin/env python3
"""Bus bandwidth of large NCCL collectives: the measured tables against the model.

`fleetsim bundle compare-collectives --system S --json` gives, per row, the measured time
and the model's. A time difference between two large sizes leaves out the latency, so
the bytes between them over that difference is a bandwidth; nccl-tests' bus-bandwidth
factor (2 (n-1) / n for all-reduce, (n-1) / n for the others) makes it the bus bandwidth
of the links. This prints it, measured and modelled, per operation and GPU count, from
the 128 MiB and 256 MiB rows (fp16), and their ratio: where the ratio is below 1 the model
carries more than the GPUs did.

    scripts/collective_bus_bandwidth.py [--fleetsim build/sim/fleetsim] [--system h100_sxm ...]

Exit code 2 when fleetsim fails or a row is missing.
"""

import argparse
import json
import subprocess
import sys

LOW, HIGH = 128 << 20, 256 << 20
FACTOR = {
    "nccl all_reduce": lambda n: 2 * (n - 1) / n,
    "nccl all_gather": lambda n: (n - 1) / n,
    "nccl reduce_scatter": lambda n: (n - 1) / n,
    "nccl alltoall": lambda n: (n - 1) / n,
}


def fail(message):
    print(f"collective_bus_bandwidth: {message}", file=sys.stderr)
    sys.exit(2)


def rows_of(fleetsim, system):
    run = subprocess.run(
        [fleetsim, "bundle", "compare-collectives", "--system", system, "--json"],
        capture_output=True, text=True, check=False)
    if run.returncode != 0:
        fail(f"{fleetsim} bundle compare-collectives --system {system}: {run.stderr.strip()}")
    rows = {}
    for r in json.loads(run.stdout)["rows"]:
        if r["dtype"] == "half":
            rows[(r["operation"], r["gpus"], int(r["bytes"]))] = (r["measured_us"], r["model_us"])
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fleetsim", default="build/sim/fleetsim")
    parser.add_argument("--system", nargs="+", default=["h200_sxm", "h100_sxm", "a100_sxm"])
    args = parser.parse_args()
    for system in args.system:
        rows = rows_of(args.fleetsim, system)
        print(f"{system}: bus bandwidth from {LOW >> 20} to {HIGH >> 20} MiB, GB/s "
              "(measured / model = ratio)")
        for gpus in (2, 4, 8):
            cells = []
            for op, factor in FACTOR.items():
                try:
                    low, high = rows[(op, gpus, LOW)], rows[(op, gpus, HIGH)]
                except KeyError:
                    fail(f"{system}: no {op} row for {gpus} GPUs at {LOW} and {HIGH} bytes")
                moved = (HIGH - LOW) * factor(gpus) / 1e3  # bytes per us -> GB/s
                measured, model = moved / (high[0] - low[0]), moved / (high[1] - low[1])
                cells.append(f"{op.split()[1]} {measured:.0f} / {model:.0f} = {measured / model:.2f}")
            print(f"  {gpus} GPUs: " + "; ".join(cells))


if __name__ == "__main__":
    main()
