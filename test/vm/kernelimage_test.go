package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"strings"
	"testing"
)

// minimalELF returns an ELF64 file whose only program header is a PT_NOTE
// segment holding one note of the given name and type.
func minimalELF(noteName string, noteType uint32) []byte {
	var note bytes.Buffer
	name := append([]byte(noteName), 0)
	binary.Write(&note, binary.LittleEndian, [3]uint32{uint32(len(name)), 4, noteType})
	note.Write(name)
	note.Write(make([]byte, pad4(len(name))))
	binary.Write(&note, binary.LittleEndian, uint32(0x1000000))

	const ehsize, phsize = 64, 56
	var f bytes.Buffer
	f.Write([]byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0})
	f.Write(make([]byte, 8))
	le := func(v any) { binary.Write(&f, binary.LittleEndian, v) }
	le(uint16(2))               // e_type: ET_EXEC
	le(uint16(62))              // e_machine: EM_X86_64
	le(uint32(1))               // e_version
	le(uint64(0x1000000))       // e_entry
	le(uint64(ehsize))          // e_phoff
	le(uint64(0))               // e_shoff
	le(uint32(0))               // e_flags
	le(uint16(ehsize))          // e_ehsize
	le(uint16(phsize))          // e_phentsize
	le(uint16(1))               // e_phnum
	le(uint16(64))              // e_shentsize
	le(uint16(0))               // e_shnum
	le(uint16(0))               // e_shstrndx
	le(uint32(4))               // p_type: PT_NOTE
	le(uint32(4))               // p_flags
	le(uint64(ehsize + phsize)) // p_offset
	le(uint64(0))               // p_vaddr
	le(uint64(0))               // p_paddr
	le(uint64(note.Len()))      // p_filesz
	le(uint64(note.Len()))      // p_memsz
	le(uint64(4))               // p_align
	f.Write(note.Bytes())
	return f.Bytes()
}

// fakeBzImage wraps payload in a bzImage setup header, protocol 2.15.
func fakeBzImage(payload []byte) []byte {
	const setupSects = 3
	b := make([]byte, (setupSects+1)*512)
	b[0x1f1] = setupSects
	copy(b[0x202:], "HdrS")
	binary.LittleEndian.PutUint16(b[0x206:], 0x20f)
	binary.LittleEndian.PutUint32(b[0x248:], 100) // payload_offset
	binary.LittleEndian.PutUint32(b[0x24c:], uint32(len(payload)))
	b = append(b, make([]byte, 100)...)
	b = append(b, payload...)
	return append(b, "trailing setup data"...)
}

func gzipPayload(vmlinux []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(vmlinux)
	zw.Close()
	return binary.LittleEndian.AppendUint32(buf.Bytes(), uint32(len(vmlinux)))
}

func TestExtractVmlinux(t *testing.T) {
	vmlinux := minimalELF("Xen", 18)
	got, err := extractVmlinux(context.Background(), fakeBzImage(gzipPayload(vmlinux)))
	if err != nil {
		t.Fatalf("extractVmlinux: %v", err)
	}
	if !bytes.Equal(got, vmlinux) {
		t.Error("extracted vmlinux differs")
	}
}

func TestExtractVmlinuxErrors(t *testing.T) {
	good := minimalELF("Xen", 18)
	wrongSize := gzipPayload(good)
	binary.LittleEndian.PutUint32(wrongSize[len(wrongSize)-4:], 12345)
	tests := []struct {
		name string
		bz   []byte
		want string
	}{
		{"not a bzImage", []byte(strings.Repeat("x", 1024)), "not a bzImage"},
		{"no PVH note", fakeBzImage(gzipPayload(minimalELF("Xen", 17))), "no PVH entry point"},
		{"other note owner", fakeBzImage(gzipPayload(minimalELF("GNU", 18))), "no PVH entry point"},
		{"not ELF", fakeBzImage(gzipPayload([]byte("plain data"))), "vmlinux:"},
		{"size mismatch", fakeBzImage(wrongSize), "the bzImage says 12345"},
		{"unknown compression", fakeBzImage([]byte("LZ4!compressed-data")), "not handled"},
	}
	for _, tt := range tests {
		_, err := extractVmlinux(context.Background(), tt.bz)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: extractVmlinux = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestBzImagePayloadBounds(t *testing.T) {
	bz := fakeBzImage([]byte("payload"))
	binary.LittleEndian.PutUint32(bz[0x24c:], 1<<30)
	if _, err := bzImagePayload(bz); err == nil {
		t.Error("no error for a payload past the end of the file")
	}
	binary.LittleEndian.PutUint16(bz[0x206:], 0x207)
	if _, err := bzImagePayload(bz); err == nil {
		t.Error("no error for boot protocol 2.07")
	}
}
