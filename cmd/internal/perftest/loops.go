package perftest

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/rdmastack/rdmastack/uverbs"
)

// pollBatch is CTX_POLL_BATCH.
const pollBatch = 16

// aliveTimeout is check_alive's period: a receiver that sees no
// message for this long gives up.
const aliveTimeout = 60 * time.Second

// clock is the test's time base: nanoseconds since the run started, on
// the monotonic clock.
type clock struct{ start time.Time }

func (k clock) now() int64 { return int64(time.Since(k.start)) }

var opcodes = map[Verb]uverbs.Opcode{Send: uverbs.OpSend, Write: uverbs.OpRDMAWrite, Read: uverbs.OpRDMARead}

// sendWRs are ctx_set_send_wqes: one work request per QP, of size
// bytes from the QP's send region to the peer.
func (s *session) sendWRs(size uint64) ([]uverbs.SendWR, [][1]uverbs.SGE) {
	c, r := s.c, s.r
	wrs := make([]uverbs.SendWR, c.NumQPs)
	sges := make([][1]uverbs.SGE, c.NumQPs)
	for i := range wrs {
		sges[i][0] = uverbs.SGE{Addr: r.sendAddr(i), Length: uint32(size), LKey: r.mr.LKey()}
		w := &wrs[i]
		w.ID, w.Opcode, w.SGE = uint64(i), opcodes[c.Verb], sges[i][:]
		if c.CQMod == 1 {
			w.Flags = uverbs.SendSignaled
		}
		if c.Verb != Send {
			w.RemoteAddr, w.RKey = s.rem[i].VAddr, s.rem[i].RKey
		}
		if c.Conn == UD {
			w.AH, w.RemoteQPN, w.RemoteQKey = r.ahs[i].UVerbs(), s.rem[i].QPN, defQKey
		}
	}
	return wrs, sges
}

// waitEvent is ctx_notify_events: wait for a completion event, ack it,
// ask for the next. A timeout ends the wait when no event came for that
// long (0: never).
func (s *session) waitEvent(timeout time.Duration) error {
	ctx := s.waits.context(timeout)
	cq, err := s.r.ch.GetEvent(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return errNoMessage
		}
		return fail("Failed to get cq_event\n")
	}
	cq.AckEvents(1)
	if err := cq.RequestNotify(false); err != nil {
		return fail("Couldn't request CQ notification\n")
	}
	return nil
}

// eventWaits is one context for every timed completion-event wait of a
// session, cancelled by a watchdog timer that each wait re-arms: a new
// context per event would cost a timer and a cancellation hook each time
// on the latency path, where the channel reuses its hook for one context.
type eventWaits struct {
	ctx    context.Context
	cancel context.CancelFunc
	dog    *time.Timer
}

func (w *eventWaits) context(timeout time.Duration) context.Context {
	if timeout <= 0 {
		return context.Background()
	}
	if w.ctx == nil {
		w.ctx, w.cancel = context.WithCancel(context.Background())
		w.dog = time.AfterFunc(timeout, w.cancel)
	} else if w.ctx.Err() == nil {
		w.dog.Reset(timeout)
	}
	return w.ctx
}

func (s *session) stopWaits() {
	if s.waits.dog != nil {
		s.waits.dog.Stop()
		s.waits.cancel()
	}
}

var errNoMessage = fail("no message")

// sendError and recvError are NOTIFY_COMP_ERROR_SEND and _RECV.
func sendError(w *uverbs.WC, scnt, ccnt uint64) error {
	return fail(fmt.Sprintf(" Completion with error at client\n Failed status %d: wr_id %d syndrom 0x%x\nscnt=%d, ccnt=%d\n",
		w.Status, int(w.ID), w.VendorErr, scnt, ccnt))
}

func recvError(w *uverbs.WC, rcnt uint64) error {
	return fail(fmt.Sprintf(" Completion with error at server\n Failed status %d: wr_id %d syndrom 0x%x\n rcnt=%d\n",
		w.Status, int(w.ID), w.VendorErr, rcnt))
}

