package cmatose

import (
	"fmt"
	"io"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/rdma"
)

// TestParse: cmatose's options (outputs checked against rdma-core's v44
// ucmatose).
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"-x"}, 1, fmt.Sprintf(usageFormat, "ucmatose"), "ucmatose: invalid option -- 'x'\n"},
		{[]string{"-s"}, 1, fmt.Sprintf(usageFormat, "ucmatose"), "ucmatose: option requires an argument -- 's'\n"},
		{[]string{"-f", "bogus", "-P", "udp", "-s", "h", "-c", "4", "-C", "0x10", "-S", "64", "-t", "0x20", "-a", "14", "-p", "99", "-m"}, 0, "",
			"Warning: unknown address format\nWarning: unknown port space format\n"},
		{[]string{"-fIPv6", "-Pib", "-bA"}, 0, "", ""},
	} {
		c, ok := cmtest.Parsed(t, tc.args, tc.code, tc.stdout, tc.stderr, func(stdout, stderr io.Writer) (*config, error) {
			return parse("ucmatose", stdout, stderr, tc.args)
		})
		if !ok {
			continue
		}
		switch tc.args[0] {
		case "-f":
			// atoi stops at the x of 0x10; -t and -a take base 0.
			if c.Dst != "h" || c.Connections != 4 || c.Count != 0 || c.Size != 64 || !c.SetTOS || c.TOS != 0x20 ||
				!c.setTimeout || c.ackTimeout != 14 || c.Hints.Port != "99" || !c.migrate || c.Hints.Numeric || c.ps != rdma.PortSpaceTCP {
				t.Errorf("%q: %+v", tc.args, c)
			}
		default:
			if !c.Hints.Numeric || c.Hints.IB || c.ps != rdma.PortSpaceIB || c.Src != "A" || c.Connections != 1 || c.Count != 10 || c.Size != 100 || c.Hints.Port != "7471" {
				t.Errorf("%q: %+v", tc.args, c)
			}
		}
	}
}
