package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// directives returns the go.mod or go.work file's directives of kind
// ("replace", "require"), each as its fields, from one-line and block
// forms alike; comments are dropped.
func directives(b []byte, kind string) [][]string {
	var out [][]string
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l, _, _ := strings.Cut(sc.Text(), "//")
		f := strings.Fields(l)
		switch {
		case len(f) == 0:
		case in && f[0] == ")":
			in = false
		case in:
			out = append(out, f)
		case f[0] == kind && len(f) == 2 && f[1] == "(":
			in = true
		case f[0] == kind:
			out = append(out, f[1:])
		}
	}
	return out
}

// TestNoReplaceDirectives: no go.mod of the repository that a user builds
// from (`go get`, `go install …@version`) has a replace directive, which
// the go command refuses in a module installed so; the exporter is
// developed against the library beside it through exporter/go.work,
// whose replace names exactly the library version exporter/go.mod
// requires, and bench/k8s likewise through bench/k8s/go.work.
func TestNoReplaceDirectives(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var mods []string
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name := d.Name(); d.IsDir() && p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" {
			mods = append(mods, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) < 2 {
		t.Fatalf("found %v: want the library's go.mod and the exporter's", mods)
	}
	for _, m := range mods {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		if r := directives(b, "replace"); len(r) > 0 {
			t.Errorf("%s has replace directives %v: `go install` refuses a module with one; put it in a go.work", m, r)
		}
	}
	// Each nested module that requires the library (the exporter,
	// bench/k8s) has a go.work beside it whose one replace names that
	// version by the path up to the repository's root.
	for _, m := range mods {
		dir := filepath.Dir(m)
		if dir == root {
			continue
		}
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		var lib string
		for _, r := range directives(b, "require") {
			if len(r) >= 2 && r[0] == "github.com/rdmastack/rdmastack" {
				lib = r[1]
			}
		}
		if lib == "" {
			continue
		}
		up, err := filepath.Rel(dir, root)
		if err != nil {
			t.Fatal(err)
		}
		work, err := os.ReadFile(filepath.Join(dir, "go.work"))
		if err != nil {
			t.Errorf("%s requires the library at %s and has no go.work to build against the one beside it: %v", m, lib, err)
			continue
		}
		reps := directives(work, "replace")
		if len(reps) != 1 || len(reps[0]) != 4 || reps[0][0] != "github.com/rdmastack/rdmastack" || reps[0][1] != lib || reps[0][3] != filepath.ToSlash(up)+"/" {
			t.Errorf("%s requires the library at %q; its go.work replaces %v: want that version by %s/", m, lib, reps, filepath.ToSlash(up))
		}
	}
}

// TestDirectives parses both forms and leaves comments out.
func TestDirectives(t *testing.T) {
	b := []byte("module m\n\n// replace a => b\nreplace x v1 => ../x // why\nreplace (\n\ty => ./y\n)\nrequire z v1\n")
	got := directives(b, "replace")
	if len(got) != 2 || strings.Join(got[0], " ") != "x v1 => ../x" || strings.Join(got[1], " ") != "y => ./y" {
		t.Errorf("replace directives %q", got)
	}
}
