"""Checks a Chrome/Perfetto trace against the Trace Event Format (the JSON object form
that chrome://tracing and ui.perfetto.dev load: "Trace Event Format", Google, the
document both tools' importers follow), and against the run it came from.

    /usr/bin/python3 tests/report/check_trace.py RUN.trace.json STEPS REQUESTS

STEPS and REQUESTS are the run's row counts (from h5dump or the CSV export): every step
must be one complete event, every request one async span. Exits 1 naming the first
problem."""
import json
import sys

PHASES_WITH_TS = {"X", "B", "E", "b", "e", "n", "i", "I", "C"}


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main(path, steps, requests):
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)  # strict JSON: NaN or Infinity would not parse
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        fail("not the object form: no traceEvents list")
    if trace.get("displayTimeUnit") not in (None, "ms", "ns"):
        fail("displayTimeUnit must be ms or ns")
    open_spans = {}
    counts = {"X": 0, "b": 0, "e": 0}
    processes, threads = set(), set()
    for i, event in enumerate(trace["traceEvents"]):
        where = f"event {i} ({event})"
        phase = event.get("ph")
        if not isinstance(phase, str) or not isinstance(event.get("name"), str):
            fail(where + ": needs a string ph and name")
        if not isinstance(event.get("pid"), int) or not isinstance(event.get("tid"), int):
            fail(where + ": pid and tid must be integers")
        if phase == "M":
            if event["name"] not in ("process_name", "thread_name", "process_sort_index",
                                     "thread_sort_index", "process_labels"):
                fail(where + ": unknown metadata event")
            if not isinstance(event.get("args", {}).get("name"), str):
                fail(where + ": metadata needs args.name")
            (processes if event["name"] == "process_name" else threads).add(
                (event["pid"], event["tid"]) if event["name"] == "thread_name" else event["pid"])
            continue
        if phase not in PHASES_WITH_TS:
            fail(where + ": unknown phase " + phase)
        ts = event.get("ts")
        if not isinstance(ts, (int, float)) or ts < 0:
            fail(where + ": ts must be a number of microseconds >= 0")
        if event["pid"] not in processes:
            fail(where + ": its process has no process_name")
        counts[phase] = counts.get(phase, 0) + 1
        if phase == "X":
            if not isinstance(event.get("dur"), (int, float)) or event["dur"] < 0:
                fail(where + ": a complete event needs dur >= 0")
            if (event["pid"], event["tid"]) not in threads:
                fail(where + ": its thread has no thread_name")
        elif phase in ("b", "e"):
            if "cat" not in event or "id" not in event:
                fail(where + ": async events need cat and id")
            key = (event["cat"], event["id"], event["name"])
            if phase == "b":
                if key in open_spans:
                    fail(where + ": span begun twice")
                open_spans[key] = ts
            else:
                if key not in open_spans:
                    fail(where + ": span ended without a begin")
                if ts < open_spans.pop(key):
                    fail(where + ": span ends before it begins")
    if open_spans:
        fail(f"{len(open_spans)} spans never end, e.g. {next(iter(open_spans))}")
    if counts["X"] != steps:
        fail(f"{counts['X']} step slices for {steps} rows of /steps")
    outer = sum(1 for e in trace["traceEvents"] if e.get("ph") == "b" and e["name"].startswith("request "))
    if outer != requests:
        fail(f"{outer} request spans for {requests} rows of /requests")
    print(f"trace ok: {counts['X']} steps, {outer} requests, {len(processes)} processes, "
          f"{len(threads)} threads")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
