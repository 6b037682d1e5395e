package rsocket

import (
	"os"
	"testing"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
)

// TestPeerPathMTU: rdma-core's connection data (the fixture, its
// reserved bytes zero) says no MTU, so the CM's stands with C peers; ours
// says the port's; data that is no connection data says none.
func TestPeerPathMTU(t *testing.T) {
	c, err := os.ReadFile("../internal/rsproto/testdata/conn_data.bin")
	if err != nil {
		t.Fatal(err)
	}
	if m := peerPathMTU(c); m != 0 {
		t.Errorf("rdma-core's connection data: path MTU %v, want none", m)
	}
	ours, err := rsproto.UnmarshalConnData(c)
	if err != nil {
		t.Fatal(err)
	}
	ours.PathMTU = uint8(ib.MTU1024)
	if m := peerPathMTU(ours.Marshal()); m != ib.MTU1024 {
		t.Errorf("our connection data: path MTU %v, want 1024", m)
	}
	if m := peerPathMTU([]byte{1, 2, 3}); m != 0 {
		t.Errorf("3 bytes: path MTU %v, want none", m)
	}
}
