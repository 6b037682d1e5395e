package ibsysfs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

func write(t *testing.T, dir, file, v string) {
	t.Helper()
	p := filepath.Join(dir, file)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadRules checks sys_read_string's cuts and sys_read_uint's,
// sys_read_guid's and sys_read_gid's parsing.
func TestReadRules(t *testing.T) {
	dir := t.TempDir()
	s := &Sysfs{Root: dir}
	for _, c := range []struct {
		value, want string
		max         int
	}{
		{"16.35.2000\n", "16.35.2000", NameLen},
		{"20.31.1014 (MT_0000000224)\n", "20.31.1014 (MT_0000", NameLen},
		{"a\nb\n", "a\nb", NameLen},
		{"a\nb", "a", NameLen},
		{"ab\x00cd\n", "ab", NameLen},
		{"", "", NameLen},
	} {
		write(t, dir, "f", c.value)
		got, err := s.ReadString(dir, "f", c.max)
		if err != nil || got != c.want {
			t.Errorf("ReadString(%q, %d) = %q, %v; want %q", c.value, c.max, got, err, c.want)
		}
	}
	for _, c := range []struct {
		value string
		want  uint32
	}{
		{"4: ACTIVE\n", 4}, {"0x1a\n", 26}, {"2.5 Gb/sec (1X SDR)\n", 2}, {"010\n", 8},
		{"-1\n", 0xffffffff}, {"junk\n", 0}, {"0x100000001\n", 1},
	} {
		write(t, dir, "u", c.value)
		got, err := s.ReadUint(dir, "u")
		if err != nil || got != c.want {
			t.Errorf("ReadUint(%q) = %d, %v; want %d", c.value, got, err, c.want)
		}
	}
	for _, c := range []struct {
		value string
		want  uint64
		err   bool
	}{
		{"0002:c903:0010:fa20\n", 0x0002c9030010fa20, false},
		{"0x0002:0xc903:0:1\n", 0x0002c90300000001, false},
		{"12345:1:2:3\n", 0x2345000100020003, false},
		{"1:2:3\n", 0, true},
	} {
		write(t, dir, "g", c.value)
		got, err := s.ReadGUID(dir, "g")
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ReadGUID(%q) = %#x, %v; want %#x (error %v)", c.value, got, err, c.want, c.err)
		}
	}
	write(t, dir, "gid", "fe80:0000:0000:0000:ba59:9fff:fed4:3f2a\n")
	gid, err := s.ReadGID(dir, "gid")
	want := [16]byte{0xfe, 0x80, 8: 0xba, 0x59, 0x9f, 0xff, 0xfe, 0xd4, 0x3f, 0x2a}
	if err != nil || gid != want {
		t.Errorf("ReadGID = %x, %v; want %x", gid, err, want)
	}
}

// TestErrno checks that Errno is what C's errno would be: the last failed
// call's, untouched by a value that does not parse, 0 after a list.
func TestErrno(t *testing.T) {
	dir := t.TempDir()
	s := &Sysfs{Root: dir}
	if _, err := s.ReadString(dir, "nosuch", NameLen); !errors.Is(err, os.ErrNotExist) || s.Errno != unix.ENOENT {
		t.Errorf("missing file: err %v, Errno %v; want ENOENT", err, s.Errno)
	}
	if _, err := s.ReadString(filepath.Dir(dir), filepath.Base(dir), NameLen); s.Errno != unix.EISDIR {
		t.Errorf("directory: err %v, Errno %v; want EISDIR", err, s.Errno)
	}
	write(t, dir, "g", "1:2\n")
	if _, err := s.ReadGUID(dir, "g"); err == nil || s.Errno != unix.EISDIR {
		t.Errorf("short GUID: err %v, Errno %v; want an error and errno left alone", err, s.Errno)
	}
	if cas, err := s.CAList(); err != nil || len(cas) != 0 || s.Errno != 0 {
		t.Errorf("CAList of a tree without CAs = %q, %v, Errno %v; want none, Errno 0", cas, err, s.Errno)
	}
	if got := Strerror(0); got != "Success" {
		t.Errorf("Strerror(0) = %q", got)
	}
	if got := Strerror(unix.ENOENT); got != "No such file or directory" {
		t.Errorf("Strerror(ENOENT) = %q", got)
	}
}

// TestCAList checks that iWARP devices are left out, the rest sorted, and
// that a missing root is an empty list.
func TestCAList(t *testing.T) {
	s := &Sysfs{Root: "testdata/multi"}
	cas, err := s.CAList()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"mlx4_0", "mlx5_0", "opt0", "sw0"}, cas); d != "" {
		t.Errorf("CAList (-want +got):\n%s", d)
	}
	s = &Sysfs{Root: filepath.Join(t.TempDir(), "none")}
	if cas, err := s.CAList(); err != nil || cas != nil || s.Errno != 0 {
		t.Errorf("CAList of a missing root = %q, %v, Errno %v; want nothing", cas, err, s.Errno)
	}
}

