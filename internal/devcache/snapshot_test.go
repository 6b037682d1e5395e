package devcache

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/sysfs"
	"github.com/rdmastack/rdmastack/nldev"
)

// TestJoinMadFromSysfs: a port's umad and issm nodes that netlink does not
// name (6.1 names no issm) come from class/infiniband_mad, matched by the
// nodes' ibdev and port attributes, with the class's ABI version and each
// node's dev_t; a node netlink names stays netlink's, and a port without
// a node has none.
func TestJoinMadFromSysfs(t *testing.T) {
	root := t.TempDir()
	write := func(val string, elem ...string) {
		p := filepath.Join(append([]string{root, "class", "infiniband_mad"}, elem...)...)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(val+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("5", "abi_version")
	for _, n := range []struct{ node, ibdev, port, dev string }{
		{"umad0", "mlx5_0", "1", "231:0"}, {"issm0", "mlx5_0", "1", "231:64"},
		{"umad1", "mlx5_0", "2", "231:1"},
		{"umad2", "rxe1", "1", "231:2"}, {"issm2", "rxe1", "1", "231:66"},
		{"issm9", "mlx5_0", "1", "231:73"}, // a second issm of a port: the first stands
	} {
		write(n.ibdev, n.node, "ibdev")
		write(n.port, n.node, "port")
		write(n.dev, n.node, "dev")
	}
	fromNetlink := &nldev.Chardev{Type: nldev.ChardevUmad, Name: "umad7", ABI: 5, Dev: unix.Mkdev(231, 7)}
	dev := func(name string, index uint32, ports int, umad []*nldev.Chardev) nldev.DeviceInventory {
		d := nldev.DeviceInventory{Device: nldev.Device{Name: name, Index: index, Protocol: "roce"},
			Uverbs: &nldev.Chardev{Type: nldev.ChardevUverbs, Name: "uverbs0"}, Umad: umad}
		for p := 1; p <= ports; p++ {
			d.Ports = append(d.Ports, nldev.Port{Index: uint32(p)})
		}
		return d
	}
	inv := &nldev.Inventory{Devices: []nldev.DeviceInventory{
		dev("mlx5_0", 0, 2, nil),
		dev("rxe1", 1, 1, []*nldev.Chardev{fromNetlink}),
		dev("rxe2", 2, 1, nil),
	}}
	s := Join(sysfs.FS{Root: root}, inv)
	mad := func(typ nldev.ChardevType, name string, minor uint32) *nldev.Chardev {
		return &nldev.Chardev{Type: typ, Name: name, ABI: 5, Dev: unix.Mkdev(231, minor)}
	}
	want := [][2][]*nldev.Chardev{
		{{mad(nldev.ChardevUmad, "umad0", 0), mad(nldev.ChardevUmad, "umad1", 1)}, {mad(nldev.ChardevIssm, "issm0", 64), nil}},
		{{fromNetlink}, {mad(nldev.ChardevIssm, "issm2", 66)}},
		{{nil}, {nil}},
	}
	for i, d := range s.Devices {
		if diff := cmp.Diff(want[i], [2][]*nldev.Chardev{d.Umad, d.Issm}); diff != "" {
			t.Errorf("%s: umad and issm (-want +got):\n%s", d.Name, diff)
		}
	}
}
