// Package pingpong is the shared body of cmd/ibv_rc_pingpong,
// cmd/ibv_uc_pingpong, cmd/ibv_ud_pingpong and cmd/ibv_srq_pingpong,
// drop-ins for rdma-core 44's programs of those names built on package
// uverbs' provider-neutral data path: the same flags, the same
// out-of-band TCP exchange ("%04x:%06x:%06x:%s" with the wire GID) and
// the same output, so either side can be rdma-core's.
package pingpong

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
	"github.com/rdmastack/rdmastack/ib"
)

// Kind is the transport of a pingpong.
type Kind int

// Kinds.
const (
	RC  Kind = iota
	UD       // ibv_ud_pingpong
	UC       // ibv_uc_pingpong: rc_pingpong's loop over an unreliable connection
	SRQ      // ibv_srq_pingpong: NumQP RC QPs sharing one receive queue
)

// maxQP is srq_pingpong's MAX_QP: it always exchanges this many address
// records, and takes fewer QPs than that.
const maxQP = 256

// Config is one run's settings, as the flags give them.
type Config struct {
	Kind       Kind
	Server     string // empty: be the server
	NumQP      int    // SRQ: the QPs on the shared receive queue; 1 for the others
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

// rcLongs, udLongs, ucLongs and srqLongs are rdma-core 44's long-option
// tables, in its order (which decides abbreviations and the order glibc
// lists an ambiguous one's possibilities in); rcShorts and the others
// its optstrings.
var rcLongs = []cflags.LongOption{{Name: "port", Arg: req, Val: 'p'}, {Name: "ib-dev", Arg: req, Val: 'd'},
	{Name: "ib-port", Arg: req, Val: 'i'}, {Name: "size", Arg: req, Val: 's'}, {Name: "mtu", Arg: req, Val: 'm'},
	{Name: "rx-depth", Arg: req, Val: 'r'}, {Name: "iters", Arg: req, Val: 'n'}, {Name: "sl", Arg: req, Val: 'l'},
	{Name: "events", Arg: none, Val: 'e'}, {Name: "gid-idx", Arg: req, Val: 'g'}, {Name: "odp", Arg: none, Val: 'o'},
	{Name: "iodp", Arg: none, Val: 'O'}, {Name: "prefetch", Arg: none, Val: 'P'}, {Name: "ts", Arg: none, Val: 't'},
	{Name: "chk", Arg: none, Val: 'c'}, {Name: "dm", Arg: none, Val: 'j'}, {Name: "new_send", Arg: none, Val: 'N'}}

var udLongs = []cflags.LongOption{{Name: "port", Arg: req, Val: 'p'}, {Name: "ib-dev", Arg: req, Val: 'd'},
	{Name: "ib-port", Arg: req, Val: 'i'}, {Name: "size", Arg: req, Val: 's'}, {Name: "rx-depth", Arg: req, Val: 'r'},
	{Name: "iters", Arg: req, Val: 'n'}, {Name: "sl", Arg: req, Val: 'l'}, {Name: "events", Arg: none, Val: 'e'},
	{Name: "gid-idx", Arg: req, Val: 'g'}, {Name: "chk", Arg: none, Val: 'c'}}

var ucLongs = []cflags.LongOption{{Name: "port", Arg: req, Val: 'p'}, {Name: "ib-dev", Arg: req, Val: 'd'},
	{Name: "ib-port", Arg: req, Val: 'i'}, {Name: "size", Arg: req, Val: 's'}, {Name: "mtu", Arg: req, Val: 'm'},
	{Name: "rx-depth", Arg: req, Val: 'r'}, {Name: "iters", Arg: req, Val: 'n'}, {Name: "sl", Arg: req, Val: 'l'},
	{Name: "events", Arg: none, Val: 'e'}, {Name: "gid-idx", Arg: req, Val: 'g'}, {Name: "chk", Arg: none, Val: 'c'}}

var srqLongs = []cflags.LongOption{{Name: "port", Arg: req, Val: 'p'}, {Name: "ib-dev", Arg: req, Val: 'd'},
	{Name: "ib-port", Arg: req, Val: 'i'}, {Name: "size", Arg: req, Val: 's'}, {Name: "mtu", Arg: req, Val: 'm'},
	{Name: "num-qp", Arg: req, Val: 'q'}, {Name: "rx-depth", Arg: req, Val: 'r'}, {Name: "iters", Arg: req, Val: 'n'},
	{Name: "sl", Arg: req, Val: 'l'}, {Name: "events", Arg: none, Val: 'e'}, {Name: "odp", Arg: none, Val: 'o'},
	{Name: "gid-idx", Arg: req, Val: 'g'}, {Name: "chk", Arg: none, Val: 'c'}}

// options are each kind's optstring and long options.
var options = map[Kind]struct {
	shorts string
	longs  []cflags.LongOption
}{RC: {rcShorts, rcLongs}, UD: {udShorts, udLongs}, UC: {ucShorts, ucLongs}, SRQ: {srqShorts, srqLongs}}

const (
	rcShorts  = "p:d:i:s:m:r:n:l:eg:oOPtcjN"
	udShorts  = "p:d:i:s:r:n:l:eg:c"
	ucShorts  = "p:d:i:s:m:r:n:l:eg:c"
	srqShorts = "p:d:i:s:m:q:r:n:l:eog:c"

	req  = cflags.RequiredArgument
	none = cflags.NoArgument
)

// Parse reads the flags as rdma-core 44's program of that kind does. A
// bad option's error wraps errUsage with glibc's words for it, without
// the program name.
func Parse(kind Kind, args []string) (*Config, error) {
	c := &Config{Kind: kind, NumQP: 1, Port: 18515, IBPort: 1, Size: 4096, MTU: ib.MTU1024, RxDepth: 500, Iters: 1000, GIDIndex: -1}
	shorts, longs := options[kind].shorts, options[kind].longs
	switch kind {
	case UD:
		c.Size = 1024
	case SRQ:
		c.NumQP = 16
	}
	// Numbers convert as rdma-core's variables take them: strtoul into
	// an unsigned int, strtol into an int.
	g := cflags.New("", args, shorts, longs)
	for g.Next() {
		arg := g.Arg()
		switch g.Opt() {
		case 'p':
			p := uint32(cflags.ULong(arg))
			if p > 65535 {
				return nil, errUsage
			}
			c.Port = int(p)
		case 'd':
			c.Dev = arg
		case 'i':
			c.IBPort = int(int32(cflags.Long(arg)))
			if c.IBPort < 1 {
				return nil, errUsage
			}
		case 's':
			c.Size = int(uint32(cflags.ULong(arg)))
			if kind == SRQ && c.Size < 1 {
				return nil, errUsage
			}
		case 'q':
			c.NumQP = int(uint32(cflags.ULong(arg)))
		case 'm':
			mtu, ok := ib.MTUFromBytes(int(int32(cflags.Long(arg))))
			if !ok {
				// rdma-core's pp_mtu_to_enum gives -1, which its check
				// for 0 lets through; ours refuses it.
				return nil, errUsage
			}
			c.MTU = mtu
		case 'r':
			c.RxDepth = int(uint32(cflags.ULong(arg)))
		case 'n':
			c.Iters = int(uint32(cflags.ULong(arg)))
		case 'l':
			c.SL = int(int32(cflags.Long(arg)))
		case 'e':
			c.Events = true
		case 'g':
			c.GIDIndex = int(int32(cflags.Long(arg)))
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
		default:
			return nil, fmt.Errorf("%v: %w", g.Err(), errUsage)
		}
	}
	switch rest := g.Args(); len(rest) {
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
	switch kind {
	case RC:
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
	case UC:
		b.WriteString("  -s, --size=<size>      size of message to exchange (default 4096)\n")
		b.WriteString("  -m, --mtu=<size>       path MTU (default 1024)\n")
		b.WriteString("  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n")
		b.WriteString("  -n, --iters=<iters>    number of exchanges (default 1000)\n")
		b.WriteString("  -l, --sl=<sl>          service level value\n")
		b.WriteString("  -e, --events           sleep on CQ events (default poll)\n")
		b.WriteString("  -g, --gid-idx=<gid index> local port gid index\n")
		b.WriteString("  -c, --chk              validate received buffer\n")
	case SRQ:
		b.WriteString("  -s, --size=<size>      size of message to exchange (default 4096)\n")
		b.WriteString("  -m, --mtu=<size>       path MTU (default 1024)\n")
		b.WriteString("  -q, --num-qp=<num>     number of QPs to use (default 16)\n")
		b.WriteString("  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n")
		b.WriteString("  -n, --iters=<iters>    number of exchanges per QP(default 1000)\n")
		b.WriteString("  -l, --sl=<sl>          service level value\n")
		b.WriteString("  -e, --events           sleep on CQ events (default poll)\n")
		b.WriteString("  -g, --gid-idx=<gid index> local port gid index\n")
		b.WriteString("  -o, --odp\t\t    use on demand paging\n")
		b.WriteString("  -c, --chk              validate received buffer\n")
	default:
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