// TestCA checks umad_get_ca on the fixtures: an IB CA with two ports, a
// RoCE port, optional files missing, a switch's port 0.
func TestCA(t *testing.T) {
	s := &Sysfs{Root: "testdata/multi"}
	ca, err := s.CA("mlx4_0")
	if err != nil {
		t.Fatal(err)
	}
	if ca.NodeType != 1 || ca.NumPorts != 2 || ca.FWVer != "2.42.5000" || ca.HWVer != "0x1" || ca.CAType != "MT4099" ||
		ca.NodeGUID != 0x0002c9030010fa20 || ca.SystemGUID != 0x0002c9030010fa23 || ca.Ports[0] != nil {
		t.Errorf("mlx4_0 = %+v", ca)
	}
	p := ca.Ports[1]
	want := &Port{CAName: "mlx4_0", PortNum: 1, BaseLID: 26, SMLID: 1, State: 4, PhysState: 5, Rate: 40,
		CapMask: 0x02514868, LinkLayer: "InfiniBand", GIDPrefix: 0xfe80000000000000, PortGUID: 0x0002c9030010fa21,
		PKeys: []uint32{0xffff, 0}}
	if d := cmp.Diff(want, p); d != "" {
		t.Errorf("mlx4_0 port 1 (-want +got):\n%s", d)
	}
	if p := ca.Ports[2]; p.Rate != 2 || p.State != 1 || p.PhysState != 2 {
		t.Errorf("mlx4_0 port 2 = %+v; want rate 2, Down, Polling", p)
	}
	ca, err = s.CA("opt0")
	if err != nil {
		t.Fatal(err)
	}
	if ca.HWVer != "" || ca.CAType != "" || ca.FWVer != "20.31.1014 (MT_0000" || ca.Ports[1].LinkLayer != "IB" {
		t.Errorf("opt0 = %+v, port %+v; want the optional files defaulted, fw_ver cut", ca, ca.Ports[1])
	}
	ca, err = s.CA("sw0")
	if err != nil {
		t.Fatal(err)
	}
	if ca.NodeType != 2 || ca.NumPorts != 0 || ca.Ports[0] == nil || ca.Ports[0].PortGUID != 0x7cfe900300123400 {
		t.Errorf("sw0 = %+v", ca)
	}
	guids, err := s.PortGUIDs("mlx4_0", 64)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]uint64{0, 0x0002c9030010fa21, 0x0002c9030010fa22}, guids); d != "" {
		t.Errorf("PortGUIDs (-want +got):\n%s", d)
	}
	if _, err := s.PortGUIDs("mlx4_0", 2); !errors.Is(err, unix.ENOMEM) {
		t.Errorf("PortGUIDs with room for 2: %v; want ENOMEM", err)
	}
}

// TestCAFailures checks that a missing required file or a port without
// P_Keys fails the whole CA, with libibumad's warning for the latter.
func TestCAFailures(t *testing.T) {
	var warn bytes.Buffer
	s := &Sysfs{Root: "testdata/missing", Warn: &warn}
	if _, err := s.CA("mlx5_1"); err == nil || s.Errno != unix.ENOENT {
		t.Errorf("CA without cap_mask: %v, Errno %v; want an error, ENOENT", err, s.Errno)
	}
	if _, err := s.CA("nosuch"); err == nil {
		t.Error("CA nosuch: no error")
	}
	s = &Sysfs{Root: "testdata/nopkeys", Warn: &warn}
	if _, err := s.CA("rxe0"); !errors.Is(err, unix.EIO) {
		t.Errorf("CA without P_Keys: %v; want EIO", err)
	}
	got := warn.String()
	if !strings.HasPrefix(got, "ibwarn: [") ||
		!strings.HasSuffix(got, "] get_port: no pkeys found for rxe0:1 (at dir testdata/nopkeys/rxe0/ports/1/pkeys)...\n") {
		t.Errorf("warning %q", got)
	}
	dir := t.TempDir()
	write(t, dir, "bad0/node_type", "1\n")
	write(t, dir, "bad0/node_guid", "0:0:0:1\n")
	write(t, dir, "bad0/sys_image_guid", "0:0:0:1\n")
	write(t, dir, "bad0/ports/10/lid", "0\n")
	s = &Sysfs{Root: dir}
	if _, err := s.CA("bad0"); !errors.Is(err, unix.EIO) {
		t.Errorf("CA with port 10: %v; want EIO", err)
	}
}

func TestAtoi(t *testing.T) {
	for s, want := range map[string]int{"1": 1, " 2x": 2, "-3": -3, "+4": 4, "x": 0, "": 0, "09": 9} {
		if got := atoi(s); got != want {
			t.Errorf("atoi(%q) = %d; want %d", s, got, want)
		}
	}
}

// TestCAListNotADirectory checks that a root that is a file fails the
// list with ENOTDIR, as opendir does.
func TestCAListNotADirectory(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "file", "")
	s := &Sysfs{Root: filepath.Join(dir, "file")}
	if _, err := s.CAList(); !errors.Is(err, unix.ENOTDIR) || s.Errno != unix.ENOTDIR {
		t.Errorf("CAList of a file: %v, Errno %v; want ENOTDIR", err, s.Errno)
	}
}
