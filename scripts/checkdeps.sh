#!/usr/bin/env bash
# Checks the dependency direction of docs/DESIGN.md / docs/STYLE.md §3 over imports and test imports:
#   theory/…      → theory/… only, and never gomlx or go-echarts;
#   layers/…      → layers/… only (tests may also import workbench/wbtest);
#   workbench/…   → workbench/… only; workbench/gradfix imports nothing of ours; workbench/wbtest only gradfix;
#   models/x      → layers, workbench, theory, models/… (what studies compute on trained models), never experiments;
#   experiments/x → models, layers, workbench, theory, docs, never experiments/y (experiments/cmd/… may import
#                   every study); a study builds no graph: no gomlx package but core/tensors (values it passes on),
#                   in its code and its tests; what it computes on a model is in models/;
#   docs          → nothing of ours (it embeds the specs and the papers' numbers; anything may import it);
#   only workbench/plot imports gonbui.
set -euo pipefail
cd "$(dirname "$0")/.."
mod=$(go list -m)
fail=0
check() { # pkg imp kind
  local pkg=${1#"$mod"/} imp=$2 kind=$3 t
  if [[ $imp == *janpfeifer/gonb/gonbui* && $pkg != workbench/plot* ]]; then
    echo "$pkg imports $imp ($kind): only workbench/plot may import gonbui"; fail=1
  fi
  if [[ $pkg == theory/* && ( $imp == *gomlx* || $imp == *go-echarts* ) ]]; then
    echo "$pkg imports $imp ($kind): theory must not import gomlx or go-echarts"; fail=1
  fi
  if [[ $pkg == experiments/* && $pkg != experiments/cmd/* && $imp == github.com/gomlx/gomlx/* &&
        $imp != github.com/gomlx/gomlx/core/tensors ]]; then
    echo "$pkg imports $imp ($kind): a study builds no graph; move the computation into models/"; fail=1
  fi
  [[ $imp == "$mod"/* ]] || return 0
  t=${imp#"$mod"/}
  case $pkg in
    docs|docs/*)
      if [[ ! ( $kind == test && $t == "$pkg" ) ]]; then
        echo "$pkg -> $t ($kind): docs imports nothing of ours (its tests may import docs itself)"; fail=1
      fi ;;
    theory/*) [[ $t == theory/* ]] || { echo "$pkg -> $t ($kind): theory imports only theory"; fail=1; } ;;
    layers/*)
      if [[ $t != layers/* && ! ( $kind == test && $t == workbench/wbtest ) ]]; then
        echo "$pkg -> $t ($kind): layers import only layers (tests also workbench/wbtest)"; fail=1
      fi ;;
    workbench/gradfix*)
      if [[ ! ( $kind == test && ( $t == workbench/wbtest || $t == workbench/gradfix ) ) ]]; then
        echo "$pkg -> $t ($kind): workbench/gradfix is a leaf (its tests may use wbtest)"; fail=1
      fi ;;
    workbench/wbtest*) [[ $t == workbench/gradfix ]] || { echo "$pkg -> $t ($kind): wbtest imports only gradfix"; fail=1; } ;;
    workbench/*) [[ $t == workbench/* ]] || { echo "$pkg -> $t ($kind): workbench imports only workbench"; fail=1; } ;;
    models/*)
      if [[ $t != layers/* && $t != workbench/* && $t != models/* && $t != theory/* ]]; then
        echo "$pkg -> $t ($kind): models import only layers, workbench, theory and models"; fail=1
      fi ;;
    experiments/cmd/*) ;;
    experiments/*)
      if [[ $t == experiments/* ]]; then echo "$pkg -> $t ($kind): experiments must not import each other"; fail=1; fi ;;
  esac
}
while read -r pkg imps; do
  for imp in $imps; do check "$pkg" "$imp" import; done
done < <(go list -tags noxla -f '{{.ImportPath}} {{join .Imports " "}}' ./...)
while read -r pkg imps; do
  for imp in $imps; do check "$pkg" "$imp" test; done
done < <(go list -tags noxla -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./...)
if [[ $fail != 0 ]]; then exit 1; fi
echo "deps: dependency direction OK ($(go list ./... | wc -l) packages)"
