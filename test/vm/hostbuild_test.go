package main

import (
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
