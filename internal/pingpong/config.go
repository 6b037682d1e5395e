// Package pingpong is the shared body of cmd/ibv_rc_pingpong and
// cmd/ibv_ud_pingpong, drop-ins for rdma-core 44's programs of those names
// built on the pure-Go rxe data path (package uverbs/rxe): the same flags,
// the same out-of-band TCP exchange ("%04x:%06x:%06x:%s" with the wire
// GID) and the same output, so either side can be rdma-core's.
package pingpong

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rdmastack/rdmastack/ib"
)

// Kind is the transport of a pingpong.
type Kind int

// Kinds.
const (
	RC Kind = iota
	UD
)

// Config is one run's settings, as the flags give them.
type Config struct {
	Kind       Kind
	Server     string // empty: be the server
	Port       int
	Dev        string
	IBPort     int
	Size       int
	MTU        ib.MTU
	RxDepth    int
	Iters      int
	SL         int
	Events     bool
	GIDIndex   int
	Validate   bool
	ODP        bool
	ImplicitOD bool
	Prefetch   bool
	Timestamps bool
	DM         bool
	NewSend    bool
}

// errUsage makes Run print the usage text and fail.
var errUsage = errors.New("usage")

// ExitError is a failure whose message rdma-core's program prints on
// stderr before exiting with status 1.
type ExitError struct{ Msg string }

func (e *ExitError) Error() string { return e.Msg }

func fail(format string, args ...any) error { return &ExitError{fmt.Sprintf(format, args...)} }

var rcOpts = []option{{'p', "port", true}, {'d', "ib-dev", true}, {'i', "ib-port", true}, {'s', "size", true},
	{'m', "mtu", true}, {'r', "rx-depth", true}, {'n', "iters", true}, {'l', "sl", true}, {'e', "events", false},
	{'g', "gid-idx", true}, {'o', "odp", false}, {'O', "iodp", false}, {'P', "prefetch", false}, {'t', "ts", false},
	{'c', "chk", false}, {'j', "dm", false}, {'N', "new_send", false}}

var udOpts = []option{{'p', "port", true}, {'d', "ib-dev", true}, {'i', "ib-port", true}, {'s', "size", true},
	{'r', "rx-depth", true}, {'n', "iters", true}, {'l', "sl", true}, {'e', "events", false},
	{'g', "gid-idx", true}, {'c', "chk", false}}

// Parse reads the flags as rdma-core 44's program of that kind does.
func Parse(kind Kind, args []string) (*Config, error) {
	c := &Config{Kind: kind, Port: 18515, IBPort: 1, Size: 4096, MTU: ib.MTU1024, RxDepth: 500, Iters: 1000, GIDIndex: -1}
	opts := rcOpts
	if kind == UD {
		opts, c.Size = udOpts, 1024
	}
	rest, err := getopt(args, opts, func(o byte, arg string) error {
		v := strtol(arg)
		switch o {
		case 'p':
			if uint64(v) > 65535 {
				return errUsage
			}
			c.Port = int(v)
		case 'd':
			c.Dev = arg
		case 'i':
			if int32(v) < 1 {
				return errUsage
			}
			c.IBPort = int(int32(v))
		case 's':
			c.Size = int(uint32(v))
		case 'm':
			switch v {
			case 256, 512, 1024, 2048, 4096:
				c.MTU, _ = ib.MTUFromBytes(int(v))
			default:
				// rdma-core's pp_mtu_to_enum gives -1, which its check
				// for 0 lets through; ours refuses it.
				return errUsage
			}
		case 'r':
			c.RxDepth = int(uint32(v))
		case 'n':
			c.Iters = int(uint32(v))
		case 'l':
			c.SL = int(int32(v))
		case 'e':
			c.Events = true
		case 'g':
			c.GIDIndex = int(int32(v))
		case 'o':
			c.ODP = true
		case 'O':
			c.ODP, c.ImplicitOD = true, true
		case 'P':
			c.Prefetch = true
		case 't':
			c.Timestamps = true
		case 'c':
			c.Validate = true
		case 'j':
			c.DM = true
		case 'N':
			c.NewSend = true
		}
		return nil
	})
	if err != nil {
		if err != errUsage {
			err = fmt.Errorf("%v: %w", err, errUsage)
		}
		return nil, err
	}
	switch len(rest) {
	case 0:
	case 1:
		c.Server = rest[0]
	default:
		return nil, errUsage
	}
	return c, nil
}

// usage writes rdma-core 44's usage text.
func usage(w io.Writer, prog string, kind Kind) {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage:\n  %s            start a server and wait for connection\n  %s <host>     connect to server at <host>\n\nOptions:\n", prog, prog)
	b.WriteString("  -p, --port=<port>      listen on/connect to port <port> (default 18515)\n")
	b.WriteString("  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)\n")
	b.WriteString("  -i, --ib-port=<port>   use port <port> of IB device (default 1)\n")
	if kind == RC {
		b.WriteString("  -s, --size=<size>      size of message to exchange (default 4096)\n")
		b.WriteString("  -m, --mtu=<size>       path MTU (default 1024)\n")
		b.WriteString("  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n")
		b.WriteString("  -n, --iters=<iters>    number of exchanges (default 1000)\n")
		b.WriteString("  -l, --sl=<sl>          service level value\n")
		b.WriteString("  -e, --events           sleep on CQ events (default poll)\n")
		b.WriteString("  -g, --gid-idx=<gid index> local port gid index\n")
		b.WriteString("  -o, --odp\t\t    use on demand paging\n")
		b.WriteString("  -O, --iodp\t\t    use implicit on demand paging\n")
		b.WriteString("  -P, --prefetch\t    prefetch an ODP MR\n")
		b.WriteString("  -t, --ts\t            get CQE with timestamp\n")
		b.WriteString("  -c, --chk\t            validate received buffer\n")
		b.WriteString("  -j, --dm\t            use device memory\n")
		b.WriteString("  -N, --new_send            use new post send WR API\n")
	} else {
		b.WriteString("  -s, --size=<size>      size of message to exchange (default 2048)\n")
		b.WriteString("  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n")
		b.WriteString("  -n, --iters=<iters>    number of exchanges (default 1000)\n")
		b.WriteString("  -l, --sl=<SL>          send messages with service level <SL> (default 0)\n")
		b.WriteString("  -e, --events           sleep on CQ events (default poll)\n")
		b.WriteString("  -g, --gid-idx=<gid index> local port gid index\n")
		b.WriteString("  -c, --chk              validate received buffer\n")
	}
	io.WriteString(w, b.String())
}
