package rsocket

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"testing"
)

// peerEnv turns the test binary into a peer process (TestMain runs
// peerMain instead of the tests): it dials the address the variable
// holds and writes without end, reading nothing, until it is killed.
// TestWireRsocketPeerKilled kills it mid-transfer.
const peerEnv = "RDMASTACK_RSOCKET_PEER"

func TestMain(m *testing.M) {
	if addr := os.Getenv(peerEnv); addr != "" {
		fmt.Fprintln(os.Stderr, peerMain(addr))
		os.Exit(1)
	}
	if addr := os.Getenv(stallEnv); addr != "" {
		fmt.Fprintln(os.Stderr, stallMain(addr))
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// peerMain is the peer process: it returns only when something failed.
func peerMain(addr string) error {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return err
	}
	c, err := DialContext(context.Background(), "rdma", ap.String())
	if err != nil {
		return err
	}
	buf := make([]byte, 64<<10)
	for {
		if _, err := c.Write(buf); err != nil {
			return fmt.Errorf("peer: %w", err)
		}
	}
}
