"""The README's Python snippet, run as a user would run it (Debian's python3-h5py and
python3-pandas): it is cut out of README.md between its two markers, so the README and
this test cannot drift apart, run on a real run file, and then held to what the issue
asked of it: every table read, text columns as str, a unit for every column, and the
counts agreeing with /summary.

    /usr/bin/python3 tests/output/python_reader_test.py README.md RUN.h5"""
import re
import sys


def main(readme_path, run_path):
    readme = open(readme_path, encoding="utf-8").read()
    match = re.search(r"<!-- python-reader -->\s*```python\n(.*?)```", readme, re.S)
    if not match:
        sys.exit("FAIL: README.md has no python-reader snippet")
    snippet = match.group(1)
    sys.argv = ["snippet", run_path]
    scope = {"__name__": "__main__"}
    exec(compile(snippet, "README.md snippet", "exec"), scope)  # prints its tables

    read_table = scope["read_table"]
    import h5py
    with h5py.File(run_path, "r") as f:
        tables = [name for name in f if isinstance(f[name], h5py.Dataset)]
    expected = {"requests", "instances", "summary", "timeseries", "steps"}
    if set(tables) != expected:
        sys.exit(f"FAIL: the file's tables are {sorted(tables)}, the test expects {sorted(expected)}")
    for name in tables:
        frame = read_table(run_path, "/" + name)
        for column in frame.columns:
            if frame[column].dtype == object:
                kinds = {type(v) for v in frame[column]}
                if kinds - {str}:
                    sys.exit(f"FAIL: /{name}.{column} holds {kinds}, not str")
        units = frame.attrs["units"]
        if set(units) != set(frame.columns) or any(not u for u in units.values()):
            sys.exit(f"FAIL: /{name} units {units} do not cover its columns")
    requests = read_table(run_path, "/requests")
    summary = read_table(run_path, "/summary").set_index("group")
    finished = int((requests.state == "finished").sum())
    if finished == 0 or finished != summary.loc["fleet", "finished"]:
        sys.exit(f"FAIL: {finished} finished in /requests, {summary.loc['fleet', 'finished']} in /summary")
    if requests.name.nunique() != len(requests):
        sys.exit("FAIL: request names are not unique")
    series = read_table(run_path, "/timeseries")
    if "fleet" not in set(series.group):
        sys.exit("FAIL: /timeseries has no fleet rows")
    fleet = series[series.group == "fleet"].set_index("time_s")
    groups = series[series.group != "fleet"].groupby("time_s").running.sum()
    if not (fleet.running == groups).all():
        sys.exit("FAIL: the fleet's running requests are not the groups' sum")
    if units_of := read_table(run_path, "/requests").attrs["units"]:
        if units_of["ttft_s"] != "s" or units_of["arrival_ns"] != "ns":
            sys.exit(f"FAIL: units {units_of}")
    print(f"python reader ok: {len(tables)} tables, {finished} finished requests")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
