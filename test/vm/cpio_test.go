package main

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// cpioEntry is one parsed newc entry.
type cpioEntry struct {
	Name         string
	Mode         uint32
	RMajor       uint32
	RMinor       uint32
	Data         string
	Ino, NLink   uint32
	HeaderOffset int
}

// readCPIO parses a newc archive up to its trailer, checking the 4-byte
// alignment the kernel's unpacker relies on.
func readCPIO(t *testing.T, b []byte) []cpioEntry {
	t.Helper()
	var entries []cpioEntry
	off := 0
	for {
		if off%4 != 0 {
			t.Fatalf("header at offset %d is not 4-byte aligned", off)
		}
		if len(b)-off < 110 {
			t.Fatalf("truncated header at offset %d", off)
		}
		h := b[off : off+110]
		if string(h[:6]) != "070701" {
			t.Fatalf("bad magic %q at offset %d", h[:6], off)
		}
		field := func(i int) uint32 {
			v, err := strconv.ParseUint(string(h[6+8*i:6+8*i+8]), 16, 32)
			if err != nil {
				t.Fatalf("field %d at offset %d: %v", i, off, err)
			}
			return uint32(v)
		}
		e := cpioEntry{Ino: field(0), Mode: field(1), NLink: field(4), RMajor: field(9), RMinor: field(10), HeaderOffset: off}
		size, namesize := int(field(6)), int(field(11))
		nameStart := off + 110
		name := b[nameStart : nameStart+namesize]
		if name[len(name)-1] != 0 {
			t.Fatalf("name at offset %d not NUL-terminated", nameStart)
		}
		e.Name = string(name[:len(name)-1])
		dataStart := nameStart + namesize + pad4(110+namesize)
		if dataStart%4 != 0 {
			t.Fatalf("data of %s is not 4-byte aligned", e.Name)
		}
		e.Data = string(b[dataStart : dataStart+size])
		off = dataStart + size + pad4(size)
		if e.Name == "TRAILER!!!" {
			if off != len(b) {
				t.Fatalf("%d bytes after the trailer", len(b)-off)
			}
			return entries
		}
		entries = append(entries, e)
	}
}

func TestCPIOWriter(t *testing.T) {
	var buf bytes.Buffer
	w := newCPIOWriter(&buf)
	w.Dir("/dev", 0o755)
	w.CharDev("dev/console", 0o600, 5, 1)
	w.File("/init", 0o755, []byte("#!/bin/sh\n"))
	w.File("lib/modules/6.1.0/kernel/a.ko", 0o644, []byte("abc"))
	w.File("lib/modules/6.1.0/kernel/b.ko", 0o644, []byte("abcd"))
	w.Symlink("bin/sh", "busybox")
	w.Dir("lib/modules", 0o755) // already there: no second entry
	w.File("empty", 0o644, nil)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	type simple struct {
		Name   string
		Mode   string
		Data   string
		RMajor uint32
		RMinor uint32
	}
	var got []simple
	inos := make(map[uint32]bool)
	for _, e := range readCPIO(t, buf.Bytes()) {
		got = append(got, simple{e.Name, fmt.Sprintf("%06o", e.Mode), e.Data, e.RMajor, e.RMinor})
		if inos[e.Ino] {
			t.Errorf("inode %d used twice", e.Ino)
		}
		inos[e.Ino] = true
	}
	want := []simple{
		{Name: "dev", Mode: "040755"},
		{Name: "dev/console", Mode: "020600", RMajor: 5, RMinor: 1},
		{Name: "init", Mode: "100755", Data: "#!/bin/sh\n"},
		{Name: "lib", Mode: "040755"},
		{Name: "lib/modules", Mode: "040755"},
		{Name: "lib/modules/6.1.0", Mode: "040755"},
		{Name: "lib/modules/6.1.0/kernel", Mode: "040755"},
		{Name: "lib/modules/6.1.0/kernel/a.ko", Mode: "100644", Data: "abc"},
		{Name: "lib/modules/6.1.0/kernel/b.ko", Mode: "100644", Data: "abcd"},
		{Name: "bin", Mode: "040755"},
		{Name: "bin/sh", Mode: "120777", Data: "busybox"},
		{Name: "empty", Mode: "100644"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("archive (-want +got):\n%s", diff)
	}
}

func TestCPIOWriterDeterministic(t *testing.T) {
	build := func() []byte {
		var buf bytes.Buffer
		w := newCPIOWriter(&buf)
		w.File("etc/modules.list", 0o644, []byte("x\n"))
		w.Close()
		return buf.Bytes()
	}
	if a, b := build(), build(); !bytes.Equal(a, b) {
		t.Error("two archives of the same input differ")
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, fmt.Errorf("disk full")
	}
	f.n--
	return len(p), nil
}

func TestCPIOWriterError(t *testing.T) {
	w := newCPIOWriter(&failWriter{n: 1})
	w.File("a", 0o644, []byte("data"))
	if err := w.Close(); err == nil {
		t.Error("Close after a failed write: no error")
	}
}
