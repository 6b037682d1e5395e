package rdma

import (
	"fmt"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/rdma/internal/ucma"
)

// Migrate moves the id, its events not yet read and its multicast
// groups to channel ch (rdma_migrate_id); a nil ch gives the id a channel
// of its own and makes it synchronous (see CreateID). Afterwards its
// events come on ch only. Events GetEvent already returned stay valid. A
// synchronous id's own old channel is closed. Migrating to the id's own
// channel does nothing.
func (id *ID) Migrate(ch *EventChannel) error {
	const op = "migrate id"
	own := ch == nil
	if own {
		var err error
		if ch, err = CreateEventChannel(); err != nil {
			return fmt.Errorf("rdma: %s: %w", op, err)
		}
	}
	old, err := id.migrate(op, ch)
	if err != nil {
		if own {
			ch.Close()
		}
		return err
	}
	id.mu.Lock()
	wasOwn := id.ownCh
	id.sync, id.ownCh = own, own
	id.mu.Unlock()
	if wasOwn && old != ch {
		return old.Close()
	}
	return nil
}

// migrate moves the id to ch under the id's command lock: no command can
// go to the old channel meanwhile. It returns the old channel.
func (id *ID) migrate(op string, ch *EventChannel) (*EventChannel, error) {
	id.cmd.Lock()
	defer id.cmd.Unlock()
	old := id.ch
	if id.dead {
		return old, fmt.Errorf("rdma: %s: %w", op, errClosed)
	}
	if old == ch {
		return old, nil
	}
	// The new channel knows the id (and its groups) before the kernel
	// moves its events there; the kernel keeps their uids.
	if err := ch.register(id); err != nil {
		return old, fmt.Errorf("rdma: %s: %w", op, err)
	}
	id.mu.Lock()
	mcs := append([]*Multicast(nil), id.mcs...)
	id.mu.Unlock()
	for _, m := range mcs {
		if err := ch.registerMC(m); err != nil {
			id.unmigrate(ch, mcs)
			return old, fmt.Errorf("rdma: %s: %w", op, err)
		}
	}
	if err := ch.migrateFrom(op, old, id.handle); err != nil {
		id.unmigrate(ch, mcs)
		return old, err
	}
	old.unregister(id)
	for _, m := range mcs {
		old.unregisterMC(m)
	}
	id.ch = ch
	return old, nil
}

// unmigrate undoes migrate's registrations on ch.
func (id *ID) unmigrate(ch *EventChannel, mcs []*Multicast) {
	ch.unregister(id)
	for _, m := range mcs {
		ch.unregisterMC(m)
	}
}

// migrateFrom sends MIGRATE_ID on ch for the id handle of channel old.
// The command names old's fd: it is taken through old's Control, which
// keeps that file open (its number not reused by another file) until
// the kernel has answered, never from the display value FD().
func (ch *EventChannel) migrateFrom(op string, old *EventChannel, handle uint32) error {
	err := ch.fd.Control(func(fd int) error {
		return old.fd.Control(func(oldFD int) error {
			req := ucma.MigrateID{ID: handle, FD: uint32(oldFD)}
			var resp ucma.MigrateResp
			return ucma.Write(fd, ucma.RDMA_USER_CM_CMD_MIGRATE_ID, kabi.Bytes(&req), 0, kabi.Bytes(&resp))
		})
	})
	return ch.wrapErr(op, err)
}
