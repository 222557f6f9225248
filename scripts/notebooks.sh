#!/usr/bin/env bash
# Executes notebooks headlessly with the GoNB kernel, the way `make run` and `make test` do:
#   scripts/notebooks.sh PRESET OUTDIR [NOTEBOOK...]
# PRESET is tiny|small|paper (exported as PROTOLAB_PRESET); executed notebooks, their HTML export and the figures the
# notebooks export (PROTOLAB_OUT) go to OUTDIR.
#
# The backend is $GOMLX_BACKEND when set and not empty, else ProtoLab's choice (run.Backend: XLA where a PJRT plugin
# is installed, the pure-Go backend otherwise); GOMLX_NO_AUTO_INSTALL=1, so nothing is downloaded unasked.
#
# Each cell gets a time limit that scales with the preset, a guard against a hung cell rather than a budget (a slow
# machine takes longer, it should not fail): tiny 1800 s (the CI smoke test), small 14400 s (the longest Small
# protocol cell takes about 45 min on 2 cores), paper 259200 s (three days: a Paper study on a GPU takes hours).
# NOTEBOOK_CELL_TIMEOUT=SECONDS sets another (-1: none); the kernel gets NOTEBOOK_STARTUP_TIMEOUT (default 600)
# seconds to start. Every notebook runs even when an earlier one failed, and its executed notebook (with the failing cell's
# output) and HTML export are written either way. A cell error is a compile error, an error output, or a cell program
# that exits non-zero, which GoNB only reports on stderr (scripts/nbcheck.py). At the end a summary lists every
# notebook with its status and time (also written to OUTDIR/notebooks-summary.txt), and the script exits 1 when any
# notebook failed. Executed notebooks that passed are signed so that Jupyter runs their chart scripts when opened.
# Studies store their results by configuration (run.LoadOrRun) and models their checkpoints, so running the script
# again reuses every finished study and model and resumes an interrupted training run.
set -uo pipefail
preset=${1:?usage: scripts/notebooks.sh PRESET OUTDIR [NOTEBOOK...]}
outdir=${2:?usage: scripts/notebooks.sh PRESET OUTDIR [NOTEBOOK...]}
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
notebooks=("$@")
if [[ ${#notebooks[@]} == 0 ]]; then notebooks=("$root"/notebooks/*.ipynb); fi
for nb in "${notebooks[@]}"; do
  if [[ ! -f $nb ]]; then
    echo "notebooks: $nb is not a notebook file; give paths such as notebooks/30_function_vectors.ipynb" >&2
    exit 2
  fi
done
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

case $preset in
  tiny) default_cell_timeout=1800 ;;
  small) default_cell_timeout=14400 ;;
  paper) default_cell_timeout=259200 ;;
  *) echo "notebooks: unknown preset \"$preset\": use tiny, small or paper (make run PRESET=...)" >&2; exit 2 ;;
esac
export PROTOLAB_PRESET=$preset PROTOLAB_ROOT=$root PROTOLAB_OUT=$outdir
export PATH="$(go env GOROOT)/bin:$(go env GOPATH)/bin:$PATH"
export GOMLX_NO_AUTO_INSTALL=1 GOSUMDB=off GOFLAGS=-mod=mod
if [[ -z ${GOMLX_BACKEND:-} ]]; then
  unset GOMLX_BACKEND
  backend_note="ProtoLab's choice (each notebook's first cell prints it)"
else
  export GOMLX_BACKEND
  backend_note="GOMLX_BACKEND=$GOMLX_BACKEND"
fi
# Debian's python has nbformat; a python3 earlier on PATH (pyenv) may not.
py=/usr/bin/python3
# nbclient's per-cell limit (-1: none).
cell_timeout=${NOTEBOOK_CELL_TIMEOUT:-$default_cell_timeout}
if ! [[ $cell_timeout =~ ^(-1|[1-9][0-9]*)$ ]]; then
  echo "notebooks: NOTEBOOK_CELL_TIMEOUT=$cell_timeout: want seconds (a positive integer) or -1 for none" >&2; exit 2
