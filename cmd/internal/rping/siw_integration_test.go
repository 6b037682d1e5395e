package rping

import (
	"fmt"
	"os"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
)

func TestMain(m *testing.M) {
	cmtest.RunSelf(Main)
	os.Exit(m.Run())
}

// TestIntegrationSIWRping: on Soft-iWARP, the CM over iw_cm and the siw
// provider, ours against ours and against rdma-core's rping -V in both
// roles: the server on siw0, the client in the peer namespace on siw1
// (ours there as a process), 10 validated pings of the smallest size,
// 1 KiB and the largest; nothing is left on the device.
func TestIntegrationSIWRping(t *testing.T) {
	e, dev := cmtest.SIW(t)
	ours, theirs := sides(t)
	oursPeer, theirsPeer := cmtest.Self("ours").InNetns(e.PeerNetns), theirs.InNetns(e.PeerNetns)
	for _, size := range []int{minSize, 1024, bufSize - 1} {
		for _, pair := range [][2]cmtest.Side{{ours, oursPeer}, {theirs, oursPeer}, {ours, theirsPeer}} {
			t.Run(fmt.Sprintf("%d/%v-%v", size, pair[0], pair[1]), func(t *testing.T) {
				cmtest.NoCMIDsLeft(t, dev)
				cmtest.NoQPsLeft(t, dev)
				pingPair(t, e.Addr, dev, pair[0], pair[1], size, 10)
			})
		}
	}
}
