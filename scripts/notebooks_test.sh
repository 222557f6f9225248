#!/usr/bin/env bash
# Tests scripts/notebooks.sh without a kernel: a fake `jupyter` on PATH "executes" three notebooks, the first of which
# fails (its cell program exits 2, as GoNB reports it), the second of which kills the kernel (no output written), and
# the third of which passes. Checks that every notebook ran, that the summary names each with its status and time,
# that the script exits 1, the cell time limit of each preset, and the backend note. Then checks scripts/nblint.py on the repository's
# notebooks and on a bad one. Usage: bash scripts/notebooks_test.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/nb"
cat >"$tmp/bin/jupyter" <<'EOF'
#!/usr/bin/env bash
# Fake jupyter: `nbconvert --to notebook --execute ... --output-dir D --output N.ipynb SRC` copies SRC's "executed"
# form to D/N.ipynb (or fails for a notebook called *crash*); `nbconvert --to html ... NB` writes NB's .html.
echo "$*" >>"$FAKE_JUPYTER_LOG"
args=("$@"); to=""; outdir=""; output=""; src="${args[-1]}"
for ((i = 0; i < ${#args[@]}; i++)); do
  case ${args[i]} in
    --to) to=${args[i+1]} ;;
    --output-dir) outdir=${args[i+1]} ;;
    --output) output=${args[i+1]} ;;
  esac
done
if [[ $to == html ]]; then echo "<html/>" >"${src%.ipynb}.html"; exit 0; fi
case $src in
  *crash*) echo "RuntimeError: Kernel died" >&2; exit 1 ;;
  *) cp "$src" "$outdir/$output" ;;
esac
EOF
chmod +x "$tmp/bin/jupyter"
cell() { # stderr text of a code cell's output
  printf '{"cells":[{"cell_type":"code","source":"%%%%\\n","metadata":{},"execution_count":1,"outputs":[{"output_type":"stream","name":"stderr","text":"%s"}]}],"metadata":{},"nbformat":4,"nbformat_minor":5}' "$1"
}
cell 'train: missing key\nexit status 2\n' >"$tmp/nb/01_fails.ipynb"
cell '' >"$tmp/nb/02_crash.ipynb"
cell 'progress\n' >"$tmp/nb/03_passes.ipynb"

export FAKE_JUPYTER_LOG=$tmp/jupyter.log
GOMLX_BACKEND=go:parallelism=-1 PATH="$tmp/bin:$PATH" bash "$root/scripts/notebooks.sh" tiny "$tmp/out" \
  "$tmp/nb/01_fails.ipynb" "$tmp/nb/02_crash.ipynb" "$tmp/nb/03_passes.ipynb" >"$tmp/stdout" 2>&1
status=$?

fail=0
check() { # description, command...
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}
check "exit status 1 when a notebook failed (got $status)" test "$status" = 1
check "the notebook after a failed one ran" test -f "$tmp/out/03_passes.ipynb"
check "the failed notebook's executed copy is kept" test -f "$tmp/out/01_fails.ipynb"
check "summary: 01_fails FAILED with its time" grep -qE '01_fails +FAILED +[0-9]+ s' "$tmp/stdout"
check "summary: 02_crash FAILED with its time" grep -qE '02_crash +FAILED +[0-9]+ s' "$tmp/stdout"
check "summary: 03_passes OK with its time" grep -qE '03_passes +OK +[0-9]+ s' "$tmp/stdout"
check "summary line names the failed notebooks" grep -q '3 ran, 2 failed: 01_fails 02_crash' "$tmp/stdout"
check "summary file written" grep -q '03_passes' "$tmp/out/notebooks-summary.txt"
check "the tiny preset's cell time limit" grep -q -- '--ExecutePreprocessor.timeout=1800 ' "$tmp/jupyter.log"
check "the backend named" grep -q "backend GOMLX_BACKEND=go:parallelism=-1" "$tmp/stdout"