// sendCount is what the bandwidth loops count of their send
// completions: per QP (ccnt), in all (totC), and while a -D run samples
// (counted, which bwBi's receives add to).
type sendCount struct {
	ccnt          []uint64
	totC, counted uint64
}

// reap polls the send CQ once into wc and counts what completed, each
// completion standing for cq_mod sends of its QP: the send half of
// run_iter_bw's and run_iter_bi's loops. totS is for the error report.
func (n *sendCount) reap(s *session, wc []uverbs.WC, t *bwTimes, k clock, dur *durClock, totS, tot uint64) error {
	cqMod := uint64(s.c.CQMod)
	ne, err := s.r.sendCQ.Poll(wc)
	if err != nil {
		return fail("poll CQ failed -1\n")
	}
	for j := range ne {
		w := &wc[j]
		if w.Status != uverbs.WCSuccess {
			return sendError(w, totS, n.totC)
		}
		if w.Opcode == uverbs.WCRDMAWrite && s.r.cred != nil { // a credit (run_iter_bi)
			s.r.cred.completed(w.ID)
			continue
		}
		n.ccnt[w.ID] += cqMod
		n.totC += cqMod
		if s.c.DurMode && dur.sampling() {
			n.counted += cqMod
		}
		t.complete(s.c, k, n.totC, tot)
	}
	return nil
}

