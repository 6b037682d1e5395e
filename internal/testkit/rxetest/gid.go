package rxetest

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// GIDIndex is the index of dev's port 1 GID that maps addr (RoCE v2 over
// IPv4 for an IPv4 address), read from sysfs rather than through our own
// library: what a C tool's -g/-x takes.
func GIDIndex(t testing.TB, dev string, addr netip.Addr) int {
	t.Helper()
	n, err := gidIndex(dev, addr)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// HasGID reports whether dev's port 1 has a GID that maps addr.
func HasGID(dev string, addr netip.Addr) bool {
	_, err := gidIndex(dev, addr)
	return err == nil
}

func gidIndex(dev string, addr netip.Addr) (int, error) {
	dir := filepath.Join("/sys/class/infiniband", dev, "ports/1/gids")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // an empty entry reads as EINVAL on some kernels
		}
		raw, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(string(b)), ":", ""))
		if err != nil || len(raw) != 16 {
			continue
		}
		if netip.AddrFrom16([16]byte(raw)).Unmap() == addr.Unmap() {
			return strconv.Atoi(e.Name())
		}
	}
	return 0, fmt.Errorf("%s has no GID for %v in %s", dev, addr, dir)
}
