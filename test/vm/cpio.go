package main

import (
	"fmt"
	"io"
	"path"
	"strings"
)

// File type bits of a cpio mode, as in <sys/stat.h>.
const (
	modeDir     = 0o040000
	modeRegular = 0o100000
	modeSymlink = 0o120000
	modeCharDev = 0o020000
)

// cpioWriter writes the "newc" cpio format that the kernel unpacks as an
// initramfs (Documentation/driver-api/early-userspace/buffer-format.rst).
// Parent directories are written before their first entry. Times and owners
// are zero, so the same input gives the same archive.
type cpioWriter struct {
	w    io.Writer
	ino  uint32
	dirs map[string]bool
	err  error
}

func newCPIOWriter(w io.Writer) *cpioWriter {
	return &cpioWriter{w: w, dirs: map[string]bool{".": true, "": true, "/": true}}
}

// Dir adds a directory (and its parents).
func (c *cpioWriter) Dir(name string, perm uint32) error {
	name = cleanArchiveName(name)
	c.parents(name)
	if !c.dirs[name] {
		c.dirs[name] = true
		c.entry(name, modeDir|perm&0o7777, 2, 0, 0, nil)
	}
	return c.err
}

// File adds a regular file.
func (c *cpioWriter) File(name string, perm uint32, data []byte) error {
	name = cleanArchiveName(name)
	c.parents(name)
	c.entry(name, modeRegular|perm&0o7777, 1, 0, 0, data)
	return c.err
}

// Symlink adds a symbolic link to target.
func (c *cpioWriter) Symlink(name, target string) error {
	name = cleanArchiveName(name)
	c.parents(name)
	c.entry(name, modeSymlink|0o777, 1, 0, 0, []byte(target))
	return c.err
}

// CharDev adds a character device node.
func (c *cpioWriter) CharDev(name string, perm uint32, major, minor uint32) error {
	name = cleanArchiveName(name)
	c.parents(name)
	c.entry(name, modeCharDev|perm&0o7777, 1, major, minor, nil)
	return c.err
}

// Close writes the trailer; it does not close the underlying writer.
func (c *cpioWriter) Close() error {
	c.ino = 0
	c.entry("TRAILER!!!", 0, 1, 0, 0, nil)
	return c.err
}

func (c *cpioWriter) parents(name string) {
	dir := path.Dir(name)
	if c.dirs[dir] {
		return
	}
	c.parents(dir)
	c.dirs[dir] = true
	c.entry(dir, modeDir|0o755, 2, 0, 0, nil)
}

func (c *cpioWriter) entry(name string, mode, nlink, rmajor, rminor uint32, data []byte) {
	if c.err != nil {
		return
	}
	if uint64(len(data)) > 0xffffffff {
		c.err = fmt.Errorf("cpio: %s: file too large", name)
		return
	}
	if name != "TRAILER!!!" {
		c.ino++
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rmajor, rminor, len(name)+1, 0)
	buf := make([]byte, 0, len(hdr)+len(name)+4)
	buf = append(buf, hdr...)
	buf = append(buf, name...)
	buf = append(buf, 0)
	buf = append(buf, make([]byte, pad4(len(buf)))...)
	if _, err := c.w.Write(buf); err != nil {
		c.err = err
		return
	}
	if len(data) == 0 {
		return
	}
	if _, err := c.w.Write(data); err != nil {
		c.err = err
		return
	}
	if n := pad4(len(data)); n > 0 {
		if _, err := c.w.Write(make([]byte, n)); err != nil {
			c.err = err
		}
	}
}

// pad4 is the number of zero bytes that align n to 4.
func pad4(n int) int { return (4 - n%4) % 4 }

// cleanArchiveName makes name relative, as the kernel expects: "/init"
// becomes "init".
func cleanArchiveName(name string) string {
	return strings.TrimPrefix(path.Clean("/"+name), "/")
}
