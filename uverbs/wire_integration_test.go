package uverbs_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/uverbs"
)

// The wire tests use the public API only: each guest opens rxe0, makes a
// QP on the GID of its wire address and swaps what the peer needs (QP
// number, PSN, GID, the buffer's address and rkey) over the wire's
// rendezvous, as a program swaps them over TCP.

// wireDest is what the peer needs to reach a QP and its buffer.
type wireDest struct {
	QPN, PSN, RKey uint32
	Addr           uint64 // of the buffer's first byte
	GID            ib.GID
}

// newWireEnv is newEnv with the source GID of this guest's wire address.
func newWireEnv(t *testing.T, w *testenv.WireEnv) *env {
	t.Helper()
	e := newEnv(t)
	g, err := e.c.FindGID(1, w.Self)
	if err != nil {
		t.Fatal(err)
	}
	e.sgid = g
	return e
}

// exchange swaps this end's dest for the peer's under name.
func (e *env) exchange(t *testing.T, w *testenv.WireEnv, name string, qp *uverbs.QP, psn uint32) wireDest {
	t.Helper()
	s := w.Exchange(t, name, fmt.Sprintf("%d %d %d %d %v", qp.Num(), psn, e.mr.RKey(), e.buf.Addr(0), e.sgid.GID))
	var d wireDest
	var gid string
	if _, err := fmt.Sscanf(s, "%d %d %d %d %s", &d.QPN, &d.PSN, &d.RKey, &d.Addr, &gid); err != nil {
		t.Fatalf("the peer's dest %q: %v", s, err)
	}
	var err error
	if d.GID, err = ib.ParseGID(gid); err != nil {
		t.Fatal(err)
	}
	return d
}

// wireRC is an RC QP of this guest connected to the peer's across the
// wire, on a CQ of cqe entries, and the peer's dest.
func wireRC(t *testing.T, w *testenv.WireEnv, e *env, cqe, depth int) (*uverbs.QP, *cq, wireDest) {
	t.Helper()
	q := e.newCQ(t, cqe)
	qp := e.newQP(t, q, q, qpOpts{send: depth, recv: depth})
	psn := rand.Uint32() & 0xffffff
	peer := e.exchange(t, w, t.Name()+"/dest", qp, psn)
	co := uverbs.ConnectOptions{Access: uverbs.AccessRemoteWrite | uverbs.AccessRemoteRead, SGIDIndex: uint8(e.sgid.Index),
		PSN: psn, MinRNRTimer: 1}
	if err := qp.Init(co); err != nil {
		t.Fatal(err)
	}
	if err := qp.Connect(co, uverbs.Peer{QPN: peer.QPN, PSN: peer.PSN, GID: peer.GID}); err != nil {
		t.Fatal(err)
	}
	return qp, q, peer
}

// wireUD is a UD QP of this guest ready to send, on a CQ of cqe entries,
// the peer's dest and an address handle for it.
func wireUD(t *testing.T, w *testenv.WireEnv, e *env, cqe, send, recv int) (*uverbs.QP, *cq, wireDest, *uverbs.AH) {
	t.Helper()
	q := e.newCQ(t, cqe)
	qp := e.newQP(t, q, q, qpOpts{typ: ib.QPTypeUD, send: send, recv: recv})
	var co uverbs.ConnectOptions
	if err := qp.Init(co); err != nil {
		t.Fatal(err)
	}
	if err := qp.Connect(co, uverbs.Peer{}); err != nil {
		t.Fatal(err)
	}
	peer := e.exchange(t, w, t.Name()+"/dest", qp, 0)
	ah, err := e.pd.CreateAH(uverbs.AHAttr{IsGlobal: true, DGID: peer.GID, SGIDIndex: uint8(e.sgid.Index), HopLimit: 64, Port: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ah.Close() })
	return qp, q, peer, ah
}

// pattern is the content of message k of side's end, n bytes.
func pattern(side, k, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + k*13 + side*101 + 1)
	}
	return b
}

