package rxe

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// SRQ is an rxe shared receive queue with its queue mapped.
type SRQ struct {
	u      *uverbs.SRQ
	mu     sync.Mutex
	q      queue
	maxSGE int
	closed bool
}

// NewSRQ maps srq's queue. The SRQ takes ownership of srq: Close destroys
// it.
func NewSRQ(srq *uverbs.SRQ) (*SRQ, error) {
	c := srq.Context()
	if err := checkDriver(c.Device(), "srq"); err != nil {
		return nil, err
	}
	drv := srq.DriverData()
	if len(drv) < abi.Sizeof[abi.RxeCreateSrqResp]() {
		return nil, fmt.Errorf("rxe: srq %d: driver response of %d bytes: %w", srq.Handle(), len(drv), unix.EPROTO)
	}
	q, err := mapQueue(c, "srq", abi.Decode[abi.RxeCreateSrqResp](drv).Mi)
	if err != nil {
		return nil, fmt.Errorf("rxe: srq %d: %w", srq.Handle(), err)
	}
	if q.elemSize() < recvWqeHdr {
		q.unmap()
		return nil, fmt.Errorf("rxe: srq %d: elements too small: %w", srq.Handle(), unix.EPROTO)
	}
	return &SRQ{u: srq, q: q, maxSGE: int(srq.MaxSGE())}, nil
}

// UVerbs is the underlying uverbs SRQ.
func (s *SRQ) UVerbs() *uverbs.SRQ { return s.u }

// PostRecv posts one receive work request to the SRQ.
func (s *SRQ) PostRecv(wr *RecvWR) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	return postRecv(&s.q, wr, s.maxSGE, func(format string, args ...any) error {
		return fmt.Errorf("rxe: srq %d: post recv: %s: %w", s.u.Num(), fmt.Sprintf(format, args...), unix.EINVAL)
	})
}

// Close unmaps the queue and destroys the SRQ. Safe to call more than
// once.
func (s *SRQ) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if err := s.u.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	s.closed = true
	return s.q.unmap()
}
