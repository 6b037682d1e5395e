package cmtest

import (
	"testing"

	"github.com/rdmastack/rdmastack/internal/testenv"
	"github.com/rdmastack/rdmastack/nldev"
)

// SIW is the test's siw guest (testenv.SIW) and the index of its device
// in the root namespace, where servers listen; clients run in the peer
// namespace (Side.InNetns) and dial SIWEnv.Addr.
func SIW(t testing.TB) (*testenv.SIWEnv, uint32) {
	t.Helper()
	e := testenv.SIW(t)
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer nl.Close()
	d, err := nl.DeviceByName(e.Dev)
	if err != nil {
		t.Fatal(err)
	}
	return e, d.Index
}
