package rsocket

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/uverbs"
)

// TestWireRsocketMTU: side 0's wire at MTU 4200 (rxe0's active MTU 4096),
// side 1's at 1500 (1024). Dialled from either side, a stream's QPs on
// both sides take the smaller path MTU, 1024, and carry 256 KiB each way
// intact. From the smaller side that is the kernel's CM at work (RoCE's
// route takes the dialer's netdev MTU and the REQ carries it). From the
// larger side it is ours: the CM would give both QPs the dialer's 4096,
// which the smaller side's wire cannot carry (rdma-core's rsockets fail
// so, as ibv_rc_pingpong -m 4096 does in TestWireMTU), so each side
// announces its port's active MTU in the connection data and both go to
// RTR with the smaller (rdma.ConnParam.PeerPathMTU).
func TestWireRsocketMTU(t *testing.T) {
	w, dev := rxetest.Wire(t)
	checkNoLeaks(t, &dev)
	mtu := 1500
	if w.Side == 0 {
		mtu = 4200
	}
	active := rxetest.SetWireMTU(t, mtu)
	w.Exchange(t, t.Name()+"/mtu", active.String())
	payload := bytes.Repeat([]byte("0123456789abcdef"), 16<<10)
	for _, dialer := range []int{1, 0} {
		t.Run(fmt.Sprintf("from-side-%d", dialer), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var c *Conn
			var err error
			if w.Side == dialer {
				c, err = DialContext(ctx, "rdma", wirePeer(t, w).String())
				if err != nil {
					t.Fatal(err)
				}
			} else {
				l, err := Listen("rdma", netip.AddrPortFrom(w.Self, 0).String())
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				wireAnnounce(t, w, l)
				if c, err = l.AcceptConn(ctx); err != nil {
					t.Fatal(err)
				}
			}
			defer c.Close()
			var pathMTU string
			if err := c.Control(func(_ *rdma.ID, qp *uverbs.QP) error {
				a, err := qp.Query(uverbs.QPAttrPathMTU)
				if err == nil {
					pathMTU = a.PathMTU.String()
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			peerMTU := w.Exchange(t, t.Name()+"/path-mtu", pathMTU)
			c.SetDeadline(time.Now().Add(20 * time.Second))
			errc := make(chan error, 1)
			go func() {
				_, err := c.Write(payload)
				errc <- err
			}()
			got := make([]byte, len(payload))
			_, rerr := io.ReadFull(c, got)
			werr := <-errc
			t.Logf("side %d (active MTU %v), dialled from side %d: path MTU %s, the peer's %s; write %v, read %v, intact %v",
				w.Side, active, dialer, pathMTU, peerMTU, werr, rerr, bytes.Equal(got, payload))
			w.Sync(t, t.Name()+"/done")
			if werr != nil || rerr != nil || !bytes.Equal(got, payload) {
				t.Fatalf("256 KiB each way: write %v, read %v, intact %v", werr, rerr, bytes.Equal(got, payload))
			}
			if pathMTU != "1024" || peerMTU != "1024" {
				t.Fatalf("path MTU %s here, %s on the peer: want the smaller, 1024", pathMTU, peerMTU)
			}
		})
	}
}
