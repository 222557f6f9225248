# ProtoLab — the two commands are `make run` and `make test` (README.md). Everything they need is installed by the
# setup targets in mk/*.mk, which are idempotent.

SHELL := /bin/bash
export PATH := $(shell go env GOROOT)/bin:$(shell go env GOPATH)/bin:$(PATH)
GO ?= go
GOTAGS ?= noxla
# `make run` takes PRESET (tiny|small|paper) and BACKEND (a GOMLX_BACKEND value: go:parallelism=-1, xla:cuda,
# xla:/abs/path/plugin.so, ...). BACKEND defaults to $GOMLX_BACKEND from the environment, else empty: ProtoLab's own
# choice (XLA where a PJRT plugin is installed, the pure-Go backend otherwise; `protolab backend` says which and why).
PRESET ?= small
ifeq ($(origin GOMLX_BACKEND),environment)
BACKEND ?= $(GOMLX_BACKEND)
endif
BACKEND ?=
# The tests build the pure-Go backend with unlimited parallelism (the default pool can deadlock on 2 cores).
export GOMLX_BACKEND ?= go:parallelism=-1
# The pure-Go backend's SIMD matmul kernels (AVX-512, AVX2) are compiled only with GOEXPERIMENT=simd: every build,
# test, script and notebook kernel make starts gets it (`protolab backend` says which kernels run and why).
export GOEXPERIMENT := simd
# Never download an XLA plugin unasked (a plugin found on disk is passed by path and needs no download).
export GOMLX_NO_AUTO_INSTALL := 1

-include mk/setup.mk
-include mk/wordnet.mk
-include mk/brown.mk
-include mk/notebooks.mk

.PHONY: test test-go test-scripts test-long vet deps bench build golden

## test: setup (so the Chromium and echarts tests run), vet, dependency rules, every Go test (-short), the device
## check's rehearsal, then the notebooks with the Tiny preset.
test: setup vet deps test-go test-scripts $(NOTEBOOK_TEST)

test-go:
	$(GO) test -tags $(GOTAGS) -short -count=1 ./...

## test-scripts: scripts/device_check.sh rehearsed on this CPU (binaries without XLA; the GPU run is by hand), and
## scripts/torch_throughput.py at a tiny size (skipped, saying why, where python3 has no torch).
test-scripts:
	bash scripts/device_check_test.sh
	bash scripts/torch_throughput_test.sh

## test-long: the tests that take minutes (no -short).
test-long:
	$(GO) test -tags $(GOTAGS) -count=1 -timeout 60m ./...

vet:
	@bad=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$bad" ]; then echo "gofmt needed on:"; echo "$$bad"; exit 1; fi
	$(GO) vet -tags $(GOTAGS) ./...

## deps: the dependency direction of docs/DESIGN.md.
deps:
	@bash scripts/checkdeps.sh

## bench: the core benchmarks quoted in closing notes.
bench:
	$(GO) test -tags $(GOTAGS) -run '^$$' -bench . -benchtime 3x ./layers/decoder/ ./workbench/gradfix/ ./workbench/tokenizer/

## build: the CLI with the XLA backend (cgo, no noxla tag; the first build compiles go-xla's C bindings, minutes).
build:
	CGO_ENABLED=1 $(GO) build -o bin/protolab ./experiments/cmd/protolab

golden:
	WB_UPDATE_GOLDEN=1 $(GO) test -tags $(GOTAGS) -count=1 ./...
