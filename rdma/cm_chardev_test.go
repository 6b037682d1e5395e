package rdma

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLookupRdmaCM: without rdma_ucm (netlink does not know the char
// device, sysfs has no file) the error says so and matches
// ErrNotSupported and os.ErrNotExist; a foreign ABI version matches
// ErrNotSupported.
func TestLookupRdmaCM(t *testing.T) {
	none := func() (string, uint64, error) { return "", 0, unix.ENOENT }
	dir := t.TempDir()
	_, _, err := lookupRdmaCM(none, filepath.Join(dir, "abi_version"))
	if !errors.Is(err, os.ErrNotExist) || !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "rdma_ucm") {
		t.Errorf("no rdma_ucm: %v", err)
	}
	for _, c := range []struct {
		file string
		err  error
	}{{"4\n", nil}, {"5\n", ErrNotSupported}, {"two", unix.EPROTO}} {
		f := filepath.Join(dir, "v")
		if err := os.WriteFile(f, []byte(c.file), 0o644); err != nil {
			t.Fatal(err)
		}
		path, abi, err := lookupRdmaCM(none, f)
		if !errors.Is(err, c.err) || (c.err == nil && (path != "/dev/infiniband/rdma_cm" || abi != 4)) {
			t.Errorf("sysfs %q: %q %d %v, want %v", c.file, path, abi, err, c.err)
		}
	}
	nl := func() (string, uint64, error) { return "/dev/x/rdma_cm", 2, nil }
	if _, _, err := lookupRdmaCM(nl, ""); !errors.Is(err, ErrNotSupported) {
		t.Errorf("netlink ABI 2: %v", err)
	}
}
