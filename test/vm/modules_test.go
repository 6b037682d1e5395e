package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseShowDepends(t *testing.T) {
	// Output of modprobe -S 6.12.117+deb12-amd64 --show-depends for
	// virtio_pci, dummy and rdma_rxe (shortened).
	out := `builtin virtio_pci
insmod /lib/modules/6.12.117+deb12-amd64/kernel/drivers/net/dummy.ko.xz numdummies=0 
insmod /lib/modules/6.12.117+deb12-amd64/kernel/net/ipv4/udp_tunnel.ko.xz 
insmod /lib/modules/6.12.117+deb12-amd64/kernel/drivers/infiniband/core/ib_core.ko.xz 
insmod /lib/modules/6.12.117+deb12-amd64/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko.xz 

garbage
`
	loads, builtin := parseShowDepends(out)
	wantLoads := []moduleLoad{
		{Path: "/lib/modules/6.12.117+deb12-amd64/kernel/drivers/net/dummy.ko.xz", Args: "numdummies=0"},
		{Path: "/lib/modules/6.12.117+deb12-amd64/kernel/net/ipv4/udp_tunnel.ko.xz"},
		{Path: "/lib/modules/6.12.117+deb12-amd64/kernel/drivers/infiniband/core/ib_core.ko.xz"},
		{Path: "/lib/modules/6.12.117+deb12-amd64/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko.xz"},
	}
	if diff := cmp.Diff(wantLoads, loads); diff != "" {
		t.Errorf("loads (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"virtio_pci"}, builtin); diff != "" {
		t.Errorf("builtin (-want +got):\n%s", diff)
	}
}

func TestGuestModulePath(t *testing.T) {
	for in, want := range map[string]string{
		"/lib/modules/k/a.ko":     "/lib/modules/k/a.ko",
		"/lib/modules/k/a.ko.xz":  "/lib/modules/k/a.ko",
		"/lib/modules/k/a.ko.zst": "/lib/modules/k/a.ko",
		"/lib/modules/k/a.ko.gz":  "/lib/modules/k/a.ko",
	} {
		if got := guestModulePath(in); got != want {
			t.Errorf("guestModulePath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseDpkgStatus(t *testing.T) {
	out := "qemu-system-x86\tinstall ok installed\n" +
		"kmod\tinstall ok installed\n" +
		"cpio\tdeinstall ok config-files\n" +
		"perftest\tinstall ok half-configured\n"
	got := parseDpkgStatus(out, []string{"qemu-system-x86", "kmod", "cpio", "perftest", "iproute2"})
	if diff := cmp.Diff([]string{"cpio", "perftest", "iproute2"}, got); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
}
