package perftest

import (
	"fmt"
	"time"

	"github.com/rdmastack/rdmastack/uverbs"
)

// bwBi is run_iter_bi, a bidirectional SEND test (-b): each side sends
// as bwClient does and receives as bwServer does in the same loop; the
// server sends nothing before its first receive, so that UC and UD
// receivers are not overrun before the peer has begun.
func (s *session) bwBi(size uint64) (Report, error) {
	c, r := s.c, s.r
	wrs, _ := s.sendWRs(size)
	nq := uint64(c.NumQPs)
	iters := uint64(c.Iters)
	tot := iters * nq
	cqMod := uint64(c.CQMod)
	t := newBWTimes(c, tot)
	scnt := make([]uint64, nq)
	n := sendCount{ccnt: make([]uint64, nq)}
	rcntQP, posted := make([]uint64, nq), make([]uint64, nq)
	for i := range posted {
		posted[i] = uint64(c.RxDepth)
	}
	var totS, totR uint64
	wc := make([]uverbs.WC, max(c.RxDepth, 1))
	var wcTx [pollBatch]uverbs.WC
	var wc1 [1]uverbs.WC
	cr := r.cred
	k := clock{time.Now()}
	dur := newDur(c, k)
	if c.NoPeak {
		t.posted[0] = k.now()
	}
	beforeFirstRx := c.isServer()
	if !beforeFirstRx && c.DurMode {
		dur.begin()
	}
	last := time.Now()
	for c.DurMode && !dur.ended() || n.totC < tot || totR < tot {
		for i := range wrs {
			w := &wrs[i]
			for !beforeFirstRx && (scnt[i] < iters || c.DurMode) && scnt[i]+cr.outstanding(i)-n.ccnt[i]+1 <= uint64(c.TxDepth) {
				if cr.blocked(i, scnt[i], c.RxDepth) {
					break
				}
				if scnt[i]%cqMod == 0 && cqMod > 1 && (c.DurMode || scnt[i] != iters-1) {
					w.Flags &^= uverbs.SendSignaled
				}
				if !c.NoPeak {
					t.posted[totS] = k.now()
				}
				if c.DurMode && dur.ended() {
					break
				}
				if err := r.qps[i].PostSend(w); err != nil {
					return Report{}, fail(fmt.Sprintf("Couldn't post send: qp %d scnt=%d \n", i, scnt[i]))
				}
				scnt[i]++
				totS++
				if scnt[i]%cqMod == cqMod-1 || !c.DurMode && scnt[i] == iters-1 {
					w.Flags |= uverbs.SendSignaled
				}
			}
		}
		if c.Events {
			if err := s.waitEvent(aliveTimeout); err != nil {
				return Report{}, fail("Failed to notify events to CQ")
			}
		}
		ne, err := r.recvCQ.Poll(wc)
		if err != nil {
			return Report{}, fail("poll CQ failed -1\n")
		}
		if ne > 0 {
			last = time.Now()
			if beforeFirstRx {
				beforeFirstRx = false
				dur.begin()
			}
			for j := 0; j < ne; j++ {
				w := &wc[j]
				if w.Status != uverbs.WCSuccess {
					return Report{}, recvError(w, totR)
				}
				rcntQP[w.ID]++
				totR++
				if err := s.repostRecv(w.ID, rcntQP, posted, iters, dur, &n.counted); err != nil {
					return Report{}, err
				}
				if cr != nil && cr.due(rcntQP[w.ID], c.RxDepth) {
					// The credit shares the send queue: wait for room
					// in it, counting sends and credits as they complete.
					q := w.ID
					for scnt[q]+cr.out[q] >= uint64(c.TxDepth)+n.ccnt[q] {
						if err := n.reap(s, wc1[:], t, k, dur, totS, tot); err != nil {
							return Report{}, err
						}
					}
					if err := cr.post(r.qps[q], int(q), rcntQP[q]); err != nil {
						return Report{}, fail(fmt.Sprintf("Couldn't post send: qp%d credit=%d\n", r.qps[q].Num(), rcntQP[q]))
					}
				}
			}
		} else if !c.DurMode && totR < tot && time.Since(last) > aliveTimeout {
			return Report{}, fail(aliveMsg(totR, tot))
		}
		if err := n.reap(s, wcTx[:], t, k, dur, totS, tot); err != nil {
			return Report{}, err
		}
	}
	rep := t.senderReport(c, k, dur, size, n.counted, tot)
	if err := s.cleanCredits(); err != nil {
		return Report{}, err
	}
	return rep, nil
}

// sum is print_full_bw_report's total of both sides' results.
func (r Report) sum(o Report) Report {
	r.BWPeak += o.BWPeak
	r.BWAvg += o.BWAvg
	r.MsgRateAvg += o.MsgRateAvg
	return r
}