// bwClient is run_iter_bw: keep up to tx_depth sends in flight per QP,
// one completion per cq_mod of them, and time each post and completion.
func (s *session) bwClient(size uint64) (Report, error) {
	c, r := s.c, s.r
	wrs, _ := s.sendWRs(size)
	nq := uint64(c.NumQPs)
	iters := uint64(c.Iters)
	tot := iters * nq
	cqMod := uint64(c.CQMod)
	t := newBWTimes(c, tot)
	scnt := make([]uint64, nq)
	n := sendCount{ccnt: make([]uint64, nq)}
	var totS uint64
	var wc [pollBatch]uverbs.WC
	k := clock{time.Now()}
	dur := newDur(c, k)
	if c.DurMode {
		dur.begin()
	}
	if c.NoPeak {
		t.posted[0] = k.now()
	}
	for totS < tot || n.totC < tot || c.DurMode && !dur.ended() {
		for i := range wrs {
			w := &wrs[i]
			for (scnt[i] < iters || c.DurMode) && scnt[i]-n.ccnt[i]+1 <= uint64(c.TxDepth) {
				if r.cred.blocked(i, scnt[i], c.RxDepth) {
					break
				}
				if c.DurMode && dur.ended() {
					break
				}
				if scnt[i]%cqMod == 0 && cqMod > 1 && (c.DurMode || scnt[i] != iters-1) {
					w.Flags &^= uverbs.SendSignaled
				}
				if !c.NoPeak {
					t.posted[totS] = k.now()
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
		if n.totC >= tot && !(c.DurMode && n.totC < totS) {
			continue
		}
		if c.Events {
			if err := s.waitEvent(0); err != nil {
				return Report{}, fail("Couldn't request CQ notification\n")
			}
		}
		if err := n.reap(s, wc[:], t, k, dur, totS, tot); err != nil {
			return Report{}, err
		}
	}
	return t.senderReport(c, k, dur, size, n.counted, tot), nil
}

// postRecvs is ctx_set_recv_wqes: rx_depth receives per QP into its
// target region (UD: with the GRH's room).
func (s *session) postRecvs(size uint64) error {
	c, r := s.c, s.r
	s.recvLen = uint32(size)
	if c.Conn == UD {
		s.recvLen += udAddition
	}
	s.rwrs = make([]uverbs.RecvWR, c.NumQPs)
	s.rsges = make([][1]uverbs.SGE, c.NumQPs)
	for i := range s.rwrs {
		s.rsges[i][0] = uverbs.SGE{Addr: r.recvAddr(i), Length: s.recvLen, LKey: r.mr.LKey()}
		s.rwrs[i] = uverbs.RecvWR{ID: uint64(i), SGE: s.rsges[i][:]}
		for j := 0; j < c.RxDepth; j++ {
			if err := r.qps[i].PostRecv(&s.rwrs[i]); err != nil {
				return fail(fmt.Sprintf("Couldn't post recv Qp = %d: counter=%d\n Failed to post receive recv_wqes\n", i, j))
			}
		}
	}
	return nil
}

// bwServer is run_iter_bw_server: count receives, repost while more
// are due, and time from the first to the last.
func (s *session) bwServer(size uint64) (Report, error) {
	c, r := s.c, s.r
	nq := uint64(c.NumQPs)
	iters := uint64(c.Iters)
	tot := iters * nq
	rcntQP := make([]uint64, nq)
	posted := make([]uint64, nq)
	for i := range posted {
		posted[i] = uint64(c.RxDepth)
	}
	t := &bwTimes{posted: make([]int64, 1), completed: make([]int64, 1)}
	var rcnt uint64
	var wc [pollBatch]uverbs.WC
	k := clock{time.Now()}
	dur := newDur(c, k)
	var counted uint64
	first := true
	last, lastCnt := time.Now(), uint64(0)
	for rcnt < tot || c.DurMode && !dur.ended() {
		if c.Events {
			if err := s.waitEvent(aliveTimeout); err != nil {
				if err == errNoMessage {
					return Report{}, fail(aliveMsg(rcnt, tot) + " Due to this issue, Perftest cannot produce a report when in event mode.\n")
				}
				return Report{}, fail(" Failed to notify events to CQ")
			}
		}
		for {
			ne, err := r.recvCQ.Poll(wc[:])
			if err != nil {
				return Report{}, fail("Poll Receive CQ failed -1\n")
			}
			if ne == 0 || c.DurMode && dur.ended() {
				break
			}
			if first {
				t.posted[0] = k.now()
				dur.begin()
				first = false
			}
			for j := 0; j < ne; j++ {
				w := &wc[j]
				if w.Status != uverbs.WCSuccess {
					return Report{}, recvError(w, rcntQP[w.ID])
				}
				rcntQP[w.ID]++
				rcnt++
				if err := s.repostRecv(w.ID, rcntQP, posted, iters, dur, &counted); err != nil {
					return Report{}, err
				}
				if r.cred != nil {
					if err := s.grantOnly(int(w.ID), rcntQP[w.ID]); err != nil {
						return Report{}, err
					}
				}
			}
		}
		if rcnt != lastCnt {
			last, lastCnt = time.Now(), rcnt
		} else if !c.Events && !c.DurMode && time.Since(last) > aliveTimeout {
			s.errw(aliveMsg(rcnt, tot))
			return Report{}, fail("")
		}
	}
	end := k.now()
	if err := s.cleanCredits(); err != nil {
		return Report{}, err
	}
	if c.DurMode {
		t.posted[0], t.completed[0] = dur.from, dur.to
		return computeBW(c, t, size, counted), nil
	}
	t.completed[0] = end
	return computeBW(c, t, size, tot), nil
}

// repostRecv is what the bandwidth loops do after a good receive on QP
// qp (counted in rcntQP already): count it while sampling a duration, and
// post the QP's receive again while more are due.
func (s *session) repostRecv(qp uint64, rcntQP, posted []uint64, iters uint64, dur *durClock, counted *uint64) error {
	if s.c.DurMode && dur.sampling() {
		*counted++
	}
	if s.c.DurMode || posted[qp]+1 <= iters {
		if err := s.r.qps[qp].PostRecv(&s.rwrs[qp]); err != nil {
			return &Failure{Stderr: fmt.Sprintf("Couldn't post recv Qp=%d rcnt=%d\n", qp, rcntQP[qp]), Code: 15}
		}
		posted[qp]++
	}
	return nil
}

func aliveMsg(rcnt, tot uint64) string {
	return fmt.Sprintf(" Did not get Message for 120 Seconds, exiting..\n Total Received=%d, Total Iters Required=%d\n", rcnt, tot)
}

// latSend is run_iter_lat_send: the server answers each receive with a
// send, the client sends first; the post times are the samples.
func (s *session) latSend(size uint64) (latOut, error) {
	c, r := s.c, s.r
	w, out := s.latStart(size, 0)
	qp := r.qps[0]
	iters := uint64(c.Iters)
	var scnt, rcnt uint64
	var wc [1]uverbs.WC
	k := clock{time.Now()}
	dur := newDur(c, k)
	client := !c.isServer()
	last := time.Now()
	for scnt < iters || rcnt < iters || c.DurMode && !dur.ended() {
		if (rcnt < iters || c.DurMode) && !(scnt < 1 && client) {
			// With events both CQs report to one channel, so an event may be
			// the send CQ's: poll first and wait only while this CQ is empty
			// (perftest takes one event as this CQ's and moves on; on 6.12
			// that overflowed the send CQ, "rxe_cq_post: queue full").
			for {
				ne, err := r.recvCQ.Poll(wc[:])
				if err != nil {
					return latOut{}, fail("poll CQ failed -1\n")
				}
				if c.DurMode && dur.ended() {
					break
				}
				if ne > 0 {
					dur.begin()
					if wc[0].Status != uverbs.WCSuccess {
						return latOut{}, recvError(&wc[0], rcnt)
					}
					rcnt++
					if c.DurMode && dur.sampling() {
						out.iters++
					}
					last = time.Now()
					if c.DurMode || rcnt+uint64(c.RxDepth) <= iters {
						if err := qp.PostRecv(&s.rwrs[0]); err != nil {
							return latOut{}, &Failure{Stderr: fmt.Sprintf("Couldn't post recv: rcnt=%d\n", rcnt), Code: 15}
						}
					}
				}
				if ne > 0 {
					break
				}
				if c.Events {
					if err := s.waitEvent(aliveTimeout); err != nil {
						return latOut{}, fail(" Failed to notify events to CQ")
					}
					continue
				}
				if time.Since(last) > aliveTimeout {
					return latOut{}, fail(aliveMsg(rcnt, iters))
				}
			}
		}
		if scnt < iters || c.DurMode && !dur.ended() {
			s.gap(k)
			if !c.DurMode {
				out.posted[scnt] = k.now()
			}
			scnt++
			poll := false
			if scnt%uint64(c.CQMod) == 0 || !c.DurMode && scnt == iters {
				poll = true
				w.Flags |= uverbs.SendSignaled
			}
			if c.DurMode && dur.ended() {
				break
			}
			if err := qp.PostSend(w); err != nil {
				return latOut{}, fail(fmt.Sprintf("Couldn't post send: scnt=%d \n", scnt))
			}
			if poll {
				var ne int
				var err error
				for {
					if ne, err = r.sendCQ.Poll(wc[:]); err != nil || ne > 0 {
						break
					}
					if c.Events {
						if err := s.waitEvent(aliveTimeout); err != nil {
							return latOut{}, fail(" Failed to notify events to CQ")
						}
					}
				}
				if err != nil {
					return latOut{}, fail("poll on Send CQ failed -1\n")
				}
				if ne > 0 && wc[0].Status != uverbs.WCSuccess {
					return latOut{}, sendError(&wc[0], scnt, scnt)
				}
				w.Flags &^= uverbs.SendSignaled
			}
		}
	}
	out.sample = dur.to - dur.from
	return out, nil
}

// latOut is what a latency loop measured: the post times, or with -D
// the round trips counted while sampling and the sample's length.
type latOut struct {
	posted []int64
	iters  uint64
	sample int64
}

// latStart is what every latency loop starts from: QP 0's send work
// request for size bytes, with flags, and room for a sample per
// iteration.
func (s *session) latStart(size uint64, flags uverbs.SendFlags) (*uverbs.SendWR, latOut) {
	wrs, _ := s.sendWRs(size)
	w := &wrs[0]
	w.Flags = flags
	return w, latOut{posted: make([]int64, s.c.Iters)}
}

// gap is --latency_gap: spin that many microseconds before a post.
func (s *session) gap(k clock) {
	if s.c.LatGap <= 0 {
		return
	}
	end := k.now() + int64(s.c.LatGap)*cyclesPerUsec
	for k.now() < end {
	}
}

// latWrite is run_iter_lat_write: each side RDMA-writes size bytes whose
// last byte counts the iterations, and waits for the peer's count to
// reach its own before the next.
func (s *session) latWrite(size uint64) (latOut, error) {
	c, r := s.c, s.r
	w, out := s.latStart(size, uverbs.SendSignaled)
	qp := r.qps[0]
	iters := uint64(c.Iters)
	b := r.buf.Bytes()
	postBuf := &b[size-1]
	pollAddr := unsafe.Pointer(&b[r.targetOff(0)+int(size)-1])
	word := (*uint32)(unsafe.Pointer(uintptr(pollAddr) &^ 3))
	shift := (uintptr(pollAddr) & 3) * 8
	pollByte := func() byte { return byte(atomic.LoadUint32(word) >> shift) }
	var scnt, ccnt, rcnt uint64
	var wc [1]uverbs.WC
	k := clock{time.Now()}
	dur := newDur(c, k)
	if c.DurMode {
		dur.begin()
	}
	server := c.isServer()
	for scnt < iters || ccnt < iters || rcnt < iters || c.DurMode && !dur.ended() {
		if (rcnt < iters || c.DurMode) && !(scnt < 1 && server) {
			rcnt++
			start := time.Now()
			for n := 0; pollByte() != byte(rcnt); n++ {
				if n&0xffff == 0xffff {
					if c.DurMode && dur.ended() {
						break
					}
					if !c.DurMode && time.Since(start) > aliveTimeout {
						return latOut{}, fail(aliveMsg(rcnt-1, iters))
					}
				}
			}
		}
		if scnt < iters || c.DurMode {
			s.gap(k)
			if !c.DurMode {
				out.posted[scnt] = k.now()
			}
			scnt++
			*postBuf = byte(scnt)
			if err := qp.PostSend(w); err != nil {
				return latOut{}, fail(fmt.Sprintf("Couldn't post send: scnt=%d\n", scnt))
			}
		}
		if c.DurMode && dur.ended() {
			break
		}
		if ccnt < iters || c.DurMode {
			var ne int
			var err error
			for ne == 0 && err == nil {
				ne, err = r.sendCQ.Poll(wc[:])
			}
			if err != nil {
				return latOut{}, fail("poll CQ failed -1\n")
			}
			if wc[0].Status != uverbs.WCSuccess {
				return latOut{}, sendError(&wc[0], scnt, ccnt)
			}
			ccnt++
			if c.DurMode && dur.sampling() {
				out.iters++
			}
		}
	}
	out.sample = dur.to - dur.from
	return out, nil
}

// latRead is run_iter_lat: the client RDMA-reads size bytes, waits for
// the completion, reads again.
func (s *session) latRead(size uint64) (latOut, error) {
	c, r := s.c, s.r
	w, out := s.latStart(size, uverbs.SendSignaled)
	qp := r.qps[0]
	iters := uint64(c.Iters)
	var scnt uint64
	var wc [1]uverbs.WC
	k := clock{time.Now()}
	dur := newDur(c, k)
	if c.DurMode {
		dur.begin()
	}
	for scnt < iters || c.DurMode && !dur.ended() {
		s.gap(k)
		if !c.DurMode {
			out.posted[scnt] = k.now()
		}
		scnt++
		if err := qp.PostSend(w); err != nil {
			return latOut{}, fail(fmt.Sprintf("Couldn't post send: scnt=%d\n", scnt))
		}
		if c.Events {
			if err := s.waitEvent(aliveTimeout); err != nil {
				return latOut{}, fail("Couldn't request CQ notification\n")
			}
		}
		for {
			ne, err := r.sendCQ.Poll(wc[:])
			if err != nil {
				return latOut{}, fail("poll CQ failed -1\n")
			}
			if ne > 0 && wc[0].Status != uverbs.WCSuccess {
				return latOut{}, sendError(&wc[0], scnt, scnt)
			}
			if ne > 0 && c.DurMode && dur.sampling() {
				out.iters++
			}
			if c.Events || ne > 0 {
				break
			}
		}
	}
	out.sample = dur.to - dur.from
	return out, nil
}
