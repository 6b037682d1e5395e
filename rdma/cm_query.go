package rdma

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/rdma/internal/ucma"
)

// AddrInfo is what QUERY ADDR reports of an id: its addresses and the
// device port it is bound to. An IPv6 address's zone is its interface's
// name (its index, in decimal, if no interface has it now). The kernel
// gives the ids of connection requests no scope id: a link-local Src
// then gets the zone of the one interface that has it, and a link-local
// Dst the same.
type AddrInfo struct {
	Src, Dst netip.AddrPort
	NodeGUID ib.GUID // zero while the id is not bound to a device
	DevIndex uint32  // the device's RDMA netlink index; NoDevIndex from kernels before 5.8
	Port     uint8
	PKey     uint16
}

// NoDevIndex is AddrInfo.DevIndex when the kernel did not report it.
const NoDevIndex = ucma.NoDevIndex

// QueryAddr returns the id's addresses and device port.
func (id *ID) QueryAddr() (AddrInfo, error) { return id.queryAddr() }

// queryAddr queries the addresses and binds the id to the device they
// name, as librdmacm's ucma_query_addr and ucma_get_device do.
func (id *ID) queryAddr() (AddrInfo, error) {
	r, err := id.query("query addr", ucma.RDMA_USER_CM_QUERY_ADDR)
	if err != nil {
		return AddrInfo{}, err
	}
	src := sockaddr(r.SrcAddr[:min(int(r.SrcSize), len(r.SrcAddr))])
	dst := sockaddr(r.DstAddr[:min(int(r.DstSize), len(r.DstAddr))])
	src, dst = zoneLinkLocal(src, dst)
	a := AddrInfo{Src: src, Dst: dst, NodeGUID: ib.GUID(r.NodeGUID), DevIndex: r.IBDevIndex, Port: r.PortNum,
		PKey: binary.BigEndian.Uint16(r.PKey[:])}
	if err := id.bindDevice(a); err != nil {
		return a, err
	}
	return a, nil
}

func (id *ID) query(op string, option uint32) (*ucma.QueryAddrResp, error) {
	req := ucma.Query{ID: id.handle, Option: option}
	r := &ucma.QueryAddrResp{IBDevIndex: ucma.NoDevIndex}
	if err := id.write(op, ucma.RDMA_USER_CM_CMD_QUERY, kabi.Bytes(&req), 0, kabi.Bytes(r)); err != nil {
		return nil, err
	}
	return r, nil
}

// bindDevice finds the cached device the kernel bound the id to (by
// index and GUID, by GUID alone on kernels that do not report the
// index) and holds it until Close.
func (id *ID) bindDevice(a AddrInfo) error {
	if a.NodeGUID.IsZero() {
		return nil // a wildcard: no device yet
	}
	id.mu.Lock()
	bound := id.dev != nil
	id.mu.Unlock()
	if bound {
		return nil
	}
	get := GetDevices
	if a.DevIndex != NoDevIndex {
		get = func() ([]*Device, error) { return global.getWith(a.NodeGUID, a.DevIndex) }
	}
	list, err := get()
	if err != nil {
		return err
	}
	var dev *Device
	for _, d := range list {
		if d.attr.NodeGUID == a.NodeGUID && (a.DevIndex == NoDevIndex || d.index == int64(a.DevIndex)) {
			dev = d
			break
		}
	}
	if dev == nil {
		FreeDevices(list)
		return errNoBoundDevice(a.NodeGUID, a.DevIndex)
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.dev != nil || id.dead {
		FreeDevices(list)
		return nil
	}
	id.list, id.dev, id.port = list, dev, a.Port
	return nil
}

// errNoBoundDevice is bindDevice's error when no device of the process's
// namespace is the one the kernel bound the id to: it went meanwhile.
func errNoBoundDevice(guid ib.GUID, index uint32) error {
	return fmt.Errorf("rdma: bind id to its device: no device has GUID %v and index %d: %w", guid, index, ErrDeviceRemoved)
}

// GIDInfo is what QUERY GID reports: the id's source and destination
// GIDs, and the service ids (port space and port) they go with.
type GIDInfo struct {
	SGID, DGID     ib.GID
	PKey           uint16
	SrcSID, DstSID uint64
}

// QueryGID returns the id's GIDs (valid once its address is resolved).
func (id *ID) QueryGID() (GIDInfo, error) {
	r, err := id.query("query gid", ucma.RDMA_USER_CM_QUERY_GID)
	if err != nil {
		return GIDInfo{}, err
	}
	var g GIDInfo
	sgid, pkey, ssid, ok1 := ucma.SockaddrIB(r.SrcAddr[:min(int(r.SrcSize), len(r.SrcAddr))])
	dgid, _, dsid, ok2 := ucma.SockaddrIB(r.DstAddr[:min(int(r.DstSize), len(r.DstAddr))])
	if !ok1 && !ok2 {
		return g, fmt.Errorf("rdma: query gid: the kernel answered families %d, %d: %w", r.SrcSize, r.DstSize, errInvalid)
	}
	g.SGID, g.DGID, g.PKey, g.SrcSID, g.DstSID = sgid, dgid, pkey, ssid, dsid
	return g, nil
}
