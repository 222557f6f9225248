#!/usr/bin/env bash
# Executes notebooks headlessly with the GoNB kernel, the way `make run` and `make test` do:
#   scripts/notebooks.sh PRESET OUTDIR [NOTEBOOK...]
# PRESET is tiny|small|paper (exported as PROTOLAB_PRESET); executed notebooks, their HTML export and the figures the
# notebooks export (PROTOLAB_OUT) go to OUTDIR. A cell error (a compile error, which stops the notebook, or a cell
# program that exits non-zero, which GoNB only reports on stderr: scripts/nbcheck.py) makes the script exit non-zero
# after all notebooks have run. Executed notebooks are signed so that Jupyter runs their chart scripts when opened.
set -uo pipefail
preset=${1:?usage: scripts/notebooks.sh PRESET OUTDIR [NOTEBOOK...]}
outdir=${2:?usage: scripts/notebooks.sh PRESET OUTDIR [NOTEBOOK...]}
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
notebooks=("$@")
if [[ ${#notebooks[@]} == 0 ]]; then notebooks=("$root"/notebooks/*.ipynb); fi
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

export PROTOLAB_PRESET=$preset PROTOLAB_ROOT=$root PROTOLAB_OUT=$outdir
export PATH="$(go env GOROOT)/bin:$(go env GOPATH)/bin:$PATH"
export GOMLX_BACKEND=${GOMLX_BACKEND:-go:parallelism=-1} GOMLX_NO_AUTO_INSTALL=1 GOSUMDB=off GOFLAGS=-mod=mod
# Debian's python has nbformat; a python3 earlier on PATH (pyenv) may not.
py=/usr/bin/python3
cell_timeout=${NOTEBOOK_CELL_TIMEOUT:-1200}

failed=()
for nb in "${notebooks[@]}"; do
  name=$(basename "$nb" .ipynb)
  start=$(date +%s)
  echo "notebooks: executing $name (preset $preset) ..."
  if jupyter nbconvert --to notebook --execute --ExecutePreprocessor.kernel_name=gonb \
      --ExecutePreprocessor.timeout="$cell_timeout" --output-dir "$outdir" --output "$name.ipynb" "$nb" \
      >"$outdir/$name.log" 2>&1 && "$py" "$root/scripts/nbcheck.py" "$outdir/$name.ipynb" >>"$outdir/$name.log"; then
    "$py" -m nbformat.sign "$outdir/$name.ipynb" >/dev/null 2>&1 ||
      echo "notebooks: warning: could not sign $outdir/$name.ipynb (charts render after 'jupyter trust')"
    jupyter nbconvert --to html --output-dir "$outdir" "$outdir/$name.ipynb" >>"$outdir/$name.log" 2>&1
    echo "notebooks: $name OK in $(( $(date +%s) - start )) s -> $outdir/$name.ipynb, $outdir/$name.html"
  else
    echo "notebooks: $name FAILED after $(( $(date +%s) - start )) s; the cell error:"
    grep -v -E '^\s*$|^I[0-9]{4} |^W[0-9]{4} ' "$outdir/$name.log" |
      grep -A 40 -E 'CellExecutionError|cell [0-9]+ failed|ERROR' | head -80
    failed+=("$name")
  fi
done
if [[ ${#failed[@]} != 0 ]]; then
  echo "notebooks: ${#failed[@]} failed: ${failed[*]} (logs in $outdir)"
  exit 1
fi
echo "notebooks: all ${#notebooks[@]} executed without errors (preset $preset)"
