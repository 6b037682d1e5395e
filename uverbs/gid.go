package uverbs

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/internal/sysfs"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// GIDEntry is one valid entry of a port's GID table (struct
// ib_uverbs_gid_entry).
type GIDEntry struct {
	GID         ib.GID
	Index       uint32
	Port        uint32
	Type        ib.GIDType
	NetdevIndex uint32 // 0 when the entry has no network device (IB)
}

// gidEntrySize is the stride QUERY_GID_TABLE is asked for.
const gidEntrySize = 32

// maxGIDTable is the most entries one QUERY_GID_TABLE can return: the
// attribute length is a u16.
const maxGIDTable = 0xffff / gidEntrySize

// needsSysfs reports whether err says the kernel lacks an ioctl method
// (QUERY_GID_TABLE and QUERY_GID_ENTRY came with Linux 5.10).
func needsSysfs(err error) bool {
	return errors.Is(err, unix.EPROTONOSUPPORT) || errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EOPNOTSUPP)
}

// QueryGIDTable returns every valid GID of every port, in port and index
// order, through UVERBS_METHOD_QUERY_GID_TABLE, or from sysfs on kernels
// before 5.10 and on the write() interface.
func (c *Context) QueryGIDTable() ([]GIDEntry, error) {
	const op = "query gid table"
	dev, err := c.QueryDevice()
	if err != nil {
		return nil, err
	}
	total := 0
	var ports []*PortAttr
	for p := 1; p <= int(dev.PhysPortCount); p++ {
		pa, err := c.QueryPort(p)
		if err != nil {
			return nil, err
		}
		ports = append(ports, pa)
		total += int(pa.GIDTableLen)
	}
	if c.ioctlOK {
		n := min(total, maxGIDTable)
		if n == 0 {
			return nil, nil
		}
		buf := make([]abi.GidEntry, n)
		var num uint64
		call := abi.NewIoctl(abi.UVERBS_OBJECT_DEVICE, abi.UVERBS_METHOD_QUERY_GID_TABLE)
		call.Const(abi.UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE, gidEntrySize)
		call.Out(abi.UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES, entriesBytes(buf))
		call.Out(abi.UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES, kabi.Bytes(&num))
		err := c.ioctl(op, call)
		if err == nil {
			if num > uint64(n) {
				return nil, wrap(c.dev.Name, op, fmt.Errorf("kernel reports %d entries for a buffer of %d: %w", num, n, unix.EPROTO))
			}
			return decodeGIDEntries(entriesBytes(buf[:num])), nil
		}
		if !needsSysfs(err) {
			return nil, err
		}
	}
	var out []GIDEntry
	for i, pa := range ports {
		for idx := 0; idx < int(pa.GIDTableLen); idx++ {
			e, err := c.sysfsGID(i+1, idx, pa.LinkLayer)
			if errors.Is(err, unix.ENODATA) {
				continue
			}
			if err != nil {
				return nil, wrap(c.dev.Name, op, err)
			}
			out = append(out, e)
		}
	}
	return out, nil
}

func entriesBytes(e []abi.GidEntry) []byte {
	if len(e) == 0 {
		return nil
	}
	return unsafeSlice(e)
}

// decodeGIDEntries parses an array of struct ib_uverbs_gid_entry; a
// trailing partial entry is ignored.
func decodeGIDEntries(b []byte) []GIDEntry {
	var out []GIDEntry
	for len(b) >= gidEntrySize {
		out = append(out, decodeGIDEntry(kabi.Decode[abi.GidEntry](b[:gidEntrySize])))
		b = b[gidEntrySize:]
	}
	return out
}

func decodeGIDEntry(e abi.GidEntry) GIDEntry {
	return GIDEntry{GID: ib.GID(e.Gid), Index: e.GidIndex, Port: e.PortNum, Type: ib.GIDType(e.GidType), NetdevIndex: e.NetdevIfindex}
}

