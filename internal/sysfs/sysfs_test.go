package sysfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// tree makes a small sysfs-like tree: attributes with newlines, a
// counters directory with a number, a non-number and a subdirectory, and
// a device link.
func tree(t *testing.T) FS {
	t.Helper()
	root := t.TempDir()
	write := func(p, v string) {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("class/infiniband/mlx5_0/fw_ver", "28.39.1002\n")
	write("class/infiniband/mlx5_0/ports/1/gids/0", "fe80:0000:0000:0000:0e42:a1ff:fed0:f1e2\n")
	write("class/infiniband/mlx5_0/ports/1/counters/port_xmit_data", "42\n")
	write("class/infiniband/mlx5_0/ports/1/counters/port_rcv_remote_physical_errors", "N/A (no PMA)\n")
	write("class/infiniband/mlx5_0/ports/1/counters/sub/x", "1\n")
	write("class/net/eth0/type", "1\n")
	write("class/net/eth0/name", "eth0 \n")
	write("bus/pci/devices/0000:03:00.0/vendor", "0x15b3\n")
	if err := os.Symlink("../../../bus/pci/devices/0000:03:00.0", filepath.Join(root, "class/net/eth0/device")); err != nil {
		t.Fatal(err)
	}
	return FS{Root: root}
}

func TestRead(t *testing.T) {
	fs := tree(t)
	if v, err := fs.Read("class", "infiniband", "mlx5_0", "fw_ver"); err != nil || v != "28.39.1002" {
		t.Errorf("Read fw_ver = %q, %v", v, err)
	}
	if v, err := fs.ReadUint("class", "net", "eth0", "type"); err != nil || v != 1 {
		t.Errorf("ReadUint type = %d, %v", v, err)
	}
	_, err := fs.ReadUint("class", "net", "eth0", "name")
	var pe *os.PathError
	if !errors.Is(err, unix.EPROTO) || !errors.As(err, &pe) {
		t.Errorf("ReadUint of a name: %v, want EPROTO in a PathError", err)
	}
	_, err = fs.Read("class", "net", "nosuch", "type")
	if !errors.Is(err, os.ErrNotExist) || !errors.Is(err, unix.ENOENT) {
		t.Errorf("Read of a missing attribute: %v", err)
	}
	if v, err := fs.Link("class", "net", "eth0", "device"); err != nil || v != "0000:03:00.0" {
		t.Errorf("Link = %q, %v", v, err)
	}
	if v, err := fs.Read("class", "net", "eth0", "device", "vendor"); err != nil || v != "0x15b3" {
		t.Errorf("Read through a link = %q, %v", v, err)
	}
	var buf [4]byte
	if n, err := ReadRaw(fs.Path("class", "infiniband", "mlx5_0", "fw_ver"), buf[:]); err != nil || string(buf[:n]) != "28.3" {
		t.Errorf("ReadRaw of 4 bytes = %q, %v", buf[:n], err)
	}
}

func TestListsAndCounters(t *testing.T) {
	fs := tree(t)
	dir := []string{"class", "infiniband", "mlx5_0", "ports", "1", "counters"}
	names, err := fs.List(dir...)
	if err != nil || !cmp.Equal(names, []string{"port_rcv_remote_physical_errors", "port_xmit_data", "sub"}) {
		t.Errorf("List = %v, %v", names, err)
	}
	files, err := fs.Files(dir...)
	if err != nil || !cmp.Equal(files, []string{"port_rcv_remote_physical_errors", "port_xmit_data"}) {
		t.Errorf("Files = %v, %v", files, err)
	}
	if got := Counters(fs.Path(dir...)); !cmp.Equal(got, []Counter{{"port_xmit_data", 42}}) {
		t.Errorf("Counters = %v", got)
	}
	if got := Counters(fs.Path("nosuch")); got != nil {
		t.Errorf("Counters of a missing directory = %v", got)
	}
	d, err := OpenDir(fs.Path(dir...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Read("nosuch"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Dir.Read of a missing attribute: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := OpenDir(fs.Path("nosuch")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenDir of a missing directory: %v", err)
	}
}

func TestParseGID(t *testing.T) {
	g, err := ParseGID("fe80:0000:0000:0000:0e42:a1ff:fed0:f1e2\n")
	want := [16]byte{0xfe, 0x80, 8: 0x0e, 0x42, 0xa1, 0xff, 0xfe, 0xd0, 0xf1, 0xe2}
	if err != nil || g != want {
		t.Errorf("ParseGID = %x, %v", g, err)
	}
	for _, bad := range []string{"", "fe80::1", "fe80:0000:0000:0000:0e42:a1ff:fed0", "fe80:0000:0000:0000:0e42:a1ff:fed0:f1e", "fe80:0000:0000:0000:0e42:a1ff:fed0:zzzz"} {
		if _, err := ParseGID(bad); !errors.Is(err, unix.EPROTO) {
			t.Errorf("ParseGID(%q): %v, want EPROTO", bad, err)
		}
	}
}

func FuzzParseGID(f *testing.F) {
	f.Add("fe80:0000:0000:0000:0e42:a1ff:fed0:f1e2")
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGID(s)
		if err != nil {
			return
		}
		if g2, err := ParseGID(formatGID(g)); err != nil || g2 != g {
			t.Fatalf("round trip of %q: %x, %v", s, g2, err)
		}
	})
}

func formatGID(g [16]byte) string {
	const hex = "0123456789abcdef"
	b := make([]byte, 0, 39)
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			b = append(b, ':')
		}
		b = append(b, hex[g[i]>>4], hex[g[i]&15], hex[g[i+1]>>4], hex[g[i+1]&15])
	}
	return string(b)
}
