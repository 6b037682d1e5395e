package udaddy

import (
	"fmt"
	"io"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/rdma"
)

// TestParse: udaddy's options as getopt and udaddy.c's main read them
// (messages as rdma-core's v44 udaddy prints them).
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"-x"}, 1, fmt.Sprintf(usageFormat, "udaddy"), "udaddy: invalid option -- 'x'\n"},
		{[]string{"-s"}, 1, fmt.Sprintf(usageFormat, "udaddy"), "udaddy: option requires an argument -- 's'\n"},
		// -m is cmatose's, not udaddy's.
		{[]string{"-m"}, 1, fmt.Sprintf(usageFormat, "udaddy"), "udaddy: invalid option -- 'm'\n"},
		{[]string{"-f", "bogus", "-P", "tcp", "-s", "h", "-b", "b", "-c", "3", "-C", "0x10", "-S", "64", "-t", "0x20"}, 0, "",
			"Warning: unknown address format\nWarning: unknown port space format\n"},
		{[]string{"-fIPv6", "-PIPoIB"}, 0, "", ""},
		{[]string{"-p", "0x0002", "-f", "gid"}, 0, "", ""},
	} {
		c, ok := cmtest.Parsed(t, tc.args, tc.code, tc.stdout, tc.stderr, func(stdout, stderr io.Writer) (*config, error) {
			return parse("udaddy", stdout, stderr, tc.args)
		})
		if !ok {
			continue
		}
		switch tc.args[0] {
		case "-f":
			// atoi stops at the x of 0x10; -t takes base 0.
			ok = c.Dst == "h" && c.Src == "b" && c.Connections == 3 && c.Count == 0 && c.Size == 64 && c.SetTOS &&
				c.TOS == 0x20 && !c.Hints.Numeric && c.ps == rdma.PortSpaceUDP
		case "-fIPv6":
			ok = c.Hints.Numeric && !c.Hints.IB && c.ps == rdma.PortSpaceIPoIB && c.Connections == 1 && c.Count == 10 &&
				c.Size == 100 && !c.SetTOS
		case "-p":
			ok = c.ps == rdma.PortSpaceIPoIB && c.Hints.IB && c.Hints.Numeric
		}
		if !ok || c.Hints.Port != "7174" {
			t.Errorf("%q: %+v", tc.args, c)
		}
	}
}