// next returns the completions q holds, waiting on its channel when it
// holds none; 0 when deadline passes first.
func (q *cq) next(t *testing.T, wc []uverbs.WC, deadline time.Time) int {
	t.Helper()
	for {
		n, err := q.Poll(wc)
		if err != nil || n > 0 {
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if err := q.RequestNotify(false); err != nil {
			t.Fatal(err)
		}
		if n, err := q.Poll(wc); err != nil || n > 0 {
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if err := q.waitEvent(t, deadline); errors.Is(err, os.ErrDeadlineExceeded) {
			return 0
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

// TestWireVerbsRC: an RC QP on each guest, connected across the wire:
// each sends the other three messages (1 byte, 4 KiB, 64 KiB), writes
// 64 KiB into the other's buffer with immediate data and reads 64 KiB
// back from it; every byte is checked.
func TestWireVerbsRC(t *testing.T) {
	w, _ := rxetest.Wire(t)
	e := newWireEnv(t, w)
	qp, q, peer := wireRC(t, w, e, 64, 16)
	// The buffer: message k to send at k×64 KiB (the write's source is
	// k = 3), received at 256 KiB + k×64 KiB; the peer writes at 512
	// KiB, and the read lands at 768 KiB.
	const slot, recvAt, writeAt, readAt = 64 << 10, 256 << 10, 512 << 10, 768 << 10
	sizes := []int{1, 4096, 65536}
	mine, theirs := w.Side, 1-w.Side
	for k := range 4 {
		copy(e.buf.Bytes()[k*slot:], pattern(mine, k, slot))
	}
	for k := range len(sizes) + 1 { // the last for the write's immediate data
		if err := qp.PostRecv(&uverbs.RecvWR{ID: uint64(k), SGE: []uverbs.SGE{e.sge(recvAt+k*slot, slot)}}); err != nil {
			t.Fatal(err)
		}
	}
	w.Sync(t, t.Name()+"/posted")
	start := time.Now()
	var wrs []uverbs.SendWR
	for k, n := range sizes {
		wrs = append(wrs, uverbs.SendWR{ID: uint64(100 + k), Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled, SGE: []uverbs.SGE{e.sge(k*slot, n)}})
	}
	wrs = append(wrs,
		uverbs.SendWR{ID: 200, Opcode: uverbs.OpRDMAWriteWithImm, Flags: uverbs.SendSignaled, Imm: 0xabc0 + uint32(mine),
			SGE: []uverbs.SGE{e.sge(3*slot, slot)}, RemoteAddr: peer.Addr + writeAt, RKey: peer.RKey},
		uverbs.SendWR{ID: 300, Opcode: uverbs.OpRDMARead, Flags: uverbs.SendSignaled,
			SGE: []uverbs.SGE{e.sge(readAt, slot)}, RemoteAddr: peer.Addr + 2*slot, RKey: peer.RKey})
	if err := qp.PostSendList(wrs); err != nil {
		t.Fatal(err)
	}
	want := map[uint64]uverbs.WCOpcode{100: uverbs.WCSend, 101: uverbs.WCSend, 102: uverbs.WCSend, 200: uverbs.WCRDMAWrite,
		300: uverbs.WCRDMARead, 0: uverbs.WCRecv, 1: uverbs.WCRecv, 2: uverbs.WCRecv, 3: uverbs.WCRecvRDMAWithImm}
	wc := make([]uverbs.WC, 16)
	for deadline := time.Now().Add(30 * time.Second); len(want) > 0; {
		n := q.next(t, wc, deadline)
		if n == 0 {
			t.Fatalf("no completion for %v after 30 s", want)
		}
		for _, c := range wc[:n] {
			op, ok := want[c.ID]
			if !ok || c.Status != uverbs.WCSuccess || c.Opcode != op || c.QPNum != qp.Num() {
				t.Fatalf("completion %+v (%v, %v): want one of %v, successful", c, c.Opcode, c.Status, want)
			}
			delete(want, c.ID)
			switch {
			case c.ID < uint64(len(sizes)):
				got := e.buf.Bytes()[recvAt+int(c.ID)*slot:][:c.ByteLen]
				if !bytes.Equal(got, pattern(theirs, int(c.ID), sizes[c.ID])) {
					t.Fatalf("message %d: %d bytes, not what the peer sent", c.ID, c.ByteLen)
				}
			case c.ID == 3:
				// The byte count is the write's length (rxe_resp.c's
				// do_complete, as mlx5 reports it).
				if c.Imm != 0xabc0+uint32(theirs) || c.Flags&uverbs.WCWithImm == 0 || c.ByteLen != slot {
					t.Fatalf("the write's completion %+v: want immediate data %#x, %d bytes", c, 0xabc0+theirs, slot)
				}
				if !bytes.Equal(e.buf.Bytes()[writeAt:writeAt+slot], pattern(theirs, 3, slot)) {
					t.Fatal("the peer's RDMA write left other bytes")
				}
			case c.ID == 300:
				if !bytes.Equal(e.buf.Bytes()[readAt:readAt+slot], pattern(theirs, 2, slot)) {
					t.Fatal("the RDMA read brought other bytes")
				}
			}
		}
	}
	t.Logf("side %d (peer %s): 3 sends, a write and a read each way in %v", w.Side, w.PeerKernel, time.Since(start))
	w.Sync(t, t.Name()+"/done") // the peer's read of this buffer is over
}

// TestWireVerbsUD: a UD QP on each guest sends the other four datagrams
// (1 byte to the 1024-byte MTU) with immediate data; each arrives
// intact, from the peer's QP, and the address built from its GRH is the
// peer's GID.
func TestWireVerbsUD(t *testing.T) {
	w, _ := rxetest.Wire(t)
	e := newWireEnv(t, w)
	qp, q, peer, ah := wireUD(t, w, e, 64, 16, 16)
	const slot, recvAt, qkey = 2048, 256 << 10, 0x11111111
	sizes := []int{1, 100, 512, 1024}
	mine, theirs := w.Side, 1-w.Side
	for k := range sizes {
		copy(e.buf.Bytes()[k*slot:], pattern(mine, k, slot))
		if err := qp.PostRecv(&uverbs.RecvWR{ID: uint64(k), SGE: []uverbs.SGE{e.sge(recvAt+k*slot, slot)}}); err != nil {
			t.Fatal(err)
		}
	}
	w.Sync(t, t.Name()+"/posted")
	for k, n := range sizes {
		if err := qp.PostSend(&uverbs.SendWR{ID: uint64(100 + k), Opcode: uverbs.OpSendWithImm, Flags: uverbs.SendSignaled, Imm: uint32(k),
			SGE: []uverbs.SGE{e.sge(k*slot, n)}, AH: ah, RemoteQPN: peer.QPN, RemoteQKey: qkey}); err != nil {
			t.Fatal(err)
		}
	}
	sends, recvs := 0, map[uint32]bool{}
	wc := make([]uverbs.WC, 16)
	for deadline := time.Now().Add(20 * time.Second); sends < len(sizes) || len(recvs) < len(sizes); {
		n := q.next(t, wc, deadline)
		if n == 0 {
			t.Fatalf("after 20 s: %d sends done, datagrams %v of %d", sends, recvs, len(sizes))
		}
		for _, c := range wc[:n] {
			if c.Status != uverbs.WCSuccess {
				t.Fatalf("completion %+v (%v)", c, c.Status)
			}
			if c.Opcode == uverbs.WCSend {
				sends++
				continue
			}
			k := int(c.Imm)
			if c.Opcode != uverbs.WCRecv || c.Flags&uverbs.WCWithImm == 0 || k >= len(sizes) || recvs[c.Imm] ||
				c.SrcQP != peer.QPN || c.Flags&uverbs.WCWithGRH == 0 || int(c.ByteLen) != uverbs.GRHLen+sizes[k] {
				t.Fatalf("receive %+v: want datagram %d of %d bytes from QP %d with a GRH", c, k, uverbs.GRHLen+sizes[k%len(sizes)], peer.QPN)
			}
			recvs[c.Imm] = true
			at := recvAt + int(c.ID)*slot
			if !bytes.Equal(e.buf.Bytes()[at+uverbs.GRHLen:at+int(c.ByteLen)], pattern(theirs, k, sizes[k])) {
				t.Fatalf("datagram %d: not what the peer sent", k)
			}
			attr, err := e.c.AHAttrFromWC(1, &c, e.buf.Bytes()[at:at+uverbs.GRHLen])
			if err != nil || attr.DGID != peer.GID || attr.SGIDIndex != uint8(e.sgid.Index) {
				t.Fatalf("datagram %d: reply address %+v (%v), want to %v from GID index %d", k, attr, err, peer.GID, e.sgid.Index)
			}
		}
	}
	w.Sync(t, t.Name()+"/done")
}

// stamp writes message seq into b: its number, a CRC-32 of the rest,
// and the rest.
func stamp(b []byte, seq uint32) {
	binary.LittleEndian.PutUint32(b, seq)
	for i := range b[8:] {
		b[8+i] = byte(int(seq)*31 + i)
	}
	binary.LittleEndian.PutUint32(b[4:], crc32.ChecksumIEEE(b[8:]))
}

// unstamp is the number of the message in b, and whether it is intact.
func unstamp(b []byte) (uint32, bool) {
	if len(b) < 8 {
		return 0, false
	}
	seq := binary.LittleEndian.Uint32(b)
	want := make([]byte, len(b))
	stamp(want, seq)
	return seq, bytes.Equal(b, want)
}

// TestWireVerbsNetem: with netem's loss, reordering, duplication,
// corruption and delay on both guests' egress, an RC stream of 1000
// numbered 1 KiB sends each way arrives whole, once and in order; of
// 1000 numbered UD datagrams each way none arrives corrupt, and what
// arrives (duplicates included: UD may deliver netem's copies) is
// plausible for the faults. Each side logs its figures.
func TestWireVerbsNetem(t *testing.T) {
	w, _ := rxetest.Wire(t)
	const count = 1000
	t.Run("RC", func(t *testing.T) {
		e := newWireEnv(t, w)
		const size, window, recvs = 1024, 32, 64
		const recvAt = 256 << 10
		qp, q, _ := wireRC(t, w, e, 2*(window+recvs), window+recvs)
		for j := range recvs {
			if err := qp.PostRecv(&uverbs.RecvWR{ID: uint64(j), SGE: []uverbs.SGE{e.sge(recvAt+j*size, size)}}); err != nil {
				t.Fatal(err)
			}
		}
		w.Netem(t, testenv.WireFaults)
		w.Sync(t, t.Name()+"/posted")
		start := time.Now()
		var sent, acked, received uint32
		wc := make([]uverbs.WC, 64)
		for deadline := start.Add(3 * time.Minute); acked < count || received < count; {
			for ; sent < count && sent-acked < window; sent++ {
				j := int(sent % window)
				stamp(e.buf.Bytes()[j*size:(j+1)*size], sent)
				if err := qp.PostSend(&uverbs.SendWR{ID: 1<<32 | uint64(sent), Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled,
					SGE: []uverbs.SGE{e.sge(j*size, size)}}); err != nil {
					t.Fatal(err)
				}
			}
			n := q.next(t, wc, deadline)
			if n == 0 {
				t.Fatalf("after %v: %d sent, %d acknowledged, %d received", time.Since(start), sent, acked, received)
			}
			for _, c := range wc[:n] {
				if c.Status != uverbs.WCSuccess {
					t.Fatalf("after %v (%d sent, %d acknowledged, %d received): completion %+v (%v)", time.Since(start), sent, acked, received, c, c.Status)
				}
				if c.ID>>32 == 1 {
					if uint32(c.ID) != acked {
						t.Fatalf("send %d completed, want %d", uint32(c.ID), acked)
					}
					acked++
					continue
				}
				at := recvAt + int(c.ID)*size
				seq, ok := unstamp(e.buf.Bytes()[at : at+int(c.ByteLen)])
				if !ok || seq != received || c.ByteLen != size {
					t.Fatalf("receive %d: message %d (intact %v, %d bytes), want message %d intact", received, seq, ok, c.ByteLen, received)
				}
				received++
				if err := qp.PostRecv(&uverbs.RecvWR{ID: c.ID, SGE: []uverbs.SGE{e.sge(at, size)}}); err != nil {
					t.Fatal(err)
				}
			}
		}
		t.Logf("side %d (peer %s): %d × %d B each way, all in order and intact, in %v", w.Side, w.PeerKernel, count, size, time.Since(start))
		w.Sync(t, t.Name()+"/done")
	})
	t.Run("UD", func(t *testing.T) {
		e := newWireEnv(t, w)
		// Every receive is posted first, so that none is lost for the want
		// of one: the sends at 0, the receives (GRH and datagram) from
		// 64 KiB on.
		const size, window, slot, recvAt = 256, 32, 320, 64 << 10
		recvs := count + count/10
		qp, q, peer, ah := wireUD(t, w, e, recvs+2*window, window, recvs)
		for j := range recvs {
			if err := qp.PostRecv(&uverbs.RecvWR{ID: uint64(j), SGE: []uverbs.SGE{e.sge(recvAt+j*slot, uverbs.GRHLen+size)}}); err != nil {
				t.Fatal(err)
			}
		}
		w.Netem(t, testenv.WireFaults)
		w.Sync(t, t.Name()+"/posted")
		start := time.Now()
		var sent, done int
		seen := make([]int, count)
		var got, corrupt int
		wc := make([]uverbs.WC, 64)
		handle := func(n int) {
			for _, c := range wc[:n] {
				if c.Status != uverbs.WCSuccess {
					t.Fatalf("completion %+v (%v)", c, c.Status)
				}
				if c.ID>>32 == 1 {
					done++
					continue
				}
				got++
				if c.ByteLen != uverbs.GRHLen+size || c.SrcQP != peer.QPN {
					corrupt++
					continue
				}
				at := recvAt + int(c.ID)*slot
				seq, ok := unstamp(e.buf.Bytes()[at+uverbs.GRHLen : at+uverbs.GRHLen+size])
				if !ok || int(seq) >= count {
					corrupt++
					continue
				}
				seen[seq]++
			}
		}
		// In rounds of 200, each ended by a rendezvous: UD has no flow
		// control, and a guest that sends 2000 at once (6.12 does, in
		// 0.6 s) overruns its peer's virtual NIC or QEMU's socket, which
		// lost a third of them; the faults are netem's to make.
		const round = 200
		for deadline := start.Add(time.Minute); done < count; {
			for ; sent < count && sent-done < window && sent < (done/round+1)*round; sent++ {
				j := sent % window
				stamp(e.buf.Bytes()[j*size:(j+1)*size], uint32(sent))
				if err := qp.PostSend(&uverbs.SendWR{ID: 1<<32 | uint64(sent), Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled,
					SGE: []uverbs.SGE{e.sge(j*size, size)}, AH: ah, RemoteQPN: peer.QPN, RemoteQKey: 0x11111111}); err != nil {
					t.Fatal(err)
				}
			}
			n := q.next(t, wc, deadline)
			if n == 0 {
				t.Fatalf("after %v: %d of %d sends done", time.Since(start), done, count)
			}
			handle(n)
			if done == sent && done%round == 0 {
				w.Sync(t, fmt.Sprintf("%s/%d", t.Name(), done))
			}
		}
		sendTime := time.Since(start)
		// What is still on the wire arrives within a second.
		for deadline := time.Now().Add(time.Second); ; {
			n := q.next(t, wc, deadline)
			if n == 0 {
				break
			}
			handle(n)
		}
		unique, dups := 0, 0
		for _, k := range seen {
			if k > 0 {
				unique++
				dups += k - 1
			}
		}
		t.Logf("side %d (peer %s): %d datagrams sent in %v; received %d: %d distinct (%d lost), %d duplicates, %d corrupt",
			w.Side, w.PeerKernel, count, sendTime, got, unique, count-unique, dups, corrupt)
		// netem's 1% loss and 0.1% corruption (which rxe's ICRC drops)
		// cost about 11 of 1000; its 1% duplication adds about 10.
		if corrupt != 0 || unique < count*9/10 || dups > count/20 {
			t.Errorf("side %d: %d corrupt, %d of %d distinct, %d duplicates: want none corrupt, at least 90%% delivered, at most 5%% duplicated",
				w.Side, corrupt, unique, count, dups)
		}
		w.Sync(t, t.Name()+"/done")
	})
}
