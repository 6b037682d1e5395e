package ah

import (
	"context"
	"fmt"
	"net"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs"
)

// Mirror is a Table kept equal to one device's GID cache: filled from
// QUERY_GID_TABLE (sysfs on kernels without it) and refreshed on the
// context's GID-change events.
type Mirror struct {
	*Table
	ctx *uverbs.Context
}

// NewMirror builds the GID table mirror of an open device: one table port
// per device port, RoCE for Ethernet link layers, GRH-required as the port
// says.
func NewMirror(ctx *uverbs.Context) (*Mirror, error) {
	dev, err := ctx.QueryDevice()
	if err != nil {
		return nil, fmt.Errorf("ah: mirror: %w", err)
	}
	var specs []PortSpec
	for p := 1; p <= int(dev.PhysPortCount); p++ {
		pa, err := ctx.QueryPort(p)
		if err != nil {
			return nil, fmt.Errorf("ah: mirror: %w", err)
		}
		specs = append(specs, PortSpec{Port: uint32(p), Size: pa.GIDTableLen,
			RoCE: pa.LinkLayer == ib.LinkLayerEthernet, GRHRequired: pa.GRHRequired})
	}
	t, err := NewTable(specs...)
	if err != nil {
		return nil, err
	}
	m := &Mirror{Table: t, ctx: ctx}
	if _, _, err := m.Refresh(); err != nil {
		return nil, err
	}
	return m, nil
}

// Refresh re-reads the kernel's GID table and applies the difference (see
// Table.Sync).
func (m *Mirror) Refresh() (added, deleted int, err error) {
	entries, err := m.ctx.QueryGIDTable()
	if err != nil {
		return 0, 0, fmt.Errorf("ah: refresh GID table: %w", err)
	}
	infos := make([]EntryInfo, 0, len(entries))
	for _, e := range entries {
		info := EntryInfo{GID: e.GID, Type: e.Type, Index: e.Index, Port: e.Port}
		if e.NetdevIndex != 0 {
			if ifi, err := net.InterfaceByIndex(int(e.NetdevIndex)); err == nil {
				info.Netdev = ifi.Name
			}
		}
		infos = append(infos, info)
	}
	return m.Sync(infos)
}

// Watch reads the context's asynchronous events until ctx ends, refreshing
// the mirror on every GID change; other events go to other (which may be
// nil). It owns the context's event fd while it runs: other readers would
// miss events.
func (m *Mirror) Watch(ctx context.Context, other func(uverbs.AsyncEvent)) error {
	for {
		ev, err := m.ctx.GetEvent(ctx)
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			return err
		}
		if ev.Type == uverbs.EventGIDChange {
			if _, _, err := m.Refresh(); err != nil {
				return err
			}
			continue
		}
		if other != nil {
			other(ev)
		}
	}
}
