package rdma

import (
	"context"
	"fmt"

	"github.com/rdmastack/rdmastack/ib"
)

// CreateID creates a synchronous id (rdma_create_id with a NULL
// channel): it has a channel of its own, and ResolveAddr, ResolveRoute,
// Connect and Accept return once their event has come, or fail with the
// event's status (a RejectReason matches unix.ECONNREFUSED) or ctx's
// error. Close also closes its channel.
func CreateID(ps PortSpace, qpType ib.QPType) (*ID, error) {
	ch, err := CreateEventChannel()
	if err != nil {
		return nil, err
	}
	id, err := ch.CreateID(ps, qpType)
	if err != nil {
		ch.Close()
		return nil, err
	}
	id.sync, id.ownCh = true, true
	return id, nil
}

// await waits, on a synchronous id, for the event that ends op.
func (id *ID) await(ctx context.Context, op string, want EventType) error {
	id.mu.Lock()
	sync := id.sync
	id.mu.Unlock()
	if !sync {
		return nil
	}
	ev, err := id.Channel().GetEvent(ctx)
	if err != nil {
		return fmt.Errorf("rdma: %s: %w", op, err)
	}
	ev.Ack()
	switch {
	case ev.ID != id:
		return fmt.Errorf("rdma: %s: %v came for another id", op, ev.Type)
	case ev.Status != nil:
		return fmt.Errorf("rdma: %s: %v: %w", op, ev.Type, ev.Status)
	case ev.Type != want:
		return fmt.Errorf("rdma: %s: %v, want %v: %w", op, ev.Type, want, errInvalid)
	}
	return nil
}