# The time limit scales with the preset, NOTEBOOK_CELL_TIMEOUT overrides it, an empty GOMLX_BACKEND means ProtoLab's
# choice, and a bad preset or limit is an error before anything runs.
: >"$FAKE_JUPYTER_LOG"
GOMLX_BACKEND= PATH="$tmp/bin:$PATH" bash "$root/scripts/notebooks.sh" paper "$tmp/out2" "$tmp/nb/03_passes.ipynb" >"$tmp/stdout2" 2>&1
check "paper: notebook ran" test $? = 0
check "paper: the paper preset's cell time limit" grep -q -- '--ExecutePreprocessor.timeout=259200 ' "$tmp/jupyter.log"
check "empty GOMLX_BACKEND: ProtoLab's choice" grep -q "backend ProtoLab's choice" "$tmp/stdout2"
: >"$FAKE_JUPYTER_LOG"
NOTEBOOK_CELL_TIMEOUT=-1 PATH="$tmp/bin:$PATH" bash "$root/scripts/notebooks.sh" small "$tmp/out3" "$tmp/nb/03_passes.ipynb" >/dev/null 2>&1
check "NOTEBOOK_CELL_TIMEOUT=-1: no limit" grep -q -- '--ExecutePreprocessor.timeout=-1 ' "$tmp/jupyter.log"
PATH="$tmp/bin:$PATH" bash "$root/scripts/notebooks.sh" huge "$tmp/out4" "$tmp/nb/03_passes.ipynb" >"$tmp/stdout4" 2>&1
check "unknown preset: exit 2" test $? = 2
check "unknown preset: named" grep -q 'unknown preset "huge": use tiny, small or paper' "$tmp/stdout4"
NOTEBOOK_CELL_TIMEOUT=soon PATH="$tmp/bin:$PATH" bash "$root/scripts/notebooks.sh" tiny "$tmp/out5" "$tmp/nb/03_passes.ipynb" >"$tmp/stdout5" 2>&1
check "bad NOTEBOOK_CELL_TIMEOUT: exit 2" test $? = 2
check "bad NOTEBOOK_CELL_TIMEOUT: named" grep -q 'NOTEBOOK_CELL_TIMEOUT=soon: want seconds' "$tmp/stdout5"
PATH="$tmp/bin:$PATH" bash "$root/scripts/notebooks.sh" tiny "$tmp/out6" 03_passes >"$tmp/stdout6" 2>&1
check "a notebook that is no file: exit 2" test $? = 2
check "a notebook that is no file: named" grep -q '03_passes is not a notebook file' "$tmp/stdout6"

# scripts/nblint.py: the repository's notebooks pass; a notebook with bare math, an unpaired $, no ShowLibrary in its
# settings cell and no export cell fails with each named.
check "nblint passes the notebooks" python3 "$root/scripts/nblint.py" "$root"/notebooks/*.ipynb
printf '%s' '{"cells":[{"cell_type":"markdown","metadata":{},"source":"weights lambda_1 and $HOME"},{"cell_type":"code","metadata":{},"execution_count":null,"outputs":[],"source":"%%\\nfmt.Println(1)"}],"metadata":{},"nbformat":4,"nbformat_minor":5}' >"$tmp/lint.ipynb"
python3 "$root/scripts/nblint.py" "$tmp/lint.ipynb" >"$tmp/lint.out"
check "nblint fails a bad notebook" test $? = 1
check "nblint names bare math" grep -q "math outside" "$tmp/lint.out"
check "nblint names an unpaired \$" grep -q "odd number of" "$tmp/lint.out"
check "nblint names a missing ShowLibrary" grep -q "ShowLibrary" "$tmp/lint.out"
check "nblint names a missing export cell" grep -q "ExportFigures" "$tmp/lint.out"
if [[ $fail != 0 ]]; then
  echo "--- nblint output ---"; cat "$tmp/lint.out" 2>/dev/null
  echo "--- notebooks.sh output ---"; cat "$tmp/stdout"; exit 1
fi
echo "notebooks_test: OK"
