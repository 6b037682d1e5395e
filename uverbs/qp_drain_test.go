package uverbs

import (
	"context"
	"errors"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// TestDrainRefusesSecond: a Drain of a QP that another Drain is draining
// fails at once with EBUSY, and leaves the first Drain's claim alone (two
// Drains would take each other's markers).
func TestDrainRefusesSecond(t *testing.T) {
	k := &fakeKernel{onWrite: func(w *abi.WriteCmd) error {
		if w.Command == abi.IB_USER_VERBS_CMD_QUERY_QP {
			r := abi.QueryQpResp{QpState: uint8(ib.QPStateRTS)}
			copy(w.Resp, kabi.Bytes(&r))
		}
		return nil
	}}
	c := &Context{dev: Device{Name: "fake0"}, k: k, prov: controlOnly{}, objects: map[uint64]any{}}
	cq := &CQ{object: object{ctx: c, kind: "cq"}}
	qp := &QP{object: object{ctx: c, kind: "qp", id: 9}, num: 9, sendCQ: cq, recvCQ: cq}
	qp.draining.Store(true) // a Drain in progress
	err := qp.Drain(context.Background(), nil)
	var e *Error
	if !errors.Is(err, unix.EBUSY) || !errors.As(err, &e) || e.Op != "drain qp 9" {
		t.Fatalf("second drain: %v, want EBUSY naming drain qp 9", err)
	}
	if !qp.draining.Load() {
		t.Fatal("the refused drain cleared the first one's claim")
	}
	if ds := cq.drains.Load(); ds != nil && len(*ds) != 0 {
		t.Fatalf("the refused drain registered on the CQ: %d", len(*ds))
	}
}
