package perftest

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// credits are perftest's receive credits, which its SEND bandwidth test
// (send_bw.c, run_iter_bw, run_iter_bw_server and run_iter_bi) turns on
// when the device's transport is iWARP (ctx.send_rcredit): iWARP has no
// RNR retry, so a SEND that finds no receive posted ends the
// connection. Each receiver RDMA-writes to its sender, every rx_depth/3
// receives of a QP (and at each rx_depth'th), how many it has received
// on it; a sender keeps fewer than rx_depth sends beyond the last count
// it was told. The counts are host-order 32-bit words, as perftest's.
//
// The peer's counts are written by the device into registered memory
// outside the Go heap; a sender reads them atomically.
type credits struct {
	buf   *membuf.Buffer // ctrl_buf: nq counts of ours, then the peer's nq
	mr    *membuf.MR     // credit_mr: local and remote write
	mine  []uint32       // ctrl_buf[i]: the count each credit WRITE of QP i sends
	peer  []uint32       // credit_buf[i]: the last count QP i's peer wrote here
	every uint64         // credit_cnt: rx_depth/3

	wrs  []uverbs.SendWR // ctrl_wr: QP i's signaled 4-byte WRITE of mine[i]
	sges [][1]uverbs.SGE
	out  []uint64    // scredit_for_qp: QP i's credit WRITEs not yet completed
	tot  uint64      // tot_scredit
	swc  []uverbs.WC // tx_depth completions, for the waits and the clean-up
}

// allocCredits is ctx_alloc_credit: the credit buffer and its MR, whose
// key and peer half the key messages then carry instead of the data
// buffer's.
func (r *res) allocCredits(my []Dest) error {
	nq := r.c.NumQPs
	buf, err := membuf.New(2 * nq * 4)
	if err != nil {
		return fail("Couldn't allocate MR\n")
	}
	mr, err := buf.Register(r.pd, uverbs.AccessLocalWrite|uverbs.AccessRemoteWrite)
	if err != nil {
		buf.Close()
		return fail("Couldn't allocate MR\n")
	}
	words := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(buf.Bytes()))), 2*nq)
	cr := &credits{buf: buf, mr: mr, mine: words[:nq:nq], peer: words[nq:],
		// perftest divides by rx_depth/3, which is 0 below an rx_depth of 3
		// (a SIGFPE there); here such a receiver credits every receive.
		every: uint64(max(r.c.RxDepth/3, 1)),
		out:   make([]uint64, nq), swc: make([]uverbs.WC, max(r.c.TxDepth, 1))}
	for i := range my {
		my[i].RKey = mr.RKey()
		my[i].VAddr = buf.Addr((nq + i) * 4)
	}
	r.cred = cr
	return nil
}

// setWRs is ctx_set_credit_wqes, once the peer's keys are known.
func (cr *credits) setWRs(rem []Dest) {
	n := len(cr.mine)
	cr.wrs = make([]uverbs.SendWR, n)
	cr.sges = make([][1]uverbs.SGE, n)
	for i := range cr.wrs {
		cr.sges[i][0] = uverbs.SGE{Addr: cr.buf.Addr(i * 4), Length: 4, LKey: cr.mr.LKey()}
		cr.wrs[i] = uverbs.SendWR{ID: uint64(i), Opcode: uverbs.OpRDMAWrite, SGE: cr.sges[i][:],
			Flags: uverbs.SendSignaled, RemoteAddr: rem[i].VAddr, RKey: rem[i].RKey}
	}
}

func (cr *credits) close() {
	if cr.mr != nil {
		cr.mr.Close()
	}
	if cr.buf != nil {
		cr.buf.Close()
	}
}

// reset is what each message size starts from: no credit from the peer
// yet (send_bw.c zeroes credit_buf before each size of -a), nothing
// outstanding.
func (cr *credits) reset() {
	if cr == nil {
		return
	}
	for i := range cr.peer {
		atomic.StoreUint32(&cr.peer[i], 0)
		cr.out[i] = 0
	}
	cr.tot = 0
}

