package ibsysfs

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
	"github.com/rdmastack/rdmastack/internal/sysfs"
)

// Buffer sizes of libibumad's reads and of umad_ca_t's strings: a value is
// cut to one byte less.
const (
	uintBufLen = 32 // sys_read_uint, sys_read_guid
	gidBufLen  = 64 // sys_read_gid
	NameLen    = 20 // UMAD_CA_NAME_LEN: ca_name, fw_ver, hw_ver, link_layer
	CATypeLen  = 40 // UMAD_CA_TYPE_LEN (hca_type)
)

// errParse is a value libibumad could not parse (a GUID or GID with too
// few groups): the call fails with -EINVAL and errno is left alone.
var errParse = errors.New("malformed value")

// fail records a failing system call's errno, as C leaves it in errno,
// and returns err.
func (s *Sysfs) fail(err error) error {
	var e unix.Errno
	if errors.As(err, &e) {
		s.Errno = e
	}
	return err
}

// ReadString is sys_read_string(dir, file, buf, max): one read of at most
// max bytes, the value cut to max-1 bytes (and at a NUL), then at its last
// newline.
func (s *Sysfs) ReadString(dir, file string, max int) (string, error) {
	buf := make([]byte, max)
	n, err := sysfs.ReadRaw(filepath.Join(dir, file), buf)
	if err != nil {
		return "", s.fail(err)
	}
	if n > max-1 {
		n = max - 1
	}
	v := buf[:n]
	if i := bytes.IndexByte(v, 0); i >= 0 {
		v = v[:i]
	}
	if i := bytes.LastIndexByte(v, '\n'); i >= 0 {
		v = v[:i]
	}
	return string(v), nil
}

// ReadUint is sys_read_uint: strtoul(value, NULL, 0) into an unsigned
// int, so "4: ACTIVE" is 4, "0x1a" is 26 and "2.5 Gb/sec" is 2.
func (s *Sysfs) ReadUint(dir, file string) (uint32, error) {
	v, err := s.ReadString(dir, file, uintBufLen)
	if err != nil {
		return 0, err
	}
	return uint32(cflags.ULong(v)), nil
}

// groups splits v as strsep(&s, ": \t\n") does, n times, each group
// strtoul(group, NULL, 16) & 0xffff.
func groups(v string, n int) ([]uint16, error) {
	out := make([]uint16, n)
	rest, ok := v, true
	for i := range out {
		if !ok {
			return nil, errParse
		}
		tok := rest
		if j := strings.IndexAny(rest, ": \t\n"); j >= 0 {
			tok, rest = rest[:j], rest[j+1:]
		} else {
			ok = false
		}
		u, _, _ := cflags.Strtoul(tok, 16)
		out[i] = uint16(u)
	}
	return out, nil
}

// ReadGUID is sys_read_guid: "xxxx:xxxx:xxxx:xxxx", four groups of 16 bits.
func (s *Sysfs) ReadGUID(dir, file string) (uint64, error) {
	v, err := s.ReadString(dir, file, uintBufLen)
	if err != nil {
		return 0, err
	}
	g, err := groups(v, 4)
	if err != nil {
		return 0, err
	}
	var guid uint64
	for _, x := range g {
		guid = guid<<16 | uint64(x)
	}
	return guid, nil
}

// ReadGID is sys_read_gid: eight groups of 16 bits, in network order.
func (s *Sysfs) ReadGID(dir, file string) ([16]byte, error) {
	var gid [16]byte
	v, err := s.ReadString(dir, file, gidBufLen)
	if err != nil {
		return gid, err
	}
	g, err := groups(v, 8)
	if err != nil {
		return gid, err
	}
	for i, x := range g {
		gid[2*i], gid[2*i+1] = byte(x>>8), byte(x)
	}
	return gid, nil
}

// readDir is opendir/readdir (or scandir with alphasort, which is strcmp
// in the C locale): the names of dir, sorted, without "." and "..".
func (s *Sysfs) readDir(dir string) ([]string, error) {
	names, err := sysfs.List(dir)
	if err != nil {
		return nil, s.fail(err)
	}
	return names, nil
}
