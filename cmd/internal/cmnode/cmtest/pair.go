package cmtest

import (
	"net/netip"
	"strconv"
	"testing"
	"time"
)

// Pair runs a server (-b addr) and then a client (-s addr), both with
// -p addr's port and args, as rstream, riostream and their kin take
// them, and returns both results; wait tells when the server listens.
// Either failing, or writing to stderr, fails t.
func Pair(t testing.TB, addr netip.AddrPort, wait func() error, limit time.Duration, server, client Side, args ...string) (rs, rc Result) {
	t.Helper()
	p := append([]string{"-p", strconv.Itoa(int(addr.Port()))}, args...)
	waitS := server.Start(append([]string{"-b", addr.Addr().String()}, p...), limit)
	if err := wait(); err != nil {
		t.Fatalf("%v server: %v\n%v", server, err, waitS())
	}
	rc = client.Start(append([]string{"-s", addr.Addr().String()}, p...), limit)()
	rs = waitS()
	if rc.Code != 0 || rs.Code != 0 || rs.Stderr != "" || rc.Stderr != "" {
		t.Fatalf("%v server: %v\n%v client: %v", server, rs, client, rc)
	}
	return rs, rc
}
