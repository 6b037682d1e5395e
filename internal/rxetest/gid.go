package rxetest

import (
	"encoding/hex"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// GIDIndex is the index of dev's port 1 GID that maps addr (RoCE v2 over
// IPv4), from sysfs.
func GIDIndex(t testing.TB, dev string, addr netip.Addr) int {
	t.Helper()
	dir := filepath.Join("/sys/class/infiniband", dev, "ports/1/gids")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
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
		if netip.AddrFrom16([16]byte(raw)).Unmap() == addr {
			n, err := strconv.Atoi(e.Name())
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("%s has no GID for %v in %s", dev, addr, dir)
	return 0
}
