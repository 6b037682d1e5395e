package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// bootImage returns the kernel image for QEMU's -kernel: the uncompressed
// vmlinux extracted from k's bzImage into dir, which QEMU boots through its
// PVH entry point. Decompressing the bzImage inside a TCG guest costs about
// 3 s for an xz kernel (6.1) and 0.7 s for a zstd one (6.12). If the
// extraction is not possible, it returns the bzImage itself and says why.
func bootImage(ctx context.Context, k kernel, dir string) (path, why string) {
	fi, err := os.Stat(k.Image)
	if err != nil {
		return k.Image, err.Error()
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s %d %d", k.Image, fi.Size(), fi.ModTime().UnixNano())))
	path = filepath.Join(dir, fmt.Sprintf("vmlinux-%s-%s", k.Release, hex.EncodeToString(sum[:])[:12]))
	if _, err := os.Stat(path); err == nil {
		return path, ""
	}
	bz, err := os.ReadFile(k.Image)
	if err != nil {
		return k.Image, err.Error()
	}
	vmlinux, err := extractVmlinux(ctx, bz)
	if err != nil {
		return k.Image, err.Error()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return k.Image, err.Error()
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, vmlinux, 0o644); err != nil {
		return k.Image, err.Error()
	}
	if err := os.Rename(tmp, path); err != nil {
		return k.Image, err.Error()
	}
	return path, ""
}

// extractVmlinux returns the ELF kernel inside a bzImage, checking that it
// has the PVH entry point QEMU needs to boot it.
func extractVmlinux(ctx context.Context, bz []byte) ([]byte, error) {
	payload, err := bzImagePayload(bz)
	if err != nil {
		return nil, err
	}
	// The payload ends with the uncompressed size, 4 bytes little-endian.
	if len(payload) < 8 {
		return nil, errors.New("bzImage payload too short")
	}
	size := binary.LittleEndian.Uint32(payload[len(payload)-4:])
	data := payload[:len(payload)-4]
	var out []byte
	switch {
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		if out, err = io.ReadAll(zr); err != nil {
			return nil, err
		}
	case bytes.HasPrefix(data, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		out, err = decompressStdin(ctx, "xz", data)
	case bytes.HasPrefix(data, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		out, err = decompressStdin(ctx, "zstd", data)
	default:
		return nil, fmt.Errorf("bzImage payload compression % x not handled", data[:4])
	}
	if err != nil {
		return nil, err
	}
	if uint32(len(out)) != size {
		return nil, fmt.Errorf("vmlinux is %d bytes, the bzImage says %d", len(out), size)
	}
	if err := checkPVH(out); err != nil {
		return nil, err
	}
	return out, nil
}

// bzImagePayload returns the compressed kernel of a bzImage, as described
// by its setup header (Documentation/arch/x86/boot.rst, protocol 2.08+).
func bzImagePayload(bz []byte) ([]byte, error) {
	if len(bz) < 0x250 || string(bz[0x202:0x206]) != "HdrS" {
		return nil, errors.New("not a bzImage")
	}
	if v := binary.LittleEndian.Uint16(bz[0x206:]); v < 0x208 {
		return nil, fmt.Errorf("boot protocol %#x has no payload fields", v)
	}
	setupSects := int(bz[0x1f1])
	if setupSects == 0 {
		setupSects = 4
	}
	off := binary.LittleEndian.Uint32(bz[0x248:])
	n := binary.LittleEndian.Uint32(bz[0x24c:])
	start := uint64(setupSects+1)*512 + uint64(off)
	if start+uint64(n) > uint64(len(bz)) {
		return nil, errors.New("bzImage payload out of bounds")
	}
	return bz[start : start+uint64(n)], nil
}

func decompressStdin(ctx context.Context, tool string, data []byte) ([]byte, error) {
	bin, err := lookTool(tool, tool)
	if err != nil {
		return nil, err
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "-dc")
	cmd.Stdin = bytes.NewReader(data)
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s -dc: %v: %s", tool, err, strings.TrimSpace(errOut.String()))
	}
	return out.Bytes(), nil
}

// checkPVH checks that an ELF kernel has the Xen PVH entry note
// (XEN_ELFNOTE_PHYS32_ENTRY), without which QEMU cannot boot it.
func checkPVH(vmlinux []byte) error {
	f, err := elf.NewFile(bytes.NewReader(vmlinux))
	if err != nil {
		return fmt.Errorf("vmlinux: %v", err)
	}
	defer f.Close()
	const xenElfnotePhys32Entry = 18
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		notes, err := io.ReadAll(p.Open())
		if err != nil {
			return fmt.Errorf("vmlinux notes: %v", err)
		}
		for len(notes) >= 12 {
			namesz := binary.LittleEndian.Uint32(notes[0:])
			descsz := binary.LittleEndian.Uint32(notes[4:])
			typ := binary.LittleEndian.Uint32(notes[8:])
			nameEnd := 12 + align4(namesz)
			end := nameEnd + align4(descsz)
			if end > uint64(len(notes)) {
				break
			}
			if typ == xenElfnotePhys32Entry && string(bytes.TrimRight(notes[12:12+uint64(namesz)], "\x00")) == "Xen" {
				return nil
			}
			notes = notes[end:]
		}
	}
	return errors.New("vmlinux has no PVH entry point (CONFIG_PVH)")
}

func align4(n uint32) uint64 { return (uint64(n) + 3) &^ 3 }
