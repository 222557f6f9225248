"""Reports the cells of an executed GoNB notebook whose program failed.

GoNB v0.11.1 does not mark a cell as failed when the cell's program exits with an error (a panic, log.Fatal,
os.Exit(1)): it only writes "exit status N" (or "signal: ...") to the cell's stderr. nbconvert therefore sees
success. This check reads the executed notebook and fails (exit 1) when any code cell has such a line or an
error output, printing the cell's source and stderr. Usage: python3 scripts/nbcheck.py NOTEBOOK.ipynb
"""
import json
import re
import sys

FAILED = re.compile(r"^(exit status \d+|signal: .+)$", re.MULTILINE)


def main(path):
    with open(path) as f:
        nb = json.load(f)
    bad = 0
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        stderr = "".join(
            "".join(o.get("text", "")) for o in cell.get("outputs", [])
            if o.get("output_type") == "stream" and o.get("name") == "stderr")
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if FAILED.search(stderr) or errors:
            bad += 1
            source = "".join(cell.get("source", ""))
            print(f"{path}: cell {i} failed:\n--- source ---\n{source}\n--- stderr ---\n{stderr[-3000:]}")
            for e in errors:
                print(f"--- error --- {e.get('ename')}: {e.get('evalue')}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
