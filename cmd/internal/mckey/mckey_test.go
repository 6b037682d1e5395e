package mckey

import (
	"fmt"
	"io"
	"testing"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/rdma"
)

// TestParse: mckey's options as getopt and mckey.c's main read them
// (messages as rdma-core's v44 mckey prints them).
func TestParse(t *testing.T) {
	usage := fmt.Sprintf(usageFormat, "mckey")
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"-x"}, 1, usage, "mckey: invalid option -- 'x'\n"},
		{[]string{"-m"}, 1, usage, "mckey: option requires an argument -- 'm'\n"},
		{[]string{"-M", "ff12::1"}, 1, "unmapped multicast address requires binding to source address\n", ""},
		{[]string{"-m", "239.1.1.1", "-s", "-b", "10.0.0.1", "-c", "2", "-C", "0x10", "-S", "64", "-p", "0x2", "-o", "-l"}, 0, "", ""},
		{[]string{"-M", "ff12::1", "-b", "10.0.0.1"}, 0, "", ""},
	} {
		c, ok := cmtest.Parsed(t, tc.args, tc.code, tc.stdout, tc.stderr, func(stdout, stderr io.Writer) (*config, error) {
			return parse("mckey", stdout, stderr, tc.args)
		})
		if !ok {
			continue
		}
		switch tc.args[0] {
		case "-m":
			// atoi stops at the x of 0x10; -p takes base 0.
			ok = c.dst == "239.1.1.1" && !c.unmapped && c.sender && c.src == "10.0.0.1" && c.Connections == 2 &&
				c.Count == 0 && c.Size == 64 && c.ps == rdma.PortSpaceIPoIB && c.sendOnly && c.noLoopback
		case "-M":
			ok = c.dst == "ff12::1" && c.unmapped && !c.sender && c.Connections == 1 && c.Count == 10 && c.Size == 100 &&
				c.ps == rdma.PortSpaceUDP && !c.sendOnly && !c.noLoopback
		}
		if !ok {
			t.Errorf("%q: %+v", tc.args, c)
		}
	}
}
