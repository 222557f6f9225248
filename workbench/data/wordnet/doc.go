// Package wordnet reads the WordNet 3.0 database (data.noun, data.verb, data.adj, data.adv; format wndb(5))
// into synsets with their words, supersense (the lexicographer file, lexnames(5)), definition and example
// sentences. It builds a labeled text corpus of glosses and examples (data.Corpus with concepts "supersense" and
// "pos"), and answers Synonyms and Supersenses queries for the robustness studies.
//
// The database comes from Debian's wordnet-base package: `make wordnet` extracts it into
// assets/wordnet/usr/share/wordnet without a system install; Dir finds it (or $PROTOLAB_WORDNET).
package wordnet
