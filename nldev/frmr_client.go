package nldev

import (
	"errors"
	"fmt"
	"os"

	"github.com/mdlayher/netlink"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// frmrSince is the release that brought RDMA_NLDEV_CMD_FRMR_POOLS_GET/SET
// (kernel commit dbd0472fd7a5, v7.0-rc1, as iproute2's 87c66f79 records).
const frmrSince = "7.0"

// frmrSupport caches, per Client, whether the kernel has the FRMR pool
// commands.
type frmrSupport uint8

const (
	frmrUnknown frmrSupport = iota
	frmrYes
	frmrNo
)

func errFRMRNotSupported(op string, cause error) error {
	return withMessage(&Error{Op: op, Err: fmt.Errorf("FRMR pools need Linux %s: %w", frmrSince, ErrNotSupported)}, cause)
}

// FRMRPools returns the FRMR pools of device dev (RDMA_NLDEV_CMD_FRMR_POOLS_GET
// dump, Linux 7.0). With DriverDetails the kernel also lists the pools it
// keeps for itself (those have KernelVendorKey set). On older kernels the
// error matches ErrNotSupported and names the release; for a device that
// does not exist it matches os.ErrNotExist.
func (c *Client) FRMRPools(dev uint32, opts ...ResourceOption) ([]FRMRPool, error) {
	op := fmt.Sprintf("dump FRMR pools of device %d", dev)
	var o ResourceOption
	for _, x := range opts {
		o |= x
	}
	if o&^DriverDetails != 0 {
		return nil, invalid(op, fmt.Sprintf("unknown resource option %#x", uint8(o&^DriverDetails)))
	}
	if c.frmr == frmrNo {
		return nil, errFRMRNotSupported(op, nil)
	}
	pools, err := c.frmrDump(op, dev, o&DriverDetails != 0)
	if err != nil {
		return nil, c.frmrError(op, dev, err)
	}
	return pools, nil
}

// frmrDump runs the dump; a kernel that answers it has the commands.
func (c *Client) frmrDump(op string, dev uint32, details bool) ([]FRMRPool, error) {
	msgs, err := c.execute(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_FRMR_POOLS_GET, dump: true,
		attrs: func(ae *netlink.AttributeEncoder) {
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev)
			if details {
				// Known since 6.10, so to every kernel with FRMR pools.
				ae.Uint8(nlabi.RDMA_NLDEV_ATTR_DRIVER_DETAILS, 1)
			}
		}})
	if err != nil {
		return nil, err
	}
	c.frmr = frmrYes
	var out []FRMRPool
	for _, b := range msgs {
		ps, err := decodeFRMRPools(b)
		if err != nil {
			return nil, wrap(op, fmt.Errorf("decode FRMR pools: %w", err))
		}
		out = append(out, ps...)
	}
	return out, nil
}

// SetFRMRAgingPeriod sets after how many seconds unused MRs of device
// dev's FRMR pools are released (RDMA_NLDEV_CMD_FRMR_POOLS_SET with
// RDMA_NLDEV_ATTR_FRMR_POOLS_AGING_PERIOD, Linux 7.0; needs CAP_NET_ADMIN).
// Zero is refused before anything is sent, as iproute2 does; the kernel
// refuses a device without FRMR pools with EINVAL.
func (c *Client) SetFRMRAgingPeriod(dev, seconds uint32) error {
	op := fmt.Sprintf("set FRMR pool aging period of device %d to %ds", dev, seconds)
	if seconds == 0 {
		return invalid(op, "the aging period must be at least 1 second")
	}
	return c.frmrSet(op, dev, func(ae *netlink.AttributeEncoder) {
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_FRMR_POOLS_AGING_PERIOD, seconds)
	})
}

// SetFRMRPinned sets how many MRs the FRMR pool of device dev with key key
// keeps however long they stay unused (RDMA_NLDEV_CMD_FRMR_POOLS_SET with
// RDMA_NLDEV_ATTR_FRMR_POOL_PINNED_HANDLES, Linux 7.0; needs
// CAP_NET_ADMIN).
func (c *Client) SetFRMRPinned(dev uint32, key FRMRPoolKey, n uint32) error {
	op := fmt.Sprintf("set pinned handles of FRMR pool %s of device %d to %d", key, dev, n)
	return c.frmrSet(op, dev, func(ae *netlink.AttributeEncoder) {
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, dev)
		ae.Uint32(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_PINNED_HANDLES, n)
		// The kernel parses this command strictly: the key nest must
		// carry NLA_F_NESTED, which Nested sets.
		ae.Nested(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY, func(ae *netlink.AttributeEncoder) error {
			var ats uint8
			if key.ATS {
				ats = 1
			}
			ae.Uint8(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_ATS, ats)
			ae.Uint32(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_ACCESS_FLAGS, key.AccessFlags)
			ae.Uint64(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_VENDOR_KEY, key.VendorKey)
			ae.Uint64(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_NUM_DMA_BLOCKS, key.NumDMABlocks)
			return nil
		})
	})
}

// frmrSet sends one FRMR_POOLS_SET. A kernel without the command has no
// handler for it, so it changes nothing and answers EINVAL, which
// frmrError tells apart from the other EINVALs; once the probe has said
// so, nothing is sent at all.
func (c *Client) frmrSet(op string, dev uint32, attrs func(*netlink.AttributeEncoder)) error {
	if c.frmr == frmrNo {
		return errFRMRNotSupported(op, nil)
	}
	err := c.do(request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_FRMR_POOLS_SET, attrs: attrs})
	if err != nil {
		return c.frmrError(op, dev, err)
	}
	c.frmr = frmrYes
	return nil
}

// frmrError explains an EINVAL: no such device (os.ErrNotExist), a kernel
// without the commands (ErrNotSupported), or the kernel's refusal of the
// request itself.
func (c *Client) frmrError(op string, dev uint32, err error) error {
	if !isEINVAL(err) {
		return err
	}
	if c.frmr != frmrYes {
		has, perr := c.hasFRMR()
		if perr == nil && !has {
			return errFRMRNotSupported(op, err)
		}
	}
	return c.explainEINVAL(op, dev, err)
}

// hasFRMR probes, once per Client, whether the kernel has the FRMR pool
// commands: it dumps the (harmless) FRMR_POOLS_GET of the first device. A
// kernel with the command answers a device that exists; one without
// answers EINVAL whatever the device. EINVAL also means an unknown device,
// so the device is looked up again when the answer is EINVAL. Without any
// device the question stays open and the answer is true.
func (c *Client) hasFRMR() (bool, error) {
	switch c.frmr {
	case frmrYes:
		return true, nil
	case frmrNo:
		return false, nil
	}
	const op = "probe FRMR pools"
	devs, err := c.Devices()
	if err != nil {
		return false, err
	}
	if len(devs) == 0 {
		return true, nil
	}
	_, err = c.frmrDump(op, devs[0].Index, false)
	switch {
	case err == nil:
		return true, nil
	case !isEINVAL(err):
		return false, err
	}
	if _, derr := c.Device(devs[0].Index); derr != nil {
		if errors.Is(derr, os.ErrNotExist) {
			return true, nil // the device went away meanwhile: no answer
		}
		return false, derr
	}
	c.frmr = frmrNo
	return false, nil
}
