package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKernelSeries(t *testing.T) {
	for rel, want := range map[string]string{
		"6.1.0-57-amd64":         "6.1",
		"6.12.118+deb12-amd64":   "6.12",
		"6.12.118-1~deb12-arm":   "6.12",
		"10.3.0-rc1-cloud-amd64": "10.3",
	} {
		if got, err := kernelSeries(rel); err != nil || got != want {
			t.Errorf("kernelSeries(%q) = %q, %v; want %q", rel, got, err, want)
		}
	}
	for _, bad := range []string{"", "6", "6.1", ".1.2"} {
		if got, err := kernelSeries(bad); err == nil {
			t.Errorf("kernelSeries(%q) = %q, want an error", bad, got)
		}
	}
}

func TestSIWModulePaths(t *testing.T) {
	m := siwModule{Release: "6.12.118+deb12-amd64", Version: "6.12.118-1~deb12u1"}
	if got, want := m.headersPackage(), "linux-headers-6.12.118+deb12-amd64"; got != want {
		t.Errorf("headersPackage = %q, want %q", got, want)
	}
	if got, err := m.sourcePackage(); err != nil || got != "linux-source-6.12=6.12.118-1~deb12u1" {
		t.Errorf("sourcePackage = %q, %v", got, err)
	}
	if got, want := m.cachePath(siwCacheDir), "/var/cache/rdmastack-vm/siw/6.12.118+deb12-amd64/6.12.118-1~deb12u1+"+siwPatchTag+"/siw.ko"; got != want {
		t.Errorf("cachePath = %q, want %q", got, want)
	}
	if got, want := sourceMember("6.1"), "./usr/src/linux-source-6.1.tar.xz"; got != want {
		t.Errorf("sourceMember = %q, want %q", got, want)
	}
	if got, want := siwMember("6.1"), "linux-source-6.1/drivers/infiniband/sw/siw"; got != want {
		t.Errorf("siwMember = %q, want %q", got, want)
	}
	want := []string{"-j2", "-C", "/lib/modules/6.1.0-57-amd64/build", "M=/x/siw", "CONFIG_RDMA_SIW=m", "modules"}
	if diff := cmp.Diff(want, makeArgs("6.1.0-57-amd64", "/x/siw", 2)); diff != "" {
		t.Errorf("makeArgs (-want +got):\n%s", diff)
	}
}

func TestParseDepends(t *testing.T) {
	for out, want := range map[string][]string{
		"ib_core,libcrc32c\n":           {"ib_core", "libcrc32c"},
		"ib_core,ib_uverbs,libcrc32c\n": {"ib_core", "ib_uverbs", "libcrc32c"},
		"\n":                            nil,
	} {
		if diff := cmp.Diff(want, parseDepends(out)); diff != "" {
			t.Errorf("parseDepends(%q) (-want +got):\n%s", out, diff)
		}
	}
}
