package uverbs_test

import (
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/uverbs"
)

// TestIntegrationSIWManyQueues creates 64 CQs and RC QPs (three queues
// of a page each to map) in one siw context, past its 145th mapped page,
// whose offset equals SIW_INVAL_UOBJ_KEY: libsiw takes that key for "no
// queue" and fails every create from there on (ucmatose -c 50 fails on
// siw with rdma-core's library). Each QP then proves its rings are its
// own: a receive posted on it comes back, flushed with its id, on its CQ
// when the QP goes to the error state.
func TestIntegrationSIWManyQueues(t *testing.T) {
	env := testenv.SIW(t)
	c, err := uverbs.OpenName(env.Dev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pd.Close() })
	const n = 64
	type pair struct {
		cq *uverbs.CQ
		qp *uverbs.QP
	}
	pairs := make([]pair, n)
	for i := range pairs {
		cq, err := c.CreateCQ(uverbs.CQAttr{CQE: 16})
		if err != nil {
			t.Fatalf("CQ %d: %v", i, err)
		}
		t.Cleanup(func() { cq.Close() })
		qp, err := pd.CreateQP(uverbs.QPInit{Type: ib.QPTypeRC, SendCQ: cq, RecvCQ: cq,
			Cap: uverbs.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 1, MaxRecvSGE: 1}})
		if err != nil {
			t.Fatalf("QP %d (after %d queues mapped): %v", i, 3*i+1, err)
		}
		t.Cleanup(func() { qp.Close() })
		pairs[i] = pair{cq, qp}
	}
	for i, p := range pairs {
		if err := p.qp.Modify(&uverbs.QPAttr{State: ib.QPStateInit, AccessFlags: uverbs.AccessLocalWrite}, uverbs.QPAttrState|uverbs.QPAttrAccessFlags); err != nil {
			t.Fatalf("QP %d to INIT: %v", i, err)
		}
		if err := p.qp.PostRecv(&uverbs.RecvWR{ID: uint64(1000 + i)}); err != nil {
			t.Fatalf("QP %d: post receive: %v", i, err)
		}
		if err := p.qp.Modify(&uverbs.QPAttr{State: ib.QPStateErr}, uverbs.QPAttrState); err != nil {
			t.Fatalf("QP %d to ERR: %v", i, err)
		}
	}
	wc := make([]uverbs.WC, 4)
	for i, p := range pairs {
		deadline := time.Now().Add(10 * time.Second)
		var got int
		for got == 0 {
			if got, err = p.cq.Poll(wc); err != nil {
				t.Fatalf("CQ %d: %v", i, err)
			}
			if got == 0 && time.Now().After(deadline) {
				t.Fatalf("QP %d: no flushed receive on its CQ in 10 s", i)
			}
		}
		if got != 1 || wc[0].ID != uint64(1000+i) || wc[0].Status != uverbs.WCWRFlushErr {
			t.Errorf("CQ %d: %d completions, the first %+v; want one flushed receive with id %d", i, got, wc[0], 1000+i)
		}
	}
}
