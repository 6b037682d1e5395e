package rstream

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/cmd/internal/rsock"
)

// refusal is what package rdma's Dial returns for a REJ: no errno, but
// a cause that matches ECONNREFUSED (rdma.RejectReason's shape).
type refusal struct{}

func (refusal) Error() string         { return "rejected: consumer defined" }
func (refusal) Is(target error) bool  { return target == unix.ECONNREFUSED }
func (refusal) String() string        { return "consumer defined" }
func failing(err error) rsock.Network { return rsock.Network{Name: "rdma", Dial: dialErr(err)} }

func dialErr(err error) func(context.Context, string, rsock.Options) (net.Conn, error) {
	return func(context.Context, string, rsock.Options) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "rdma", Err: fmt.Errorf("rdma: REJECTED: %w", err)}
	}
}

// TestConnectFails: how a client whose connect fails ends, over
// rsockets (a Network whose Dial fails) and the kernel's TCP (a
// loopback port nobody listens on). A refusal or a timeout reaches a
// non-blocking connect after it returned EINPROGRESS, so rpoll reports
// it, with that errno and poll's revents as the status; a blocking
// connect, and any other error, is rconnect's.
func TestConnectFails(t *testing.T) {
	nobody := strconv.Itoa(int(cmtest.Port()))
	for _, tc := range []struct {
		err    error // rsockets' Dial error; nil for TCP
		args   []string
		stderr string
		code   int
	}{
		{refusal{}, nil, "rpoll: Operation now in progress\n", unix.POLLERR},
		{refusal{}, []string{"-T", "b"}, "rconnect: Connection refused\n", 255},
		{unix.ETIMEDOUT, nil, "rpoll: Operation now in progress\n", unix.POLLERR},
		{unix.ETIMEDOUT, []string{"-T", "b"}, "rconnect: Connection timed out\n", 255},
		{unix.ENETUNREACH, nil, "rconnect: Network is unreachable\n", 255},
		{unix.EADDRNOTAVAIL, nil, "rconnect: Cannot assign requested address\n", 255},
		{nil, []string{"-T", "s"}, "rpoll: Operation now in progress\n", unix.POLLERR | unix.POLLHUP},
		{nil, []string{"-T", "s", "-T", "b"}, "rconnect: Connection refused\n", 255},
	} {
		nw := failing(tc.err)
		if tc.err == nil {
			nw = rsock.RDMA // not used: -T s
		}
		side := cmtest.Side{Name: "ours", Main: func(stdout, stderr io.Writer, args []string) error {
			return run("rstream", stdout, stderr, args, nw, rsock.SizeToCount)
		}}
		args := append(append([]string{}, tc.args...), "-s", "127.0.0.1", "-p", nobody, "-C", "1")
		r := side.Start(args, 20*time.Second)()
		if r.Stdout != rsock.Header || r.Stderr != tc.stderr || r.Code != tc.code {
			t.Errorf("%v, %q: %v\nwant exit %d, stderr %q", tc.err, args, r, tc.code, tc.stderr)
		}
	}
}
