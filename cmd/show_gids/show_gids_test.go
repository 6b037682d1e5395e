package main

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/internal/sysfs"
)

// TestShowGIDs prints the GID tables of device's ConnectX fixture: RoCE
// v1 and v2 entries of eth0, IPv4-mapped entries of a macvlan and an
// ipvlan, an empty slot left out, the IB device's port GID without a
// type, the SF's entry; then one device asked by name.
func TestShowGIDs(t *testing.T) {
	fs := sysfs.FS{Root: "../../device/testdata/connectx"}
	var out bytes.Buffer
	if err := show(&out, fs, nil); err != nil {
		t.Fatal(err)
	}
	want := header + headerRule +
		"mlx5_0\t1\t0\tfe80:0000:0000:0000:0e42:a1ff:fed0:f1e2\t\t\tv1\teth0\n" +
		"mlx5_0\t1\t1\tfe80:0000:0000:0000:0e42:a1ff:fed0:f1e2\t\t\tv2\teth0\n" +
		"mlx5_0\t1\t2\t0000:0000:0000:0000:0000:ffff:c0a8:0702\t192.168.7.2  \tv2\tmv0\n" +
		"mlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:c0a8:0803\t192.168.8.3  \tv2\tipvl0\n" +
		"mlx5_1\t1\t0\tfe80:0000:0000:0000:0c42:a103:00d0:f1e3\t\t\t\t\n" +
		"mlx5_2\t1\t0\tfe80:0000:0000:0000:0e42:a1ff:fed0:0002\t\t\tv1\tenp3s0f0s2\n" +
		"n_gids_found=6\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("show_gids (-want +got):\n%s", diff)
	}
	out.Reset()
	if err := show(&out, fs, []string{"mlx5_2"}); err != nil {
		t.Fatal(err)
	}
	if want := header + headerRule + "mlx5_2\t1\t0\tfe80:0000:0000:0000:0e42:a1ff:fed0:0002\t\t\tv1\tenp3s0f0s2\nn_gids_found=1\n"; out.String() != want {
		t.Errorf("show_gids mlx5_2:\n%q\nwant\n%q", out.String(), want)
	}
}

func TestVersionAndIPv4(t *testing.T) {
	for typ, want := range map[string]string{"IB/RoCE v1": "v1", "RoCE v2": "v2", "": ""} {
		if got := version(typ); got != want {
			t.Errorf("version(%q) = %q, want %q", typ, got, want)
		}
	}
	if ip, ok := ipv4("0000:0000:0000:0000:0000:ffff:0a4d:0001"); !ok || ip != "10.77.0.1" {
		t.Errorf("ipv4 = %q, %v", ip, ok)
	}
	if _, ok := ipv4("fe80:0000:0000:0000:0000:0000:0000:0001"); ok {
		t.Error("a link-local GID has an IPv4 address")
	}
}