// QueryGID returns entry index of port's GID table through
// UVERBS_METHOD_QUERY_GID_ENTRY, or from sysfs on kernels before 5.10. An
// empty slot gives an error matching unix.ENODATA.
func (c *Context) QueryGID(port, index int) (GIDEntry, error) {
	op := fmt.Sprintf("query gid %d of port %d", index, port)
	if port < 1 {
		return GIDEntry{}, invalid(c.dev.Name, op, "ports are numbered from 1")
	}
	if index < 0 || index > 0xffff {
		return GIDEntry{}, invalid(c.dev.Name, op, "index out of range")
	}
	if c.ioctlOK {
		var e abi.GidEntry
		call := abi.NewIoctl(abi.UVERBS_OBJECT_DEVICE, abi.UVERBS_METHOD_QUERY_GID_ENTRY)
		call.Const(abi.UVERBS_ATTR_QUERY_GID_ENTRY_PORT, uint64(port))
		call.Const(abi.UVERBS_ATTR_QUERY_GID_ENTRY_GID_INDEX, uint64(index))
		call.InU32(abi.UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS, 0)
		call.Out(abi.UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY, kabi.Bytes(&e))
		err := c.ioctl(op, call)
		if err == nil {
			return decodeGIDEntry(e), nil
		}
		if !needsSysfs(err) {
			return GIDEntry{}, err
		}
	}
	pa, err := c.QueryPort(port)
	if err != nil {
		return GIDEntry{}, err
	}
	if index >= int(pa.GIDTableLen) {
		return GIDEntry{}, invalid(c.dev.Name, op, "index beyond the table of %d entries", pa.GIDTableLen)
	}
	e, err := c.sysfsGID(port, index, pa.LinkLayer)
	return e, wrap(c.dev.Name, op, err)
}

// sysfsGID reads one GID entry from /sys/class/infiniband/<dev>/ports/N/:
// gids/I, gid_attrs/types/I and gid_attrs/ndevs/I. An all-zero GID is an
// empty slot (ENODATA), as the kernel's QUERY_GID_ENTRY reports it.
func (c *Context) sysfsGID(port, index int, ll ib.LinkLayer) (GIDEntry, error) {
	dir := filepath.Join(sysInfiniband, c.dev.Name, "ports", strconv.Itoa(port))
	s, err := sysfs.ReadString(filepath.Join(dir, "gids", strconv.Itoa(index)))
	if err != nil {
		return GIDEntry{}, err
	}
	gid, err := parseSysfsGID(s)
	if err != nil {
		return GIDEntry{}, err
	}
	if gid.IsZero() {
		return GIDEntry{}, fmt.Errorf("empty gid slot: %w", unix.ENODATA)
	}
	e := GIDEntry{GID: gid, Index: uint32(index), Port: uint32(port), Type: ib.GIDTypeIB}
	t, err := sysfs.ReadString(filepath.Join(dir, "gid_attrs", "types", strconv.Itoa(index)))
	switch {
	case err == nil && t == "RoCE v2":
		e.Type = ib.GIDTypeRoCEv2
	case (err == nil && t == "IB/RoCE v1") || errors.Is(err, unix.EINVAL) || errors.Is(err, os.ErrNotExist):
		// IB ports have no type file (EINVAL); kernels without
		// gid_attrs know only v1.
		if ll == ib.LinkLayerEthernet {
			e.Type = ib.GIDTypeRoCEv1
		}
	case err == nil:
		return GIDEntry{}, fmt.Errorf("unknown gid type %q: %w", t, unix.EPROTO)
	default:
		return GIDEntry{}, err
	}
	if nd, err := sysfs.ReadString(filepath.Join(dir, "gid_attrs", "ndevs", strconv.Itoa(index))); err == nil {
		if ifi, err := net.InterfaceByName(nd); err == nil {
			e.NetdevIndex = uint32(ifi.Index)
		}
	}
	return e, nil
}

// parseSysfsGID parses sysfs's eight groups of four hex digits.
func parseSysfsGID(s string) (ib.GID, error) {
	g, err := sysfs.ParseGID(s)
	return ib.GID(g), err
}

// QueryPKey returns entry index of port's P_Key table. The kernel has no
// uverbs command for it; like libibverbs this reads
// /sys/class/infiniband/<dev>/ports/<port>/pkeys/<index>.
func (c *Context) QueryPKey(port, index int) (uint16, error) {
	op := fmt.Sprintf("query pkey %d of port %d", index, port)
	if port < 1 || index < 0 {
		return 0, invalid(c.dev.Name, op, "ports are numbered from 1, indices from 0")
	}
	s, err := sysfs.ReadString(filepath.Join(sysInfiniband, c.dev.Name, "ports", strconv.Itoa(port), "pkeys", strconv.Itoa(index)))
	if err != nil {
		return 0, wrap(c.dev.Name, op, err)
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(s), "0x"), 16, 16)
	if err != nil {
		return 0, wrap(c.dev.Name, op, fmt.Errorf("malformed pkey %q: %w", s, unix.EPROTO))
	}
	return uint16(v), nil
}

// PKeyTable returns port's whole P_Key table (PKeyTableLen entries).
func (c *Context) PKeyTable(port int) ([]uint16, error) {
	pa, err := c.QueryPort(port)
	if err != nil {
		return nil, err
	}
	out := make([]uint16, pa.PKeyTableLen)
	for i := range out {
		if out[i], err = c.QueryPKey(port, i); err != nil {
			return nil, err
		}
	}
	return out, nil
}
