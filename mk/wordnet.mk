# WordNet 3.0 database from Debian's wordnet-base package, extracted without a system install.
# `make wordnet` is idempotent: it downloads only when $(WORDNET_DICT)/data.noun is missing.
# workbench/data/wordnet.Dir finds the result (or $PROTOLAB_WORDNET).

WORDNET_ROOT := assets/wordnet
WORDNET_DICT := $(WORDNET_ROOT)/usr/share/wordnet

.PHONY: wordnet
wordnet: $(WORDNET_DICT)/data.noun
	@echo "WordNet 3.0 database: $(abspath $(WORDNET_DICT))"

$(WORDNET_DICT)/data.noun:
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	if [ "$$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$$tmp"; fi; \
	if ! (cd "$$tmp" && apt-get download wordnet-base); then \
		echo "apt-get download failed; running apt-get update and retrying"; \
		apt-get update -qq; \
		(cd "$$tmp" && apt-get download wordnet-base); \
	fi; \
	mkdir -p $(WORDNET_ROOT); \
	dpkg -x "$$tmp"/wordnet-base_*.deb $(WORDNET_ROOT); \
	test -f $@ || { echo "wordnet-base did not contain $@" >&2; exit 1; }; \
	touch $@
