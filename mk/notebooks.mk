# Headless notebook runs (scripts/notebooks.sh). `make test` runs every notebook with the Tiny preset and fails on
# any cell error; `make run` runs them with the Small preset into out/; `make lab` opens Jupyter on notebooks/.

NOTEBOOK_TEST := test-notebooks
OUT ?= out

.PHONY: run test-notebooks lab

## run: set up, then execute every notebook with the Small preset into out/ (notebooks, HTML, figures).
run: setup
	bash scripts/notebooks.sh small $(OUT)

test-notebooks: setup
	bash scripts/notebooks.sh tiny $(OUT)/test

## lab: open Jupyter (GoNB kernel) on the notebooks.
lab: setup
	PROTOLAB_ROOT=$(CURDIR) PROTOLAB_OUT=$(CURDIR)/$(OUT) jupyter notebook --notebook-dir=notebooks
