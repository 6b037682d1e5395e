package uverbs

import (
	"bytes"
	"fmt"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// SRQAttrMask selects what SRQ.Modify changes (enum ib_srq_attr_mask).
type SRQAttrMask uint32

// SRQ attribute mask bits.
const (
	SRQAttrMaxWR SRQAttrMask = abi.IB_SRQ_MAX_WR // resize to SRQAttr.MaxWR
	SRQAttrLimit SRQAttrMask = abi.IB_SRQ_LIMIT  // arm the limit event at SRQAttr.SRQLimit (0 disarms)
)

// String lists the bits.
func (m SRQAttrMask) String() string {
	return flagString(uint64(m), []flag{{1 << 0, "MAX_WR"}, {1 << 1, "LIMIT"}})
}

// Modify changes the SRQ (MODIFY_SRQ): SRQAttrLimit arms the
// SRQ_LIMIT_REACHED event for when fewer than attr.SRQLimit receive
// requests remain (0 disarms it); SRQAttrMaxWR resizes the queue to
// attr.MaxWR. rxe moves a resized queue to new memory and writes its new
// mmap cookie where this package points it, and the SRQ maps the new
// queue. siw cannot resize (an error matching ErrNotSupported). Modify
// must not run concurrently with other uses of the SRQ.
func (s *SRQ) Modify(attr SRQAttr, mask SRQAttrMask) error {
	c := s.ctx
	op := fmt.Sprintf("modify srq %d (%v)", s.handle, mask)
	if mask == 0 || mask&^(SRQAttrMaxWR|SRQAttrLimit) != 0 {
		return invalid(c.dev.Name, op, "mask %#x", uint32(mask))
	}
	if mask&SRQAttrMaxWR != 0 && attr.MaxWR == 0 {
		return invalid(c.dev.Name, op, "max_wr 0")
	}
	done, err := s.useExclusive(op)
	if err != nil {
		return err
	}
	defer done()
	req := abi.ModifySrq{SrqHandle: s.handle, AttrMask: uint32(mask), MaxWr: attr.MaxWR, SrqLimit: attr.SRQLimit}
	var pins kabi.Pins
	defer pins.Unpin()
	drvIn, mi := c.prov.modifySRQ(&pins)
	err = c.write(op, abi.CmdModifySrq.Build(&req, drvIn))
	if err != nil {
		return err
	}
	if mask&SRQAttrMaxWR == 0 {
		return nil
	}
	// The kernel may round the size; MaxWR reports what it granted.
	q, err := s.query(fmt.Sprintf("query srq %d", s.handle))
	if err != nil {
		return err
	}
	s.maxWR = q.MaxWR
	if mi != nil && len(s.driver) >= kabi.Sizeof[abi.MmInfo]() {
		d := bytes.Clone(s.driver)
		copy(d, kabi.Bytes(mi))
		s.driver = d
		if s.ops != nil {
			if err := s.ops.resized(); err != nil {
				return s.fail("resize", err)
			}
		}
	}
	return nil
}
