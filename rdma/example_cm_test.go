package rdma_test

import (
	"context"
	"fmt"
	"log"
	"net/netip"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/uverbs"
)

// Connect an RC QP to a server through the connection manager, with a
// synchronous id: each call returns once its event has come.
func ExampleCreateID() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, err := rdma.CreateID(rdma.PortSpaceTCP, ib.QPTypeRC)
	if err != nil {
		log.Fatal(err)
	}
	defer id.Close() // destroys the QP too
	server := netip.MustParseAddrPort("10.77.0.1:7471")
	if err := id.ResolveAddr(ctx, netip.AddrPort{}, server, 2*time.Second); err != nil {
		log.Fatal(err)
	}
	if err := id.ResolveRoute(ctx, 2*time.Second); err != nil {
		log.Fatal(err)
	}
	// The id is now bound to a device: the QP's resources come from its
	// shared context.
	vctx, err := id.Device().Context()
	if err != nil {
		log.Fatal(err)
	}
	pd, err := vctx.AllocPD()
	if err != nil {
		log.Fatal(err)
	}
	defer pd.Close()
	cq, err := vctx.CreateCQ(uverbs.CQAttr{CQE: 16})
	if err != nil {
		log.Fatal(err)
	}
	defer cq.Close()
	qp, err := id.CreateQP(pd, uverbs.QPInit{SendCQ: cq, RecvCQ: cq,
		Cap: uverbs.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		log.Fatal(err)
	}
	defer qp.Close() // before the CQ and the PD (id.Close would too, but runs last)
	if err := id.Connect(ctx, nil); err != nil {
		log.Fatal(err) // errors.Is(err, unix.ECONNREFUSED) when nobody listens
	}
	fmt.Println("connected: QP", qp.Num(), "on", id.Device())
	// ... PostSend / PostRecv / Poll on qp and cq ...
	id.Disconnect()
}
