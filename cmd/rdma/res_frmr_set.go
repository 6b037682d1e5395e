package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/rdmastack/rdmastack/nldev"
)

const frmrSetUsage = `Usage: rdma set frmr_pools dev DEV aging AGING_PERIOD
Usage: rdma set frmr_pools dev DEV pinned POOL_KEY PINNED_VALUE
`

// resSet is "rdma resource set ...".
func resSet(stdout io.Writer, o options, args []string) error {
	return dispatch(stdout, o, args, "resource set command", printUsage(resUsage),
		command{"frmr_pools", frmrSet})
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