fi
echo "notebooks: preset $preset, backend $backend_note, cell time limit ${cell_timeout} s"
startup_timeout=${NOTEBOOK_STARTUP_TIMEOUT:-600}

# The HTML exports typeset the notebooks' LaTeX with a local MathJax (Debian's libjs-mathjax, which Jupyter Notebook
# serves to the live notebook too): its TeX input and SVG output are copied beside the exports (about 3 MB), so
# they render offline and wherever the folder is copied. Without the package they fall back to nbconvert's default
# (the MathJax CDN).
mathjax=/usr/share/javascript/mathjax
html_opts=()
if [[ -f $mathjax/MathJax.js ]]; then
  for part in MathJax.js config/TeX-AMS_SVG.js jax/input/TeX jax/element extensions jax/output/SVG/config.js \
    jax/output/SVG/jax.js jax/output/SVG/autoload jax/output/SVG/fonts/TeX; do
    mkdir -p "$(dirname "$outdir/mathjax/$part")" && cp -rL "$mathjax/$part" "$(dirname "$outdir/mathjax/$part")/"
  done
  html_opts=(--HTMLExporter.mathjax_url="mathjax/MathJax.js?config=TeX-AMS_SVG")
else
  echo "notebooks: note: $mathjax/MathJax.js missing (apt-get install libjs-mathjax); HTML exports load MathJax online"
fi

failed=()
summary=()
total_start=$(date +%s)
for nb in "${notebooks[@]}"; do
  name=$(basename "$nb" .ipynb)
  start=$(date +%s)
  echo "notebooks: executing $name (preset $preset) ..."
  # --allow-errors: the executed notebook is written even when a cell fails (nbcheck.py then reports the cell), so
  # its output up to the failure is kept and later cells still run.
  ok=1
  rm -f "$outdir/$name.ipynb" "$outdir/$name.html" # never report a previous run's notebook
  jupyter nbconvert --to notebook --execute --allow-errors --ExecutePreprocessor.kernel_name=gonb \
    --ExecutePreprocessor.timeout="$cell_timeout" --ExecutePreprocessor.startup_timeout="$startup_timeout" \
    --output-dir "$outdir" --output "$name.ipynb" "$nb" >"$outdir/$name.log" 2>&1 || ok=0
  if [[ -f $outdir/$name.ipynb ]]; then
    "$py" "$root/scripts/nbcheck.py" "$outdir/$name.ipynb" >>"$outdir/$name.log" || ok=0
    jupyter nbconvert --to html "${html_opts[@]}" --output-dir "$outdir" "$outdir/$name.ipynb" >>"$outdir/$name.log" 2>&1
  else
    ok=0
  fi
  secs=$(( $(date +%s) - start ))
  if [[ $ok == 1 ]]; then
    "$py" -m nbformat.sign "$outdir/$name.ipynb" >/dev/null 2>&1 ||
      echo "notebooks: warning: could not sign $outdir/$name.ipynb (charts render after 'jupyter trust')"
    echo "notebooks: $name OK in $secs s -> $outdir/$name.ipynb, $outdir/$name.html"
    summary+=("$(printf '  %-34s OK      %6d s' "$name" "$secs")")
  else
    echo "notebooks: $name FAILED after $secs s (log $outdir/$name.log); the cell error:"
    grep -v -E '^\s*$|^I[0-9]{4} |^W[0-9]{4} ' "$outdir/$name.log" |
      grep -A 40 -E 'CellExecutionError|cell [0-9]+ failed|ERROR|Error' | head -80
    failed+=("$name")
    summary+=("$(printf '  %-34s FAILED  %6d s  (log %s)' "$name" "$secs" "$outdir/$name.log")")
  fi
done
{
  echo "notebooks: summary (preset $preset, $(( $(date +%s) - total_start )) s in all):"
  printf '%s\n' "${summary[@]}"
  if [[ ${#failed[@]} != 0 ]]; then
    echo "notebooks: ${#notebooks[@]} ran, ${#failed[@]} failed: ${failed[*]}"
  else
    echo "notebooks: all ${#notebooks[@]} executed without errors"
  fi
} | tee "$outdir/notebooks-summary.txt"
[[ ${#failed[@]} == 0 ]]
