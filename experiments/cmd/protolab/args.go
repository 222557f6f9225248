package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/pkg/errors"
)

// parseArgs parses args with fs, taking flags and words in any order: Go's flag package stops at the first word that
// is not a flag, which would leave every flag after a stray word unread, so parsing resumes after each word. After
// "--" everything is a word. It returns the words, and an error when there are more than the command takes
// (positional names them: "<study>"), naming each extra word.
func parseArgs(fs *flag.FlagSet, args []string, positional ...string) ([]string, error) {
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			words = append(words, rest...)
			break
		}
		words, args = append(words, rest[0]), rest[1:]
	}
	if len(words) > len(positional) {
		extra := words[len(positional):]
		quoted := make([]string, len(extra))
		for i, w := range extra {
			quoted[i] = fmt.Sprintf("%q", w)
		}
		name := strings.TrimPrefix(fs.Name(), "protolab ")
		noun, takes := "argument", "flags only"
		if len(extra) > 1 {
			noun = "arguments"
		}
		if len(positional) > 0 {
			takes = strings.Join(positional, " ") + " and flags"
		}
		return nil, errors.Errorf("%s: unexpected %s %s (%s takes %s; quote a flag value that has spaces, e.g. "+
			"--prompt \"The queen\")", name, noun, strings.Join(quoted, ", "), name, takes)
	}
	return words, nil
}

// setFlag is a repeatable --set: the assignments of every --set are applied in order (run.Override), so a key given
// again, in the same --set or a later one, takes the later value.
type setFlag []string

// String returns the assignments of every --set, in order, as one run.Override string.
func (s *setFlag) String() string { return strings.Join(*s, ";") }

// Set records one more --set.
func (s *setFlag) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// setUsage is the help text of --set; example is a typical assignment string, keys the command listing the keys.
func setUsage(example, keys string) string {
	return fmt.Sprintf(`overrides, e.g. %q (see %s); repeatable: every --set is applied in order, a later value `+
		`of a key wins`, example, keys)
}

// newSetFlag defines --set on fs.
func newSetFlag(fs *flag.FlagSet, example, keys string) *setFlag {
	s := &setFlag{}
	fs.Var(s, "set", setUsage(example, keys))
	return s
}
