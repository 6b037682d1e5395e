package nldev

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// FRMRPoolKey identifies one FRMR pool of a device: the RDMA core keeps a
// pool of fast-registration memory regions for every combination of these
// properties (RDMA_NLDEV_ATTR_FRMR_POOL_KEY, Linux 7.0).
type FRMRPoolKey struct {
	VendorKey    uint64 // RDMA_NLDEV_ATTR_FRMR_POOL_KEY_VENDOR_KEY: driver-defined
	NumDMABlocks uint64 // RDMA_NLDEV_ATTR_FRMR_POOL_KEY_NUM_DMA_BLOCKS
	AccessFlags  uint32 // RDMA_NLDEV_ATTR_FRMR_POOL_KEY_ACCESS_FLAGS: IB_ACCESS_* bits
	ATS          bool   // RDMA_NLDEV_ATTR_FRMR_POOL_KEY_ATS: address translation services
}

// String returns the key as iproute2 prints and reads it:
// "vendor_key:num_dma_blocks:access_flags:ats", the first three in
// lowercase hex without 0x, ats 0 or 1.
func (k FRMRPoolKey) String() string {
	ats := "0"
	if k.ATS {
		ats = "1"
	}
	return strconv.FormatUint(k.VendorKey, 16) + ":" + strconv.FormatUint(k.NumDMABlocks, 16) + ":" +
		strconv.FormatUint(uint64(k.AccessFlags), 16) + ":" + ats
}

// Errors of ParseFRMRPoolKey, in FRMRPoolKeyError.Err.
var (
	ErrFRMRKeySyntax = errors.New("a field is not a hex number")
	ErrFRMRKeyFields = errors.New("expected 4 fields")
	ErrFRMRKeyRange  = errors.New("field value out of range")
	ErrFRMRKeyExtra  = errors.New("fields after the fourth must be 0")
)

// FRMRPoolKeyError is the error of ParseFRMRPoolKey. It matches its Err
// and unix.EINVAL.
type FRMRPoolKeyError struct {
	Key   string // the text parsed
	Field int    // the index of the field at fault; with ErrFRMRKeyFields, the number of fields
	Err   error  // ErrFRMRKeySyntax, ErrFRMRKeyFields, ErrFRMRKeyRange or ErrFRMRKeyExtra
}

func (e *FRMRPoolKeyError) Error() string {
	if errors.Is(e.Err, ErrFRMRKeyFields) {
		return fmt.Sprintf("nldev: FRMR pool key %q has %d fields: %v", e.Key, e.Field, e.Err)
	}
	return fmt.Sprintf("nldev: FRMR pool key %q, field %d: %v", e.Key, e.Field, e.Err)
}

func (e *FRMRPoolKeyError) Unwrap() []error { return []error{e.Err, unix.EINVAL} }

// ParseFRMRPoolKey reads a key in the form String writes and iproute2's
// "rdma resource set frmr_pools ... pinned KEY N" reads: four hex fields
// (an optional 0x prefix each) separated by colons; access_flags must fit
// in 32 bits and ats be 0 or 1. Like iproute2 it accepts a trailing colon
// and further fields that are 0. Unlike iproute2's strtoull it refuses
// spaces and signs.
func ParseFRMRPoolKey(s string) (FRMRPoolKey, error) {
	var k FRMRPoolKey
	fail := func(field int, err error) (FRMRPoolKey, error) {
		return FRMRPoolKey{}, &FRMRPoolKeyError{Key: s, Field: field, Err: err}
	}
	i := 0
	for rest := s; rest != ""; i++ {
		f, after, _ := strings.Cut(rest, ":")
		rest = after
		digits := f
		if len(digits) > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') {
			digits = digits[2:]
		}
		if digits == "" || strings.Trim(digits, "0123456789abcdefABCDEF") != "" {
			return fail(i, ErrFRMRKeySyntax)
		}
		v, err := strconv.ParseUint(digits, 16, 64)
		if err != nil {
			return fail(i, ErrFRMRKeyRange)
		}
		switch i {
		case 0:
			k.VendorKey = v
		case 1:
			k.NumDMABlocks = v
		case 2:
			if v > 1<<32-1 {
				return fail(i, ErrFRMRKeyRange)
			}
			k.AccessFlags = uint32(v)
		case 3:
			if v > 1 {
				return fail(i, ErrFRMRKeyRange)
			}
			k.ATS = v == 1
		default:
			if v != 0 {
				return fail(i, ErrFRMRKeyExtra)
			}
		}
	}
	if i < 4 {
		return fail(i, ErrFRMRKeyFields)
	}
	return k, nil
}

