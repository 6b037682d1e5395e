package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// buildInitramfs writes (or reuses) the gzip'd newc initramfs for kernel k
// under dir and returns its path. It holds /bin/busybox, /init, the guest
// modules of k uncompressed (extra: out-of-tree ones, such as siw.ko, last)
// and /etc/modules.list, their insmod order. The
// file name carries a hash of the inputs, so a kept work directory reuses
// it until the kernel, busybox or the init script changes.
func buildInitramfs(ctx context.Context, t *tools, k kernel, dir string, extra ...string) (path string, warnings []string, err error) {
	loads, warnings, err := resolveModules(ctx, t.modprobe, k.Release, extra...)
	if err != nil {
		return "", nil, err
	}
	var list strings.Builder
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", k.Release, initScript)
	for _, in := range append([]string{t.busybox, k.Image}, modulePaths(loads)...) {
		fi, err := os.Stat(in)
		if err != nil {
			return "", nil, err
		}
		fmt.Fprintf(h, "%s %d %d\n", in, fi.Size(), fi.ModTime().UnixNano())
	}
	for _, l := range loads {
		list.WriteString(strings.TrimSpace(guestModulePath(l.Path)+" "+l.Args) + "\n")
	}
	h.Write([]byte(list.String()))
	path = filepath.Join(dir, fmt.Sprintf("initramfs-%s-%s.cpio.gz", k.Release, hex.EncodeToString(h.Sum(nil))[:12]))
	if _, err := os.Stat(path); err == nil {
		return path, warnings, nil
	}

	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return "", nil, err
	}
	cw := newCPIOWriter(zw)
	for _, d := range []string{"dev", "proc", "sys", "mnt", "tmp", "etc", "bin", "sbin", "usr/bin", "usr/sbin"} {
		cw.Dir(d, 0o755)
	}
	// The kernel opens /dev/console for /init's standard streams before
	// /init can mount devtmpfs.
	cw.CharDev("dev/console", 0o600, 5, 1)
	bb, err := os.ReadFile(t.busybox)
	if err != nil {
		return "", nil, err
	}
	cw.File("bin/busybox", 0o755, bb)
	cw.File("init", 0o755, []byte(initScript))
	cw.File("etc/modules.list", 0o644, []byte(list.String()))
	for _, l := range loads {
		data, err := readModule(ctx, l.Path)
		if err != nil {
			return "", nil, err
		}
		cw.File(guestModulePath(l.Path), 0o644, data)
	}
	if err := cw.Close(); err != nil {
		return "", nil, fmt.Errorf("initramfs for %s: %v", k.Release, err)
	}
	if err := zw.Close(); err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return "", nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", nil, err
	}
	return path, warnings, nil
}

func modulePaths(loads []moduleLoad) []string {
	p := make([]string, len(loads))
	for i, l := range loads {
		p[i] = l.Path
	}
	return p
}
