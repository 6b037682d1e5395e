package rdma

import (
	"context"
	"errors"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

// qpsOf counts the kernel's QPs on device dev (RDMA netlink's resource
// summary).
func qpsOf(t *testing.T, nl *nldev.Client, dev uint32) uint64 {
	t.Helper()
	s, err := nl.ResourceSummaryOf(dev)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := s.Count(nldev.ResourceQP)
	return n
}

// boundID is an id on ch bound to addr (so to its device), and a PD and
// CQ of the device's context for its QP.
func boundID(t *testing.T, ch *EventChannel, addr netip.Addr, ps PortSpace, typ ib.QPType) (*ID, *uverbs.PD, *uverbs.CQ) {
	t.Helper()
	id, err := ch.CreateID(ps, typ)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { id.Close() })
	if err := id.Bind(netip.AddrPortFrom(addr, 0)); err != nil {
		t.Fatal(err)
	}
	ctx, err := id.Device().Context()
	if err != nil {
		t.Fatal(err)
	}
	pd, err := ctx.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	cq, err := ctx.CreateCQ(uverbs.CQAttr{CQE: 8})
	if err != nil {
		pd.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A QP left in the PD or on the CQ makes these fail (EBUSY).
		if err := errors.Join(cq.Close(), pd.Close()); err != nil {
			t.Errorf("the PD or CQ is still in use: %v", err)
		}
	})
	return id, pd, cq
}

var raceQPInit = uverbs.QPInit{Cap: uverbs.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}}

// TestIntegrationCMCreateQPRaces: two CreateQPs of one id at once, and
// each racing the id's Close or its channel's: at most one makes the
// id's QP, the other fails with ErrQPExists, a CreateQP that Close
// overtakes fails with an error matching os.ErrClosed, and once all
// have returned the kernel has no QP of theirs.
func TestIntegrationCMCreateQPRaces(t *testing.T) {
	addr, dev := rxeAddr(t)
	checkNoLeaks(t, &dev)
	nl, err := nldev.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer nl.Close()
	base := qpsOf(t, nl, dev)

	t.Run("two", func(t *testing.T) {
		for round := range 20 {
			ch := newChannel(t)
			id, pd, cq := boundID(t, ch, addr, PortSpaceTCP, ib.QPTypeRC)
			init := raceQPInit
			init.SendCQ, init.RecvCQ = cq, cq
			var qps [2]*uverbs.QP
			var errs [2]error
			testenv.Together(func() { qps[0], errs[0] = id.CreateQP(pd, init) }, func() { qps[1], errs[1] = id.CreateQP(pd, init) })
			made := 0
			for i, err := range errs {
				switch {
				case err == nil:
					made++
					if id.QP() != qps[i] {
						t.Fatalf("round %d: CreateQP returned a QP the id does not hold", round)
					}
				case !errors.Is(err, ErrQPExists):
					t.Fatalf("round %d: the second CreateQP: %v, want ErrQPExists", round, err)
				}
			}
			if made != 1 {
				t.Fatalf("round %d: %d of two CreateQPs made the id's QP, want 1 (%v)", round, made, errs)
			}
			if n := qpsOf(t, nl, dev); n != base+1 {
				t.Fatalf("round %d: %d QPs in the kernel for the id's one (%d before)", round, n, base)
			}
			if err := id.Close(); err != nil {
				t.Fatal(err)
			}
			if n := qpsOf(t, nl, dev); n != base {
				t.Fatalf("round %d: %d QPs left after Close (%d before)", round, n, base)
			}
		}
	})

	for _, closer := range []string{"id", "channel"} {
		t.Run("close-"+closer, func(t *testing.T) {
			for round := range 30 {
				ch := newChannel(t)
				id, pd, cq := boundID(t, ch, addr, PortSpaceTCP, ib.QPTypeRC)
				init := raceQPInit
				init.SendCQ, init.RecvCQ = cq, cq
				var errs [2]error
				var closeErr error
				closeFn := id.Close
				if closer == "channel" {
					closeFn = ch.Close
				}
				testenv.Together(func() { _, errs[0] = id.CreateQP(pd, init) }, func() { _, errs[1] = id.CreateQP(pd, init) },
					func() {
						time.Sleep(time.Duration(round%6) * 500 * time.Microsecond)
						closeErr = closeFn()
					})
				if closeErr != nil {
					t.Fatalf("round %d: Close: %v", round, closeErr)
				}
				for _, err := range errs {
					if err != nil && !errors.Is(err, ErrQPExists) && !errors.Is(err, os.ErrClosed) {
						t.Fatalf("round %d: CreateQP racing Close: %v", round, err)
					}
				}
				if id.QP() != nil {
					t.Fatalf("round %d: a closed id holds a QP", round)
				}
				if _, err := id.CreateQP(pd, init); !errors.Is(err, os.ErrClosed) {
					t.Fatalf("round %d: CreateQP after Close: %v", round, err)
				}
				if n := qpsOf(t, nl, dev); n != base {
					t.Fatalf("round %d: %d QPs left in the kernel after CreateQP raced Close (%d before; errors %v)", round, n, base, errs)
				}
			}
		})
	}
}

// TestIntegrationCMJoinRacesClose: JoinMulticast racing the Close of its
// id or channel either joins before it or fails with os.ErrClosed; the
// channel keeps no group, the id none, and the kernel no cm_id.
func TestIntegrationCMJoinRacesClose(t *testing.T) {
	addr, dev := rxeAddr(t)
	checkNoLeaks(t, &dev)
	groups := [2]netip.Addr{netip.MustParseAddr("239.1.2.3"), netip.MustParseAddr("239.1.2.4")}
	for _, closer := range []string{"id", "channel"} {
		t.Run(closer, func(t *testing.T) {
			for round := range 30 {
				ch := newChannel(t)
				id, pd, cq := boundID(t, ch, addr, PortSpaceUDP, ib.QPTypeUD)
				init := raceQPInit
				init.SendCQ, init.RecvCQ = cq, cq
				if _, err := id.CreateQP(pd, init); err != nil {
					t.Fatal(err)
				}
				var joinErrs [2]error
				var closeErr error
				closeFn := id.Close
				if closer == "channel" {
					closeFn = ch.Close
				}
				join := func(i int) func() {
					return func() { _, joinErrs[i] = id.JoinMulticast(context.Background(), groups[i], i == 1) }
				}
				testenv.Together(join(0), join(1), func() {
					time.Sleep(time.Duration(round%6) * 300 * time.Microsecond)
					closeErr = closeFn()
				})
				if closeErr != nil {
					t.Fatalf("round %d: Close: %v", round, closeErr)
				}
				for _, err := range joinErrs {
					if err != nil && !errors.Is(err, os.ErrClosed) {
						t.Fatalf("round %d: JoinMulticast racing Close: %v", round, err)
					}
				}
				ch.mu.Lock()
				listed := len(ch.mcs)
				ch.mu.Unlock()
				id.mu.Lock()
				joined := len(id.mcs)
				id.mu.Unlock()
				if listed != 0 || joined != 0 {
					t.Fatalf("round %d: after Close the channel lists %d groups, the id %d", round, listed, joined)
				}
				if _, err := id.JoinMulticast(context.Background(), groups[0], false); !errors.Is(err, os.ErrClosed) {
					t.Fatalf("round %d: JoinMulticast after Close: %v", round, err)
				}
			}
		})
	}
}
