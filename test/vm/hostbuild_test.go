package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTestPackages(t *testing.T) {
	out := "github.com/rdmastack/rdmastack/nldev\t/work/main/nldev\t3\t1\n" +
		"github.com/rdmastack/rdmastack/cmd/rdma\t/work/main/cmd/rdma\t0\t0\n" +
		"github.com/rdmastack/rdmastack/ib\t/work/main/ib\t0\t2\n\n"
	got, err := parseTestPackages(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []testPackage{
		{ImportPath: "github.com/rdmastack/rdmastack/nldev", Dir: "/work/main/nldev"},
		{ImportPath: "github.com/rdmastack/rdmastack/ib", Dir: "/work/main/ib"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{"a\tb\t1\n", "a\tb\tx\t1\n"} {
		if _, err := parseTestPackages(bad); err == nil {
			t.Errorf("parseTestPackages(%q): no error", bad)
		}
	}
}

func TestTestBinaryName(t *testing.T) {
	const mod = "github.com/rdmastack/rdmastack"
	for in, want := range map[string]string{
		mod:                         "rdmastack",
		mod + "/nldev":              "nldev",
		mod + "/nldev/internal/abi": "nldev_internal_abi",
		mod + "/test/vm":            "test_vm",
		"example.com/other/pkg":     "example.com_other_pkg",
	} {
		if got := testBinaryName(mod, in); got != want {
			t.Errorf("testBinaryName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNestedModules: the modules nested below the root, named after their
// own go.mod; testdata, hidden directories and modules inside a nested one
// are not searched. (The go command is not needed: the test binary also
// runs in the guest, which has none.)
func TestNestedModules(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/top\n\ngo 1.26\n")
	write("exporter/go.mod", "// the exporter\nmodule \"example.com/top/exporter\" // quoted\n\ngo 1.26\n")
	write("exporter/inner/go.mod", "module example.com/top/exporter/inner\n\ngo 1.26\n")
	write("pkg/testdata/mod/go.mod", "module example.com/fixture\n\ngo 1.26\n")
	write(".hidden/go.mod", "module example.com/hidden\n\ngo 1.26\n")
	got, err := nestedModules(module{Root: root, Path: "example.com/top", Base: "example.com/top"})
	if err != nil {
		t.Fatal(err)
	}
	want := []module{{Root: filepath.Join(root, "exporter"), Path: "example.com/top/exporter", Base: "example.com/top"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("nestedModules (-want +got):\n%s", diff)
	}
	write("bad/go.mod", "go 1.26\n")
	if _, err := nestedModules(module{Root: root, Path: "example.com/top"}); err == nil {
		t.Error("a go.mod without a module line was accepted")
	}
	for in, want := range map[string]string{"module a/b\n": "a/b", "modulex a\n": "", "\tmodule  c // x\n": "c", "": ""} {
		if got := modulePath([]byte(in)); got != want {
			t.Errorf("modulePath(%q) = %q, want %q", in, got, want)
		}
	}
}
