package rsocket

import "github.com/rdmastack/rdmastack/uverbs"

// stage copies b into the send buffer's ring where the next send goes
// and returns the one or two entries (nsge) that name it there; len(b)
// must not exceed sbufAvail, which the caller takes it from.
func (c *Conn) stage(b []byte) (sges [2]uverbs.SGE, nsge int) {
	f := &c.flow
	r := &c.res
	n := len(b)
	sb := r.sbuf.Bytes()
	if end := r.sbufSize - f.sOff; n > end {
		copy(sb[f.sOff:r.sbufSize], b[:end])
		copy(sb, b[end:])
		sges[0] = uverbs.SGE{Addr: r.sbuf.Addr(f.sOff), Length: uint32(end), LKey: r.smr.LKey()}
		sges[1] = uverbs.SGE{Addr: r.sbuf.Addr(0), Length: uint32(n - end), LKey: r.smr.LKey()}
		f.sOff = n - end
		return sges, 2
	}
	copy(sb[f.sOff:], b)
	sges[0] = uverbs.SGE{Addr: r.sbuf.Addr(f.sOff), Length: uint32(n), LKey: r.smr.LKey()}
	f.sOff = (f.sOff + n) % r.sbufSize
	return sges, 1
}
