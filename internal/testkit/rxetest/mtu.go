package rxetest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/uverbs"
)

// SetWireMTU sets the MTU of this guest's wire device (testenv.WireDev)
// and waits until rxe0, on it, reports the active MTU that follows from
// it (the largest RDMA MTU, 256 to 4096 bytes, that fits in the Ethernet
// MTU with RoCE v2's headers); cleanup puts back the MTU it had. It
// returns the active MTU.
func SetWireMTU(t testing.TB, mtu int) ib.MTU {
	t.Helper()
	ip := testenv.Oracle(t, "ip")
	old, err := os.ReadFile(filepath.Join("/sys/class/net", testenv.WireDev, "mtu"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testenv.Run(t, ip, "link", "set", testenv.WireDev, "mtu", strings.TrimSpace(string(old))) })
	testenv.Run(t, ip, "link", "set", testenv.WireDev, "mtu", strconv.Itoa(mtu))
	ctx, err := uverbs.OpenName("rxe0")
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	want := roceMTU(mtu)
	deadline := time.Now().Add(5 * time.Second)
	for {
		p, err := ctx.QueryPort(1)
		if err != nil {
			t.Fatal(err)
		}
		if p.ActiveMTU == want {
			return want
		}
		if time.Now().After(deadline) {
			t.Fatalf("rxe0's active MTU %v after %s's MTU became %d, want %v", p.ActiveMTU, testenv.WireDev, mtu, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// roceMTU is the largest RDMA MTU whose packets fit in an Ethernet MTU of
// mtu bytes with RoCE v2's headers and the largest extended transport
// header (the kernel's iboe_get_mtu: 96 bytes of GRH, UDP, BTH, XRC and
// atomic ETH, ICRC), capped at 4096 as rxe caps it.
func roceMTU(mtu int) ib.MTU {
	room := mtu - (40 + 8 + 12 + 4 + 28 + 4)
	best := ib.MTU256
	for _, m := range []ib.MTU{ib.MTU256, ib.MTU512, ib.MTU1024, ib.MTU2048, ib.MTU4096} {
		if m.Bytes() <= room {
			best = m
		}
	}
	return best
}
