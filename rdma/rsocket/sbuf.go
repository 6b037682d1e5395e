package rsocket

import "github.com/rdmastack/rdmastack/uverbs"

// stage copies b into the send buffer's ring where the next send goes
// and returns the one or two entries (nsge) that name it there; len(b)
// must not exceed sbufAvail, which the caller takes it from.
func (c *conn) stage(b []byte) (sges [2]uverbs.SGE, nsge int) {
	c.fillRing(0, b)
	return c.ringSGEs(len(b))
}

// ringSGEs names the n bytes where the next send goes in the send
// buffer's ring, one entry or two where they wrap, and moves the ring's
// head past them.
func (c *conn) ringSGEs(n int) (sges [2]uverbs.SGE, nsge int) {
	f := &c.flow
	r := &c.res
	if end := r.sbufSize - f.sOff; n > end {
		sges[0] = uverbs.SGE{Addr: r.sbuf.Addr(f.sOff), Length: uint32(end), LKey: r.smr.LKey()}
		sges[1] = uverbs.SGE{Addr: r.sbuf.Addr(0), Length: uint32(n - end), LKey: r.smr.LKey()}
		f.sOff = n - end
		return sges, 2
	}
	sges[0] = uverbs.SGE{Addr: r.sbuf.Addr(f.sOff), Length: uint32(n), LKey: r.smr.LKey()}
	f.sOff = (f.sOff + n) % r.sbufSize
	return sges, 1
}
