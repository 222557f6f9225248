# Headless notebook runs (scripts/notebooks.sh) and the scorecard. `make test` runs every notebook with the Tiny
# preset and fails on any cell error; `make run` runs them with the Small preset into out/ (showing the protocol
# results shipped in results/) and ends with the scorecard out/REPORT.md; `make reproduce` runs every study's
# protocol (hours, outside CI) and compares its scorecard with the shipped one; `make results-report` and `make
# results-figures` regenerate what results/ ships beside its result files; `make lab` opens Jupyter on notebooks/.

NOTEBOOK_TEST := test-notebooks
OUT ?= out
PROTOLAB := $(GO) run -tags $(GOTAGS) ./experiments/cmd/protolab

# The studies with a protocol (docs/PROTOCOL.md), in the order `make reproduce` runs them (`protolab run <study>
# --preset small`). robustness measures interp's first-seed models, so it follows interp; it has no claims in the
# scorecard, so the comparison does not judge it (experiments/cmd/protolab/report.go lists the scored studies).
# baseline is the quickstart's model, with no protocol.
PROTOCOL_STUDIES := architecture speed interp robustness prismhead attribution steering suppression fvec
# The shipped results (README, "Reproductions and the scorecard"; results/README.md).
RESULTS := results

.PHONY: run test-notebooks lab reproduce report results-report results-figures time-notebooks

## run: set up, then execute every notebook with PRESET (default small) on BACKEND (default: ProtoLab's choice) into
## out/ (notebooks, HTML, figures), then write the scorecard from what is stored (protocol runs where `make reproduce`
## made them, else the ones shipped in results/, else the notebooks' quick runs; each row names its result file):
## on a fresh clone out/REPORT.md is results/REPORT.md byte for byte. A failed notebook stops neither the others
## nor the scorecard; `make run` then exits non-zero after the scorecard (scripts/notebooks.sh prints which notebooks
## ran, failed, and their times). `make run PRESET=paper BACKEND=xla:cuda` is the GPU run (README, "GPU and XLA").
run: setup
	@nb=0; GOMLX_BACKEND='$(BACKEND)' bash scripts/notebooks.sh $(PRESET) $(OUT) || nb=$$?; \
	  rep=0; $(MAKE) report || rep=$$?; \
	  if [ $$nb != 0 ]; then echo "run: a notebook failed (summary in $(OUT)/notebooks-summary.txt)"; exit $$nb; fi; \
	  exit $$rep

test-notebooks: setup
	bash scripts/notebooks_test.sh
	@nb=0; GOMLX_BACKEND=go:parallelism=-1 bash scripts/notebooks.sh tiny $(OUT)/test || nb=$$?; \
	  rep=0; $(PROTOLAB) report --out $(OUT)/test/runs --shipped "" --md $(OUT)/test/REPORT.md || rep=$$?; \
	  if [ $$nb != 0 ]; then exit $$nb; fi; exit $$rep

## reproduce: every study's full protocol at the Small preset (seeds, equal budgets, held-out evaluation; about an
## hour each on 2 cores, outside CI), run afresh into out/runs (`protolab run` never reads a shipped result; a study
## already stored there is loaded, so an interrupted reproduce resumes), then the scorecard of out/runs alone
## (out/REPORT.md) compared row by row with the shipped one (results/): the table is printed and written to
## out/COMPARE.md, and make fails when a row differs or changed its verdict. WordNet and the Brown corpus are installed
## first: the interp protocol compares the units on WordNet glosses too, and every language study runs on Brown.
reproduce: wordnet brown
	@set -e; for s in $(PROTOCOL_STUDIES); do \
	  echo "reproduce: $$s"; $(PROTOLAB) run $$s --preset small --out $(OUT)/runs; done
	$(PROTOLAB) report --out $(OUT)/runs --md $(OUT)/REPORT.md --compare $(RESULTS)

## report: the scorecard out/REPORT.md (and .html) from the results stored under out/runs, a protocol run missing
## there read from the shipped results/.
report:
	$(PROTOLAB) report --out $(OUT)/runs --md $(OUT)/REPORT.md

## results-report: the shipped scorecard results/REPORT.md (and .html), generated from the shipped result files
## alone; `make test` fails when the committed one differs from what this writes.
results-report:
	$(PROTOLAB) report --out $(RESULTS) --shipped $(RESULTS) --md $(RESULTS)/REPORT.md

## results-figures: the notebooks' figures of the shipped protocol results, drawn by the studies' figure builders as
## SVG files into results/figures/ (headless Chromium renders them, as plot export does); an SVG no result draws any
## more is removed.
results-figures: setup-echarts setup-chromium
	$(PROTOLAB) figures --results $(RESULTS)

## lab: open Jupyter (GoNB kernel) on the notebooks. As root (a container) Jupyter refuses to start without
## --allow-root, so it is added then, and only then.
lab: setup
	PROTOLAB_ROOT=$(CURDIR) PROTOLAB_OUT=$(CURDIR)/$(OUT) jupyter notebook --notebook-dir=notebooks \
	  $$(if [ "$$(id -u)" = 0 ]; then echo --allow-root; fi)

## time-notebooks: what a researcher waits for in Jupyter, measured (scripts/nbtime.py): a fresh GoNB kernel runs
## 00_quickstart at the Small preset until its first chart, then a trivial cell five times (the per-cell overhead
## GoNB adds: compiling and linking the cell's program), once as the notebooks build and once with -ldflags=-w
## (no DWARF). Written to $(OUT)/notebook-timing.txt. Run it on a quiet machine after `make run`.
time-notebooks: setup
	PROTOLAB_ROOT=$(CURDIR) PROTOLAB_OUT=$(CURDIR)/$(OUT) PROTOLAB_PRESET=small GOSUMDB=off GOFLAGS=-mod=mod \
	  PATH="$$(go env GOROOT)/bin:$$(go env GOPATH)/bin:$$PATH" \
	  /usr/bin/python3 scripts/nbtime.py notebooks/00_quickstart.ipynb --repeats 5 --goflags=-ldflags=-w \
	  --out $(OUT)/notebook-timing.txt
