package udaddy

import (
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
)

// TestIntegrationSIWUdaddy: iWARP has no UD QPs, so udaddy cannot work
// on siw; ours fails as rdma-core's does in each role (its server on
// siw0, its client in the peer namespace), and leaves nothing behind.
func TestIntegrationSIWUdaddy(t *testing.T) {
	e, dev := cmtest.SIW(t)
	cmtest.NoCMIDsLeft(t, dev)
	cmtest.NoQPsLeft(t, dev)
	cmtest.SIWFailAlike(t, e, "udaddy", []string{"-b", e.Addr.String()}, []string{"-s", e.Addr.String()}, 20*time.Second, nil)
}
