package wbtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// GoModVersion returns the version of module that the repository's go.mod requires, read from the file itself (the
// nearest go.mod above the test's folder), so that a test of recorded provenance has an answer independent of the
// build information it checks. It fails the test when go.mod or the requirement is missing.
func GoModVersion(t testing.TB, module string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
				if len(f) >= 2 && f[0] == module {
					return f[1]
				}
			}
			t.Fatalf("go.mod in %s does not require %s", dir, module)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod above the test's folder")
		}
		dir = parent
	}
}
