package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompareReleases(t *testing.T) {
	ordered := []string{
		"5.10.0-30-amd64",
		"6.1.0-18-amd64",
		"6.1.0-57-amd64",
		"6.1.0-57-rt-amd64",
		"6.12.117+deb12-amd64",
		"6.12.117+deb12-cloud-amd64",
		"6.18.44",
	}
	for i := range ordered {
		for j := range ordered {
			got := compareReleases(ordered[i], ordered[j])
			switch {
			case i < j && got >= 0, i > j && got <= 0, i == j && got != 0:
				t.Errorf("compareReleases(%q, %q) = %d", ordered[i], ordered[j], got)
			}
		}
	}
}

func TestSelectKernels(t *testing.T) {
	installed := []kernel{
		{Release: "6.1.0-57-amd64"},
		{Release: "6.12.117+deb12-amd64"},
	}
	tests := []struct {
		spec string
		want []string
		err  string
	}{
		{spec: "all", want: []string{"6.1.0-57-amd64", "6.12.117+deb12-amd64"}},
		{spec: "6.12.117+deb12-amd64", want: []string{"6.12.117+deb12-amd64"}},
		{spec: "6.12", want: []string{"6.12.117+deb12-amd64"}},
		{spec: "6.1", want: []string{"6.1.0-57-amd64"}},
		{spec: "6.12,6.1", want: []string{"6.12.117+deb12-amd64", "6.1.0-57-amd64"}},
		{spec: "6.1,6.1.0-57-amd64", want: []string{"6.1.0-57-amd64"}},
		{spec: "6", err: "ambiguous"},
		{spec: "6.2", err: "not found"},
		{spec: "6.1.0-57", want: []string{"6.1.0-57-amd64"}},
		{spec: "6.1.0-5", err: "not found"},
		{spec: "", err: "not found"},
	}
	for _, tt := range tests {
		got, err := selectKernels(tt.spec, installed)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("selectKernels(%q) = %v, %v; want an error containing %q", tt.spec, got, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("selectKernels(%q): %v", tt.spec, err)
			continue
		}
		var names []string
		for _, k := range got {
			names = append(names, k.Release)
		}
		if diff := cmp.Diff(tt.want, names); diff != "" {
			t.Errorf("selectKernels(%q) (-want +got):\n%s", tt.spec, diff)
		}
	}
	if _, err := selectKernels("all", nil); err == nil {
		t.Error("selectKernels with no kernel installed: no error")
	}
}

func TestFindKernels(t *testing.T) {
	root := t.TempDir()
	boot := filepath.Join(root, "boot")
	mods := filepath.Join(root, "modules")
	write := func(path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rxe := "kernel/drivers/infiniband/sw/rxe/"
	write(filepath.Join(boot, "vmlinuz-6.12.117+deb12-amd64"))
	write(filepath.Join(mods, "6.12.117+deb12-amd64", rxe, "rdma_rxe.ko.xz"))
	write(filepath.Join(boot, "vmlinuz-6.1.0-57-amd64"))
	write(filepath.Join(mods, "6.1.0-57-amd64", rxe, "rdma_rxe.ko"))
	write(filepath.Join(boot, "vmlinuz-6.1.0-50-amd64")) // modules removed
	write(filepath.Join(boot, "vmlinuz-6.1.0-57-amd64.old"))
	write(filepath.Join(boot, "config-6.1.0-57-amd64"))

	got, err := findKernels(boot, mods)
	if err != nil {
		t.Fatal(err)
	}
	want := []kernel{
		{Release: "6.1.0-57-amd64", Image: filepath.Join(boot, "vmlinuz-6.1.0-57-amd64")},
		{Release: "6.12.117+deb12-amd64", Image: filepath.Join(boot, "vmlinuz-6.12.117+deb12-amd64")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findKernels (-want +got):\n%s", diff)
	}
}
