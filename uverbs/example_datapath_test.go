package uverbs_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// Send one message between two RC queue pairs of one device: the whole
// data path, from registered memory to the completions, waiting for them
// on a completion channel. Nothing here names the device's driver.
// (TestIntegrationExamples runs it on Soft-RoCE and checks what
// it prints.)
func Example_rcDataPath() {
	ctx, err := uverbs.OpenName("rxe0")
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close() // destroys everything below, too
	pd, err := ctx.AllocPD()
	if err != nil {
		log.Fatal(err)
	}
	// Memory the device reads and writes lives outside the Go heap.
	buf, err := membuf.New(4096)
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Close()
	mr, err := buf.Register(pd, uverbs.AccessLocalWrite)
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	ch, err := ctx.CreateCompChannel()
	if err != nil {
		log.Fatal(err)
	}
	defer ch.Close()
	cq, err := ctx.CreateCQ(uverbs.CQAttr{CQE: 16, CompChannel: ch})
	if err != nil {
		log.Fatal(err)
	}

	// Two QPs, connected to each other through the port's first RoCE v2
	// GID (on InfiniBand, a Peer gives the LID instead).
	table, err := ctx.QueryGIDTable()
	if err != nil {
		log.Fatal(err)
	}
	var gid uverbs.GIDEntry
	for _, e := range table {
		if e.Port == 1 && e.Type == ib.GIDTypeRoCEv2 {
			gid = e
			break
		}
	}
	var qps [2]*uverbs.QP
	for i := range qps {
		qps[i], err = pd.CreateQP(uverbs.QPInit{Type: ib.QPTypeRC, SendCQ: cq, RecvCQ: cq,
			Cap: uverbs.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
		if err != nil {
			log.Fatal(err)
		}
	}
	opts := uverbs.ConnectOptions{SGIDIndex: uint8(gid.Index)}
	for i, qp := range qps {
		peer := uverbs.Peer{QPN: qps[1-i].Num(), GID: gid.GID}
		if err := qp.Init(opts); err != nil {
			log.Fatal(err)
		}
		if err := qp.Connect(opts, peer); err != nil {
			log.Fatal(err)
		}
	}

	// One receive, one send.
	msg := copy(buf.Bytes(), "hello, RDMA")
	err = qps[1].PostRecv(&uverbs.RecvWR{ID: 1, SGE: []uverbs.SGE{{Addr: buf.Addr(2048), Length: 2048, LKey: mr.LKey()}}})
	if err != nil {
		log.Fatal(err)
	}
	if err := cq.RequestNotify(false); err != nil {
		log.Fatal(err)
	}
	err = qps[0].PostSend(&uverbs.SendWR{ID: 2, Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled,
		SGE: []uverbs.SGE{{Addr: buf.Addr(0), Length: uint32(msg), LKey: mr.LKey()}}})
	if err != nil {
		log.Fatal(err)
	}

	// Both completions: poll, and when the CQ is empty wait for its
	// event (the goroutine is parked, not spinning), acknowledge it and
	// arm the CQ again.
	wait, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var wc [2]uverbs.WC
	for got := 0; got < len(wc); {
		n, err := cq.Poll(wc[got:])
		if err != nil {
			log.Fatal(err)
		}
		if got += n; n > 0 || got == len(wc) {
			continue
		}
		if _, err := ch.GetEvent(wait); err != nil {
			log.Fatal(err)
		}
		cq.AckEvents(1)
		if err := cq.RequestNotify(false); err != nil {
			log.Fatal(err)
		}
	}
	for _, w := range wc {
		if w.Opcode == uverbs.WCRecv {
			fmt.Printf("%v %v %q\n", w.Opcode, w.Status, buf.Bytes()[2048:2048+w.ByteLen])
		}
	}
	for _, w := range wc {
		if w.Opcode == uverbs.WCSend {
			fmt.Println(w.Opcode, w.Status)
		}
	}
}
