package rsocket

import (
	"errors"
	"testing"

	"github.com/rdmastack/rdmastack/rdma/internal/rsproto"
)

// TestRSSizes: the options become rsockets' sizes as rsetsockopt and
// rs_set_qp_size make them.
func TestRSSizes(t *testing.T) {
	def := rsSizes{sbuf: rsproto.DefaultBufSize, rbuf: rsproto.DefaultBufSize, sq: 384, rq: 384, inline: 64}
	for _, c := range []struct {
		name                        string
		read, write, sq, rq, inline int
		devMax                      int
		want                        rsSizes
	}{
		{"defaults", 0, 0, 0, 0, 0, 0, def},
		{"doubled", 1 << 19, 4096, 0, 0, 0, 0, rsSizes{sbuf: 8192, rbuf: 1 << 20, sq: 384, rq: 384, inline: 64}},
		{"floor", 1, 2047, 0, 0, 0, 0, rsSizes{sbuf: 4096, rbuf: 4096, sq: 384, rq: 384, inline: 64}},
		{"ceiling", 1 << 40, 1 << 29, 0, 0, 0, 0, rsSizes{sbuf: 1 << 30, rbuf: 1 << 30, sq: 384, rq: 384, inline: 64}},
		{"queues", 0, 0, 1, 100000, 0, 0, rsSizes{sbuf: def.sbuf, rbuf: def.rbuf, sq: 16, rq: 0xFFFE, inline: 64}},
		{"device limit", 0, 0, 1000, 20, 0, 512, rsSizes{sbuf: def.sbuf, rbuf: def.rbuf, sq: 512, rq: 20, inline: 64}},
		{"no inline", 0, 0, 0, 0, -1, 0, rsSizes{sbuf: def.sbuf, rbuf: def.rbuf, sq: 384, rq: 384, inline: 0}},
		{"inline", 0, 0, 0, 0, 1 << 20, 0, rsSizes{sbuf: def.sbuf, rbuf: def.rbuf, sq: 384, rq: 384, inline: 0xFFFE}},
	} {
		s := sizesOf(c.read, c.write, c.sq, c.rq, c.inline)
		s.fitQueues(c.devMax)
		if s != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, s, c.want)
		}
	}
}

// TestRSBufUse: Close frees at once with no user, else the last user
// frees; no use starts after Close.
func TestRSBufUse(t *testing.T) {
	freed := 0
	free := func() error { freed++; return errors.New("free") }
	var u bufUse
	if err := u.close(free); err == nil || freed != 1 || u.acquire() {
		t.Fatalf("close with no user: %v, freed %d", err, freed)
	}
	var v bufUse
	if !v.acquire() || !v.acquire() {
		t.Fatal("acquire while open")
	}
	if err := v.close(free); err != nil || freed != 1 {
		t.Fatalf("close with users: %v, freed %d", err, freed)
	}
	v.release()
	if freed != 1 {
		t.Fatal("freed with a user left")
	}
	v.release()
	if freed != 2 {
		t.Fatal("the last user did not free")
	}
}
