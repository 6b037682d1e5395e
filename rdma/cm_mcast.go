package rdma

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/rdma/internal/ucma"
)

// MulticastQPN is the remote QP number of a datagram sent to a multicast
// group (0xFFFFFF, what a MULTICAST_JOIN event's Peer.QPNum holds).
const MulticastQPN = 0xFFFFFF

// Multicast is a group a UD id joined (rdma_join_multicast). Its
// MULTICAST_JOIN or MULTICAST_ERROR event comes on the id's channel with
// Event.Multicast set. Leave it with Leave (closing the id leaves it too).
type Multicast struct {
	id       *ID
	uid      uint64
	handle   uint32 // the kernel's mc id
	group    netip.Addr
	sendOnly bool

	mu       sync.Mutex
	gid      ib.GID // the MGID and MLID of MULTICAST_JOIN, once attached
	lid      uint16
	attached bool
	left     bool
}

// Group is the group's IP address.
func (m *Multicast) Group() netip.Addr { return m.group }

// ID is the id that joined.
func (m *Multicast) ID() *ID { return m.id }

// JoinMulticast joins the multicast group (rdma_join_multicast_ex) on a
// UD id whose address is resolved (ResolveAddr to the group, or Bind to
// a local address). sendOnly joins as a send-only full member (no
// receive). On MULTICAST_JOIN GetEvent attaches the id's QP to the group
// (unless sendOnly), as librdmacm does; send to the event's Peer.AH with
// MulticastQPN and Peer.QKey. A synchronous id waits for the event.
// RoCE v2 takes IPv4 groups only (IPv6 ones fail with ENOTSUPP).
func (id *ID) JoinMulticast(ctx context.Context, group netip.Addr, sendOnly bool) (*Multicast, error) {
	op := fmt.Sprintf("join multicast %v", group)
	if id.qpType != ib.QPTypeUD {
		return nil, fmt.Errorf("rdma: %s: a %v id: multicast needs UD: %w", op, id.qpType, errInvalid)
	}
	if !group.IsMulticast() && !group.Unmap().IsMulticast() {
		return nil, fmt.Errorf("rdma: %s: not a multicast address: %w", op, errInvalid)
	}
	// The kernel answers ENOSYS on a device without multicast.
	if err := id.iwarpForbidsUD(op, "multicast", unix.ENOSYS); err != nil {
		return nil, err
	}
	m := &Multicast{id: id, group: group, sendOnly: sendOnly}
	req := ucma.JoinMcast{ID: id.handle, JoinFlags: ucma.RDMA_MC_JOIN_FLAG_FULLMEMBER}
	if sendOnly {
		req.JoinFlags = ucma.RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER
	}
	n, err := putSockaddr(&req.Addr, netip.AddrPortFrom(group, 0))
	if err != nil {
		return nil, fmt.Errorf("rdma: %s: %w", op, err)
	}
	req.AddrSize = n
	if err := id.enrollMC(op, m); err != nil {
		return nil, err
	}
	req.UID = m.uid
	var resp ucma.CreateIDResp
	err = id.write(op, ucma.RDMA_USER_CM_CMD_JOIN_MCAST, kabi.Bytes(&req), 0, kabi.Bytes(&resp))
	m.handle = resp.ID
	if err == nil {
		id.mu.Lock()
		if id.dead {
			// Closed after the join: DESTROY_ID left the group, and
			// Close unenrolled it.
			err = fmt.Errorf("rdma: %s: %w", op, errClosed)
		}
		id.mu.Unlock()
	}
	if err != nil {
		m.forget()
		return nil, err
	}
	if err := id.await(ctx, op, EventMulticastJoin); err != nil {
		return nil, errors.Join(err, m.Leave())
	}
	return m, nil
}

// enrollMC puts m in the id's groups and the channel's table before the
// kernel can report its events, unless the id is closed: Close then
// finds it there, so that none escapes it.
func (id *ID) enrollMC(op string, m *Multicast) error {
	id.cmd.RLock() // the id's channel does not change meanwhile (Migrate)
	defer id.cmd.RUnlock()
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.dead {
		return fmt.Errorf("rdma: %s: %w", op, errClosed)
	}
	if err := id.ch.registerMC(m); err != nil {
		return fmt.Errorf("rdma: %s: %w", op, err)
	}
	id.mcs = append(id.mcs, m)
	return nil
}

// forget takes m out of its id's groups and its channel's table.
func (m *Multicast) forget() {
	m.id.Channel().unregisterMC(m)
	m.id.mu.Lock()
	for i, x := range m.id.mcs {
		if x == m {
			m.id.mcs = append(m.id.mcs[:i], m.id.mcs[i+1:]...)
			break
		}
	}
	m.id.mu.Unlock()
}

// onJoin attaches the id's QP to the group of a MULTICAST_JOIN.
func (m *Multicast) onJoin(ev *Event) {
	qp := m.id.QP()
	if qp == nil || m.sendOnly {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.attached || m.left {
		return
	}
	gid, lid := ev.Peer.AH.DGID, ev.Peer.AH.DLID
	if err := qp.AttachMcast(gid, lid); err != nil {
		ev.Type, ev.Status = EventMulticastError, err
		return
	}
	m.gid, m.lid, m.attached = gid, lid, true
}

// Leave detaches the id's QP from the group and leaves it
// (rdma_leave_multicast); the group's events not yet read are dropped.
// Safe to call more than once.
func (m *Multicast) Leave() error {
	m.mu.Lock()
	if m.left {
		m.mu.Unlock()
		return nil
	}
	m.left = true
	attached := m.attached
	m.mu.Unlock()
	op := fmt.Sprintf("leave multicast %v", m.group)
	var errs []error
	if qp := m.id.QP(); attached && qp != nil {
		errs = append(errs, qp.DetachMcast(m.gid, m.lid))
	}
	req := ucma.DestroyID{ID: m.handle}
	var resp ucma.DestroyIDResp
	if err := m.id.write(op, ucma.RDMA_USER_CM_CMD_LEAVE_MCAST, kabi.Bytes(&req), 0, kabi.Bytes(&resp)); err != nil && !errors.Is(err, errClosed) {
		errs = append(errs, err)
	}
	m.forget()
	return errors.Join(errs...)
}

// registerMC gives m a uid, from the ids' sequence, on the channel.
func (ch *EventChannel) registerMC(m *Multicast) error { return enroll(ch, ch.mcs, &m.uid, m) }

func (ch *EventChannel) unregisterMC(m *Multicast) { forget(ch, ch.mcs, m.uid) }

func (ch *EventChannel) lookupMC(uid uint64) *Multicast { return find(ch, ch.mcs, uid) }
