package uverbs

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// siwSRQ is a siw shared receive queue's mapped ring.
type siwSRQ struct {
	srq    *SRQ
	mu     sync.Mutex
	ring   siwRing
	closed bool
}

func (siwProvider) newSRQ(srq *SRQ, d driverIO) (srqOps, error) {
	if len(d.out) < kabi.Sizeof[abi.SiwUrespCreateSrq]() {
		return nil, fmt.Errorf("driver response of %d bytes: %w", len(d.out), unix.EPROTO)
	}
	r := kabi.Decode[abi.SiwUrespCreateSrq](d.out)
	ring, err := mapSIWRing(srq.ctx, "srq", r.SrqKey, r.NumRqe, siwRqeSize, 0)
	if err != nil {
		return nil, err
	}
	return &siwSRQ{srq: srq, ring: ring}, nil
}

func (x *siwSRQ) postRecv(wr *RecvWR) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return x.srq.closedErr("post srq recv")
	}
	return postSIWRecv(&x.ring, wr, &x.srq.object)
}

// resized: siw keeps an SRQ's ring where it is (its MODIFY_SRQ changes
// the limit, not the size).
func (x *siwSRQ) resized() error { return nil }

func (x *siwSRQ) release() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.closed = true
	return x.ring.unmap()
}