// creditWindow is perftest's swindow: how far past the peer's last
// credit QP's send count would be after one more send, in 32 bits as
// perftest computes it (scnt + post_list - credit_buf[i]).
func creditWindow(scnt uint64, credit uint32) uint32 {
	return uint32(scnt+1) - credit
}

// blocked is the sender's rule (run_iter_bw and run_iter_bi, before each
// post): no send on QP i while its window would reach rx_depth. Without
// credits nothing is blocked.
func (cr *credits) blocked(i int, scnt uint64, rxDepth int) bool {
	return cr != nil && creditWindow(scnt, atomic.LoadUint32(&cr.peer[i])) >= uint32(rxDepth)
}

// due is the receiver's rule: a credit after the rcnt-th receive of a QP
// when rcnt mod rx_depth is a multiple of credit_cnt.
func (cr *credits) due(rcnt uint64, rxDepth int) bool {
	return rcnt%uint64(rxDepth)%cr.every == 0
}

// post writes rcnt, QP q's receive count, to the peer and counts it
// outstanding.
func (cr *credits) post(qp *uverbs.QP, q int, rcnt uint64) error {
	atomic.StoreUint32(&cr.mine[q], uint32(rcnt))
	if err := qp.PostSend(&cr.wrs[q]); err != nil {
		return err
	}
	cr.out[q]++
	cr.tot++
	return nil
}

// outstanding is QP i's credit WRITEs not yet completed (0 without
// credits): run_iter_bi counts them against tx_depth with its sends.
func (cr *credits) outstanding(i int) uint64 {
	if cr == nil {
		return 0
	}
	return cr.out[i]
}

// completed counts one credit WRITE of QP q done.
func (cr *credits) completed(q uint64) {
	cr.out[q]--
	cr.tot--
}

// grantOnly is run_iter_bw_server's credit after QP q's rcnt-th
// receive: when one is due, wait while tx_depth of QP q's are
// outstanding (the send CQ holds only credit WRITEs there), then write.
func (s *session) grantOnly(q int, rcnt uint64) error {
	cr, c := s.r.cred, s.c
	if !cr.due(rcnt, c.RxDepth) {
		return nil
	}
	for cr.out[q] >= uint64(c.TxDepth) {
		ne, err := s.r.sendCQ.Poll(cr.swc)
		if err != nil {
			return fail(fmt.Sprintf("Poll send CQ failed ne=%d\n", -1))
		}
		for j := range ne {
			w := &cr.swc[j]
			if w.Status != uverbs.WCSuccess {
				return fail(fmt.Sprintf("Poll send CQ error status=%d qp %d credit=%d scredit=%d\n",
					w.Status, w.QPNum, rcnt, cr.out[w.ID]))
			}
			cr.completed(w.ID)
		}
	}
	if err := cr.post(s.r.qps[q], q, rcnt); err != nil {
		return fail(fmt.Sprintf("Couldn't post send qp %d credit = %d\n", s.r.qps[q].Num(), rcnt))
	}
	return nil
}

// cleanCredits is clean_scq_credit: reap the credit WRITEs still outstanding.
func (s *session) cleanCredits() error {
	cr := s.r.cred
	if cr == nil {
		return nil
	}
	for cr.tot > 0 {
		ne, err := s.r.sendCQ.Poll(cr.swc)
		if err != nil {
			return fail("Poll send CQ to clean credit failed ne=-1\n")
		}
		for j := range ne {
			w := &cr.swc[j]
			if w.Status != uverbs.WCSuccess {
				return fail(fmt.Sprintf("Poll send CQ error status=%d qp %d\n", w.Status, w.QPNum))
			}
			if w.Opcode == uverbs.WCRDMAWrite { // -D's last sends may complete here too
				cr.completed(w.ID)
			}
		}
	}
	return nil
}
