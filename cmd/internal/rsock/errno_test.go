package rsock

import (
	"errors"
	"net"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// refused matches ECONNREFUSED without holding it, as package rdma's
// rejections do.
type refused struct{}

func (refused) Error() string        { return "rejected" }
func (refused) Is(target error) bool { return target == unix.ECONNREFUSED }

func TestPerror(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", unix.ECONNREFUSED)}, "rconnect: Connection refused"},
		{&net.OpError{Op: "dial", Net: "rdma", Err: refused{}}, "rconnect: Connection refused"},
		{errors.New("odd"), "rconnect: odd"},
	} {
		if got := Perror("rconnect", c.err); got != c.want {
			t.Errorf("Perror(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
