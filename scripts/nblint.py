"""Checks the notebooks' sources for what a reader would see broken or missing. Usage:
    python3 scripts/nblint.py NOTEBOOK.ipynb...
Exit 1, naming the notebook, cell and text, when
  - a markdown cell has math outside $…$: a letter or digit joined to `_` or `^` (markdown pairs underscores into
    italics and prints carets), outside code spans and $…$ or $$…$$ math (MathJax renders those; Jupyter Notebook
    serves it locally);
  - a markdown cell has an odd number of unescaped `$` outside code spans (half of a formula, or a shell variable
    that would swallow the text up to the next one: write it as `$VAR`);
  - the notebook has no code cell calling plot.ShowLibrary in its settings cell (the first cell with `%%`), or no
    last cell exporting its figures with plot.ExportFigures.
"""
import json
import re
import sys

CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
MATH = re.compile(r"\$\$.+?\$\$|\$[^$]+?\$", re.DOTALL)
SCRIPT = re.compile(r"\w[_^]\w|\w[_^]\{|[)\]][_^]")


def markdown_problems(text):
    """Returns the problems of one markdown cell's text."""
    plain = CODE_SPAN.sub(" ", text)
    plain = plain.replace(r"\$", "")
    problems = []
    if plain.count("$") % 2:
        problems.append("odd number of `$` outside code spans (put shell variables in backticks, close formulas)")
    rest = MATH.sub(" ", plain)
    for m in SCRIPT.finditer(rest):
        start = max(0, m.start() - 20)
        problems.append(f"math outside $…$ near {rest[start:m.end() + 20]!r} (write it as LaTeX between $ signs)")
    return problems


def main(paths):
    bad = 0
    for path in paths:
        with open(path) as f:
            nb = json.load(f)
        cells = nb.get("cells", [])
        for i, cell in enumerate(cells):
            if cell.get("cell_type") == "markdown":
                for p in markdown_problems("".join(cell.get("source", ""))):
                    print(f"{path}: markdown cell {i}: {p}")
                    bad += 1
        code = ["".join(c.get("source", "")) for c in cells if c.get("cell_type") == "code"]
        settings = next((s for s in code if "\n%%\n" in s or s.startswith("%%")), "")
        if "plot.ShowLibrary()" not in settings:
            print(f"{path}: the settings cell (the first with %%) does not call plot.ShowLibrary()")
            bad += 1
        if not code or "plot.ExportFigures(" not in code[-1]:
            print(f"{path}: the last code cell does not export the figures with plot.ExportFigures")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
