package mckey

import (
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
)

// TestIntegrationSIWMckey: iWARP has no multicast, so mckey cannot join
// on siw; ours fails as rdma-core's does, receiver on siw0 and sender in
// the peer namespace, and leaves nothing behind.
func TestIntegrationSIWMckey(t *testing.T) {
	e, dev := cmtest.SIW(t)
	cmtest.NoCMIDsLeft(t, dev)
	cmtest.NoQPsLeft(t, dev)
	cmtest.SIWFailAlike(t, e, "mckey", []string{"-m", "239.1.1.1", "-b", e.Addr.String()},
		[]string{"-m", "239.1.1.1", "-b", e.PeerAddr.String(), "-s"}, 20*time.Second, nil)
}
