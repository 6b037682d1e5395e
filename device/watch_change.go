package device

import "fmt"

// ChangeKind is what changed between two snapshots.
type ChangeKind uint8

// Kinds of change.
const (
	Added         ChangeKind = iota + 1 // a device appeared
	Removed                             // a device went (or left the namespace)
	Renamed                             // a device has a new name
	PortState                           // a port's state or physical state changed
	NetdevChanged                       // a port's network device changed, came, went or moved away
)

var changeNames = [...]string{Added: "added", Removed: "removed", Renamed: "renamed", PortState: "port-state", NetdevChanged: "netdev"}

func (k ChangeKind) String() string {
	if int(k) < len(changeNames) && changeNames[k] != "" {
		return changeNames[k]
	}
	return fmt.Sprintf("ChangeKind(%d)", uint8(k))
}

// Change is one difference between the snapshot a watcher delivered
// before and the one it delivers now.
type Change struct {
	Kind  ChangeKind
	Index uint32 // the device's index (the kernel keeps it for the device's life)
	Name  string // the device's name now; for Removed its last name
	// OldName is the name before a Renamed.
	OldName string
	// Port is the port number of a PortState or NetdevChanged.
	Port uint32
}

func (c Change) String() string {
	switch c.Kind {
	case Renamed:
		return fmt.Sprintf("%s %d %s→%s", c.Kind, c.Index, c.OldName, c.Name)
	case PortState, NetdevChanged:
		return fmt.Sprintf("%s %d %s/%d", c.Kind, c.Index, c.Name, c.Port)
	}
	return fmt.Sprintf("%s %d %s", c.Kind, c.Index, c.Name)
}

// diff lists what changed from a to b (a nil: nothing before), devices
// matched by index, in b's order then a's for those removed.
func diff(a, b *Snapshot) []Change {
	var out []Change
	old := make(map[uint32]*Device)
	if a != nil {
		for i := range a.Devices {
			old[a.Devices[i].Index] = &a.Devices[i]
		}
	}
	seen := make(map[uint32]bool)
	for _, d := range b.Devices {
		seen[d.Index] = true
		o, ok := old[d.Index]
		if !ok {
			out = append(out, Change{Kind: Added, Index: d.Index, Name: d.Name})
			continue
		}
		if o.Name != d.Name {
			out = append(out, Change{Kind: Renamed, Index: d.Index, Name: d.Name, OldName: o.Name})
		}
		for i, p := range d.Ports {
			if i >= len(o.Ports) {
				break
			}
			q := o.Ports[i]
			if p.State != q.State || p.PhysState != q.PhysState {
				out = append(out, Change{Kind: PortState, Index: d.Index, Name: d.Name, Port: p.Number})
			}
			if p.Netdev != q.Netdev || p.NetdevIndex != q.NetdevIndex {
				out = append(out, Change{Kind: NetdevChanged, Index: d.Index, Name: d.Name, Port: p.Number})
			}
		}
	}
	if a != nil {
		for _, d := range a.Devices {
			if !seen[d.Index] {
				out = append(out, Change{Kind: Removed, Index: d.Index, Name: d.Name})
			}
		}
	}
	return out
}
