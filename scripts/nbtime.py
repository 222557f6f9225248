"""Times a notebook the way a researcher meets it: a fresh GoNB kernel, the cells run in order, each cell's wall time,
and the time from the kernel's start to the first chart on the page (the first output carrying an echarts chart).
Then the per-cell overhead: a trivial cell (`%%` + one Println, nothing to compute) run REPEATS times in the same
kernel, with its median and range, once as the notebooks build it and once with `%goflags` (GoNB's build flags) set
to FLAGS, when given. Usage:
    python3 scripts/nbtime.py NOTEBOOK.ipynb [--cells N] [--repeats R] [--goflags=FLAGS] [--out FILE]
Environment as scripts/notebooks.sh (PROTOLAB_ROOT, PROTOLAB_OUT, PROTOLAB_PRESET, GOMLX_BACKEND). Prints a
report and writes it to FILE when given.
"""
import argparse
import statistics
import time

import nbformat
from nbclient import NotebookClient


def has_chart(outputs):
    for o in outputs:
        data = o.get("data", {})
        html = data.get("text/html", "")
        if isinstance(html, list):
            html = "".join(html)
        if "echarts.init(document.getElementById" in html:  # a chart's own script, not the library
            return True
    return False


def trivial(client, nb, repeats):
    cell = nbformat.v4.new_code_cell('%%\nfmt.Println("overhead")')
    nb.cells.append(cell)
    idx = len(nb.cells) - 1
    times = []
    for _ in range(repeats):
        t = time.monotonic()
        client.execute_cell(cell, idx)
        times.append(time.monotonic() - t)
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("notebook")
    ap.add_argument("--cells", type=int, default=0, help="run only the first N cells (0: until the first chart)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--goflags", default="")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    nb = nbformat.read(a.notebook, as_version=4)
    client = NotebookClient(nb, kernel_name="gonb", timeout=-1, startup_timeout=600)
    lines = [f"notebook {a.notebook}"]
    start = time.monotonic()
    with client.setup_kernel():
        lines.append(f"kernel start: {time.monotonic() - start:.1f} s")
        first_chart = None
        for i, cell in enumerate(list(nb.cells)):
            if a.cells and i >= a.cells:
                break
            if cell.cell_type != "code":
                continue
            t = time.monotonic()
            client.execute_cell(cell, i)
            dt = time.monotonic() - t
            code = [l for l in cell.source.splitlines() if l.strip() and l.strip() != "%%"]
            first = code[0][:60] if code else ""
            lines.append(f"cell {i:2d}: {dt:6.1f} s  {first}")
            if first_chart is None and has_chart(cell.outputs):
                first_chart = time.monotonic() - start
                lines.append(f"first chart {first_chart:.1f} s after the kernel was asked to start")
                if not a.cells:
                    break
        if first_chart is None:
            lines.append("no chart in the cells run")
        base = trivial(client, nb, a.repeats)
        lines.append(f"trivial cell, {a.repeats} runs: median {statistics.median(base):.2f} s "
                     f"(min {min(base):.2f}, max {max(base):.2f})")
        if a.goflags:
            flags = nbformat.v4.new_code_cell(f"%goflags {a.goflags}")
            nb.cells.append(flags)
            client.execute_cell(flags, len(nb.cells) - 1)
            tuned = trivial(client, nb, a.repeats)
            lines.append(f"trivial cell with %goflags {a.goflags}, {a.repeats} runs: median "
                         f"{statistics.median(tuned):.2f} s (min {min(tuned):.2f}, max {max(tuned):.2f})")
    report = "\n".join(lines)
    print(report)
    if a.out:
        with open(a.out, "w") as f:
            f.write(report + "\n")


if __name__ == "__main__":
    main()
