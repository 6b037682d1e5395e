package sysfs

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Dir is an open directory whose attributes are read relative to it,
// which spares the kernel walking the whole path again for each: a
// counters directory read on every scrape. The caller must Close it.
type Dir struct {
	fd   int
	path string
}

// OpenDir opens the directory at path.
func OpenDir(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{fd: fd, path: path}, nil
}

// Close closes the directory; closing twice is harmless.
func (d *Dir) Close() error {
	if d == nil || d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// Read reads the attribute name in the directory without surrounding
// white space.
func (d *Dir) Read(name string) (string, error) {
	var buf [256]byte
	n, err := readAt(d.fd, name, buf[:])
	if err != nil {
		err.(*os.PathError).Path = d.path + "/" + name
		return "", err
	}
	return strings.TrimSpace(string(buf[:n])), nil
}

// Counter is one counter attribute: a name and its value.
type Counter struct {
	Name  string
	Value uint64
}

// Counters reads the counter attributes names of the directory, in the
// order given. An attribute that cannot be read or does not hold a
// number ("N/A (no PMA)" where a driver has no PMA, an error a driver
// returns for one counter) is left out.
func (d *Dir) Counters(names []string) []Counter {
	out := make([]Counter, 0, len(names))
	for _, n := range names {
		s, err := d.Read(n)
		if err != nil {
			continue
		}
		if v, err := strconv.ParseUint(s, 10, 64); err == nil {
			out = append(out, Counter{Name: n, Value: v})
		}
	}
	return out
}

// Counters reads every counter attribute of the directory at path, in
// name order; none when it does not exist.
func Counters(path string) []Counter {
	names, err := FS{Root: path}.Files()
	if err != nil || len(names) == 0 {
		return nil
	}
	d, err := OpenDir(path)
	if err != nil {
		return nil
	}
	defer d.Close()
	return d.Counters(names)
}