// FRMRPool is one FRMR pool of a device, as RDMA_NLDEV_CMD_FRMR_POOLS_GET
// reports it. The kernel sends every field; pointers are nil only for
// attributes a reply lacked.
type FRMRPool struct {
	DevIndex uint32       // RDMA_NLDEV_ATTR_DEV_INDEX
	DevName  string       // RDMA_NLDEV_ATTR_DEV_NAME
	Key      *FRMRPoolKey // RDMA_NLDEV_ATTR_FRMR_POOL_KEY; fields the nest lacks are 0

	// KernelVendorKey is set for the pools the kernel keeps for itself
	// (RDMA_NLDEV_ATTR_FRMR_POOL_KEY_KERNEL_VENDOR_KEY, in the key nest);
	// a dump lists those only with the DriverDetails option.
	KernelVendorKey *uint64

	QueueHandles  *uint32 // RDMA_NLDEV_ATTR_FRMR_POOL_QUEUE_HANDLES: free MRs queued
	InUse         *uint64 // RDMA_NLDEV_ATTR_FRMR_POOL_IN_USE
	MaxInUse      *uint64 // RDMA_NLDEV_ATTR_FRMR_POOL_MAX_IN_USE: high-water mark
	PinnedHandles *uint32 // RDMA_NLDEV_ATTR_FRMR_POOL_PINNED_HANDLES: MRs kept from aging out

	Driver []DriverAttr // RDMA_NLDEV_ATTR_DRIVER; nil when the driver adds nothing
}

// decodeFRMRPools reads one message of an FRMR pools dump: the device and
// a table of pools (a long table spans several messages).
func decodeFRMRPools(b []byte) ([]FRMRPool, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	var (
		out     []FRMRPool
		dev     uint32
		name    string
		haveDev bool
	)
	for ad.Next() {
		switch ad.Type() {
		case nlabi.RDMA_NLDEV_ATTR_DEV_INDEX:
			dev, haveDev = ad.Uint32(), true
		case nlabi.RDMA_NLDEV_ATTR_DEV_NAME:
			name = ad.String()
		case nlabi.RDMA_NLDEV_ATTR_FRMR_POOLS:
			ad.Nested(func(tad *netlink.AttributeDecoder) error {
				for tad.Next() {
					if tad.Type() != nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_ENTRY {
						continue
					}
					tad.Nested(func(ead *netlink.AttributeDecoder) error {
						p, err := decodeFRMRPool(ead)
						if err != nil {
							return err
						}
						out = append(out, p)
						return nil
					})
				}
				return tad.Err()
			})
		}
	}
	if err := ad.Err(); err != nil {
		return nil, err
	}
	if !haveDev {
		return nil, fmt.Errorf("reply lacks the device index: %w", errProto)
	}
	for i := range out {
		out[i].DevIndex, out[i].DevName = dev, name
	}
	return out, nil
}

// decodeFRMRPool reads the attributes of one FRMR_POOL_ENTRY.
func decodeFRMRPool(ad *netlink.AttributeDecoder) (FRMRPool, error) {
	var p FRMRPool
	for ad.Next() {
		switch ad.Type() {
		case nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY:
			ad.Nested(func(kad *netlink.AttributeDecoder) error {
				k, kvk, err := decodeFRMRPoolKey(kad)
				p.Key, p.KernelVendorKey = &k, kvk
				return err
			})
		case nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_QUEUE_HANDLES:
			p.QueueHandles = ptr(ad.Uint32())
		case nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_IN_USE:
			p.InUse = ptr(ad.Uint64())
		case nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_MAX_IN_USE:
			p.MaxInUse = ptr(ad.Uint64())
		case nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_PINNED_HANDLES:
			p.PinnedHandles = ptr(ad.Uint32())
		case nlabi.RDMA_NLDEV_ATTR_DRIVER:
			ad.Nested(func(dad *netlink.AttributeDecoder) error {
				p.Driver = decodeDriverAttrs(dad)
				return nil
			})
		}
	}
	return p, ad.Err()
}

// decodeFRMRPoolKey reads the attributes of an FRMR_POOL_KEY nest.
func decodeFRMRPoolKey(ad *netlink.AttributeDecoder) (FRMRPoolKey, *uint64, error) {
	var (
		k   FRMRPoolKey
		kvk *uint64
	)
	for ad.Next() {
		switch ad.Type() {
		case nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_ATS:
			k.ATS = ad.Uint8() != 0
		case nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_ACCESS_FLAGS:
			k.AccessFlags = ad.Uint32()
		case nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_VENDOR_KEY:
			k.VendorKey = ad.Uint64()
		case nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_NUM_DMA_BLOCKS:
			k.NumDMABlocks = ad.Uint64()
		case nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_KERNEL_VENDOR_KEY:
			kvk = ptr(ad.Uint64())
		}
	}
	return k, kvk, ad.Err()
}
