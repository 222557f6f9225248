package wbtest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFolderSnapshot_SeesEveryChange(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a", "one")
	before := FolderSnapshot(t, dir)
	if FolderSnapshot(t, dir) != before {
		t.Fatal("two snapshots of an unchanged folder differ")
	}
	for _, change := range []func(){
		func() { write("a", "two") },                              // same size, other bytes
		func() { write("b", "") },                                 // a new empty file
		func() { _ = os.Chmod(filepath.Join(dir, "a"), 0o600) },   // a mode
		func() { _ = os.Mkdir(filepath.Join(dir, "sub"), 0o755) }, // an empty folder
	} {
		change()
		after := FolderSnapshot(t, dir)
		if after == before {
			t.Fatalf("a change was not seen:\n%s", after)
		}
		before = after
	}
}
