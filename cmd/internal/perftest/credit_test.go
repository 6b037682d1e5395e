package perftest

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCreditWindow: perftest's swindow is 32-bit (scnt + 1 - credit), so
// a count past 2^32 against a credit just below it is still a small
// window; a sender stops when one more send would reach rx_depth.
func TestCreditWindow(t *testing.T) {
	for _, tc := range []struct {
		scnt   uint64
		credit uint32
		want   uint32
	}{
		{0, 0, 1},
		{511, 0, 512},
		{511, 170, 342},
		{1<<32 + 5, math.MaxUint32 - 4, 11},
	} {
		if got := creditWindow(tc.scnt, tc.credit); got != tc.want {
			t.Errorf("creditWindow(%d, %d) = %d, want %d", tc.scnt, tc.credit, got, tc.want)
		}
	}
	cr := &credits{peer: make([]uint32, 2), every: 170}
	if cr.blocked(0, 510, 512) || !cr.blocked(0, 511, 512) {
		t.Errorf("with no credit: blocked(510) = %v, blocked(511) = %v, want false, true", cr.blocked(0, 510, 512), cr.blocked(0, 511, 512))
	}
	cr.peer[1] = 170
	if cr.blocked(1, 680, 512) || !cr.blocked(1, 681, 512) {
		t.Error("with a credit of 170: want sends up to 681 exclusive")
	}
	var none *credits
	if none.blocked(0, 1<<40, 1) || none.outstanding(0) != 0 {
		t.Error("no credits block nothing")
	}
	var due []uint64
	for rcnt := uint64(1); rcnt <= 1030; rcnt++ {
		if cr.due(rcnt, 512) {
			due = append(due, rcnt)
		}
	}
	want := []uint64{170, 340, 510, 512, 682, 852, 1022, 1024}
	if len(due) != len(want) {
		t.Fatalf("credits due at %v, want %v", due, want)
	}
	for i := range want {
		if due[i] != want[i] {
			t.Fatalf("credits due at %v, want %v", due, want)
		}
	}
}

// TestCreditsNoOverrun plays a sender and a receiver under the credit
// rules with the worst timing (a send lands at once, credits and
// reposts come late and in random order with each other): no SEND may
// find the receive queue empty (iWARP would end the connection) and the
// run must always finish.
func TestCreditsNoOverrun(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ iters, rxDepth int }{
		{20, 20}, {1000, 512}, {5000, 512}, {300, 4}, {100, 2}, {1000, 6},
	} {
		for round := 0; round < 20; round++ {
			cr := &credits{peer: make([]uint32, 1), every: uint64(max(tc.rxDepth/3, 1))}
			iters := uint64(tc.iters)
			var scnt, rcnt, landed uint64
			free := uint64(tc.rxDepth) // receives posted and not yet consumed
			posted := uint64(tc.rxDepth)
			var credits []uint32 // written by the receiver, not yet landed
			for rcnt < iters {
				var moves []int
				if scnt < iters && !cr.blocked(0, scnt, tc.rxDepth) {
					moves = append(moves, 0)
				}
				if landed > rcnt {
					moves = append(moves, 1)
				}
				if len(credits) > 0 {
					moves = append(moves, 2)
				}
				if len(moves) == 0 {
					t.Fatalf("iters %d rx_depth %d: stuck at scnt %d rcnt %d credit %d", tc.iters, tc.rxDepth, scnt, rcnt, cr.peer[0])
				}
				switch moves[rng.IntN(len(moves))] {
				case 0: // a SEND lands and takes a receive
					if free == 0 {
						t.Fatalf("iters %d rx_depth %d: send %d found no receive (rcnt %d, credit %d)", tc.iters, tc.rxDepth, scnt+1, rcnt, cr.peer[0])
					}
					free--
					scnt++
					landed++
				case 1: // the receiver polls it, reposts, maybe credits
					rcnt++
					if posted+1 <= iters {
						posted++
						free++
					}
					if cr.due(rcnt, tc.rxDepth) {
						credits = append(credits, uint32(rcnt))
					}
				case 2: // the oldest credit WRITE lands (RC keeps the order)
					cr.peer[0] = credits[0]
					credits = credits[1:]
				}
			}
		}
	}
}
