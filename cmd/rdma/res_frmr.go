package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/rdmastack/rdmastack/nldev"
)

// frmrFilters are the filters of "rdma resource show frmr_pools"
// (iproute2 HEAD's rdma/res.h); all numeric, compared as 32-bit values
// as iproute2 does.
var frmrFilters = []filterDef{{"dev", false, false}, {"ats", true, false}, {"access_flags", true, false},
	{"vendor_key", true, false}, {"num_dma_blocks", true, false}, {"queue", true, false},
	{"in_use", true, false}, {"max_in_use", true, false}, {"pinned", true, false}}

// showFRMRPools prints one device's FRMR pools (iproute2's
// rdma/res-frmr-pools.c): "dev NAME key K [ats .. access_flags ..
// vendor_key .. num_dma_blocks .. kernel_vendor_key ..] queue in_use
// max_in_use pinned", the key's fields only with -d.
func showFRMRPools(rs *resSession, d nldev.Device, _ uint32) error {
	pools, err := rs.c.FRMRPools(d.Index, rs.opts()...)
	if err != nil {
		return err
	}
	return printFRMRPools(rs, pools)
}

// printFRMRPools prints the pools that pass the filters.
func printFRMRPools(rs *resSession, pools []nldev.FRMRPool) error {
	p, fs := rs.p, rs.fs
	for _, x := range pools {
		// iproute2 applies the key's filters only to pools with a key.
		if k := x.Key; k != nil {
			if fs.num("ats", b2u(k.ATS), true) ||
				fs.num("access_flags", k.AccessFlags, true) ||
				fs.num("vendor_key", uint32(k.VendorKey), true) ||
				fs.num("num_dma_blocks", uint32(k.NumDMABlocks), true) {
				continue
			}
		}
		if fs.num("queue", deref(x.QueueHandles), x.QueueHandles != nil) ||
			fs.num("in_use", uint32(deref(x.InUse)), x.InUse != nil) ||
			fs.num("max_in_use", uint32(deref(x.MaxInUse)), x.MaxInUse != nil) ||
			fs.num("pinned", deref(x.PinnedHandles), x.PinnedHandles != nil) {
			continue
		}
		printDev(p, x.DevIndex, x.DevName)
		if k := x.Key; k != nil {
			p.str("key", "key %s ", k.String())
			if rs.o.details {
				ats := b2u(k.ATS)
				resU32(p, "ats", &ats)
				resU32(p, "access_flags", &k.AccessFlags)
				resU32(p, "vendor_key", &k.VendorKey)
				resU32(p, "num_dma_blocks", &k.NumDMABlocks)
				resU32(p, "kernel_vendor_key", x.KernelVendorKey)
			}
		}
		resU32(p, "queue", x.QueueHandles)
		resU32(p, "in_use", x.InUse)
		resU32(p, "max_in_use", x.MaxInUse)
		resU32(p, "pinned", x.PinnedHandles)
		printDriver(rs, x.Driver)
		if err := p.end(); err != nil {
			return err
		}
	}
	return nil
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

const frmrSetUsage = `Usage: rdma set frmr_pools dev DEV aging AGING_PERIOD
Usage: rdma set frmr_pools dev DEV pinned POOL_KEY PINNED_VALUE
`

// resSet is "rdma resource set ...".
func resSet(stdout io.Writer, o options, args []string) error {
	if len(args) == 0 {
		_, err := io.WriteString(stdout, resUsage)
		return err
	}
	if matches(args[0], "frmr_pools") {
		return frmrSet(stdout, o, args[1:])
	}
	return fmt.Errorf("Unknown resource set command '%s'.", args[0])
}

// frmrSet is "rdma resource set frmr_pools dev DEV aging N | pinned KEY N".
// Like iproute2 it skips to the word after "dev" (or "link").
func frmrSet(stdout io.Writer, o options, args []string) error {
	for len(args) > 0 && !matches(args[0], "dev") && !matches(args[0], "link") {
		args = args[1:]
	}
	if len(args) == 0 {
		return fmt.Errorf("Please provide device name.")
	}
	if len(args) == 1 {
		return fmt.Errorf("No device name was supplied")
	}
	s, d, err := openSessionFor(stdout, o, args[1])
	if err != nil {
		return err
	}
	defer s.Close()
	args = args[2:]
	switch {
	case len(args) == 0, matches(args[0], "help"):
		_, err := io.WriteString(stdout, frmrSetUsage)
		return err
	case matches(args[0], "aging"):
		if len(args) < 2 {
			return fmt.Errorf("Please provide aging period value.")
		}
		n, err := strconv.ParseUint(args[1], 10, 32)
		if err != nil {
			return fmt.Errorf("Invalid aging period value: %s", args[1])
		}
		if n == 0 {
			return fmt.Errorf("Setting the aging period to zero is not supported.")
		}
		return s.c.SetFRMRAgingPeriod(d.Index, uint32(n))
	case matches(args[0], "pinned"):
		if len(args) < 2 {
			return fmt.Errorf("Please provide pool key and pinned value.")
		}
		key, err := nldev.ParseFRMRPoolKey(args[1])
		if err != nil {
			return frmrKeyError(args[1], err)
		}
		if len(args) < 3 {
			return fmt.Errorf("Please provide pinned value.")
		}
		n, err := strconv.ParseUint(args[2], 10, 32)
		if err != nil {
			return fmt.Errorf("Invalid pinned value: %s", args[2])
		}
		return s.c.SetFRMRPinned(d.Index, key, uint32(n))
	}
	return fmt.Errorf("Unknown resource set frmr_pools command '%s'.", args[0])
}

// frmrKeyError words a bad pool key as iproute2 does.
func frmrKeyError(key string, err error) error {
	var ke *nldev.FRMRPoolKeyError
	if !errors.As(err, &ke) {
		return err
	}
	switch {
	case errors.Is(err, nldev.ErrFRMRKeyFields):
		return fmt.Errorf("Invalid pool key: %s, expected 4 fields", key)
	case errors.Is(err, nldev.ErrFRMRKeyExtra):
		return fmt.Errorf("Unsupported pool attributes passed in pool key")
	case errors.Is(err, nldev.ErrFRMRKeyRange) && ke.Field >= 2:
		return fmt.Errorf("Pool key field at index %d value out of range", ke.Field)
	}
	return fmt.Errorf("Invalid pool key: %s", key)
}
