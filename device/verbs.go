package device

import (
	"fmt"

	"github.com/rdmastack/rdmastack/internal/devsnap"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

func init() { devsnap.Verbs = global.verbs }

// verbs is devsnap.Verbs: the devices of the last snapshot, which it
// first brings up to date as List does, but for the ports (what a verbs
// context opens with does not change with a port's state). Where no
// uevent says when the snapshot is stale, a GET dump, cheaper than the
// whole inventory, tells whether the devices are still those of the last
// one.
func (l *lister) verbs(since uint64) (uint64, []uverbs.Device, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.connect(); err != nil {
		return 0, nil, fmt.Errorf("device: list: %w", err)
	}
	var stale bool
	switch {
	case l.last == nil:
		stale = true
	case l.ev != nil:
		stale = l.ev.Changed()
	default:
		devs, err := l.nl.Devices()
		if err != nil {
			l.reset()
			return 0, nil, fmt.Errorf("device: list: %w", err)
		}
		stale = !sameDevices(l.last, devs)
	}
	if stale {
		if err := l.take(); err != nil {
			return 0, nil, fmt.Errorf("device: list: %w", err)
		}
	}
	if l.gen == since {
		return l.gen, nil, nil
	}
	devs := make([]uverbs.Device, len(l.last.Devices))
	for i, d := range l.last.Devices {
		devs[i] = d.Device
	}
	return l.gen, devs, nil
}

// sameDevices reports whether a GET dump lists the devices of snap, each
// with a uverbs char device (one that had none may have gained one, which
// only a whole inventory would tell).
func sameDevices(snap *Snapshot, devs []nldev.Device) bool {
	if len(devs) != len(snap.Devices) {
		return false
	}
	for i, d := range snap.Devices {
		if d.Index != devs[i].Index || d.Name != devs[i].Name || d.Uverbs == "" {
			return false
		}
	}
	return true
}
