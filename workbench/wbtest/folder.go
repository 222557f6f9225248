package wbtest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// FolderSnapshot lists every file and folder under root with its mode, and every file's size and SHA-256, one per
// line, sorted: two equal snapshots mean a byte-identical tree (the check that a refused or failed operation left a
// folder untouched).
func FolderSnapshot(t testing.TB, root string) string {
	t.Helper()
	var lines []string
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		line := fmt.Sprintf("%s %s", rel, info.Mode())
		if !info.IsDir() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			line += fmt.Sprintf(" %d %s", len(b), hex.EncodeToString(sum[:]))
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatalf("wbtest.FolderSnapshot(%s): %v", root, err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
