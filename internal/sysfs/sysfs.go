// Package sysfs is the module's one reader of sysfs: the RDMA classes
// (class/infiniband, class/infiniband_verbs), the network devices
// (class/net) and the bus devices behind them. Package device, uverbs'
// GID fallback, the infiniband-diags drop-ins and the exporter all read
// through it, so that a fixture tree under testdata stands in for /sys in
// every one of their tests.
//
// An attribute is read as the kernel hands it out: one open, one read
// (sysfs gives a whole attribute to the first read) and close, with EINTR
// retried. Errors are *os.PathError values, so errors.Is(err,
// os.ErrNotExist) tells an absent attribute.
package sysfs

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// FS is a sysfs tree: /sys, or a fixture tree in tests.
type FS struct{ Root string }

// Sys is the system's sysfs.
var Sys = FS{Root: "/sys"}

// Path joins elem below the root.
func (f FS) Path(elem ...string) string {
	return filepath.Join(append([]string{f.Root}, elem...)...)
}

// Read reads the attribute at the path elem below the root, without
// surrounding white space.
func (f FS) Read(elem ...string) (string, error) { return ReadString(f.Path(elem...)) }

// ReadUint reads a decimal attribute.
func (f FS) ReadUint(elem ...string) (uint64, error) {
	s, err := f.Read(elem...)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, &os.PathError{Op: "parse", Path: f.Path(elem...), Err: unix.EPROTO}
	}
	return v, nil
}

// Link returns the last element of the symbolic link's target at elem
// (a device link's target names the bus device, a subsystem link's the
// bus).
func (f FS) Link(elem ...string) (string, error) {
	t, err := os.Readlink(f.Path(elem...))
	if err != nil {
		return "", err
	}
	return filepath.Base(t), nil
}

// Resolve returns the directory the path elem leads to, symbolic links
// followed.
func (f FS) Resolve(elem ...string) (string, error) { return filepath.EvalSymlinks(f.Path(elem...)) }

// List returns the names in the directory at elem, sorted.
func (f FS) List(elem ...string) ([]string, error) { return List(f.Path(elem...)) }

// Files returns the regular files in the directory at elem, sorted: the
// attributes, without the subdirectories and links.
func (f FS) Files(elem ...string) ([]string, error) {
	ents, err := os.ReadDir(f.Path(elem...))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// List returns the names in dir, sorted (as strcmp orders them: the C
// locale's alphasort).
func List(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// ReadString reads the attribute at path without surrounding white space.
func ReadString(path string) (string, error) {
	var buf [4096]byte
	n, err := readAt(unix.AT_FDCWD, path, buf[:])
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(buf[:n])), nil
}

// ReadRaw reads at most len(buf) bytes of the attribute at path in one
// read, as C code reading into a fixed buffer does, and returns how many.
func ReadRaw(path string, buf []byte) (int, error) { return readAt(unix.AT_FDCWD, path, buf) }

// readAt opens name relative to the directory dfd (or absolute), reads
// once into buf and closes it.
func readAt(dfd int, name string, buf []byte) (int, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Openat(dfd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return 0, &os.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, &os.PathError{Op: "read", Path: name, Err: err}
		}
		return n, nil
	}
}
