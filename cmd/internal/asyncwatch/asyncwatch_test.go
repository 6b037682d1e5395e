package asyncwatch

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
	"github.com/rdmastack/rdmastack/device"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

// flagCase is one command line and what rdma-core 44's ibv_asyncwatch,
// run as "ibv_asyncwatch" on a host without RDMA, did with it
// (testdata/rdma-core-44-flags.json, recorded with Debian's binary).
type flagCase struct {
	Args   []string `json:"args"`
	Stdout string   `json:"stdout"`
	Stderr string   `json:"stderr"`
	Status int      `json:"status"`
}

//go:embed testdata/rdma-core-44-flags.json
var recordedFlags []byte

// TestFlagsRecorded: usage and getopt's complaints byte for byte, and the
// exit status, as rdma-core's program gave them. The command lines it
// took (it then failed to list devices on the recording host) must parse
// without error or help.
func TestFlagsRecorded(t *testing.T) {
	var cases []flagCase
	if err := json.Unmarshal(recordedFlags, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 20 {
		t.Fatalf("only %d recorded cases", len(cases))
	}
	for _, tc := range cases {
		name := fmt.Sprintf("%q", tc.Args)
		if strings.HasPrefix(tc.Stderr, "Failed to get IB devices list") {
			c, err := Parse(tc.Args)
			if err != nil || c.Help {
				t.Errorf("%s: %+v, %v; want a run", name, c, err)
			}
			continue
		}
		var out bytes.Buffer
		err := Main(context.Background(), &out, tc.Args)
		if out.String() != tc.Stdout {
			t.Errorf("%s: stdout\n%q\nwant\n%q", name, out.String(), tc.Stdout)
		}
		switch {
		case tc.Status == 0:
			if err != nil {
				t.Errorf("%s: %v, want exit 0", name, err)
			}
		default:
			var ce *cflags.Error
			if tc.Status != 1 || !errors.As(err, &ce) || err.Error()+"\n" != tc.Stderr {
				t.Errorf("%s: %v, want exit %d with %q", name, err, tc.Status, tc.Stderr)
			}
		}
	}
}

// TestParse: -d takes the device by name, an empty name included; the
// last -d wins; operands are ignored.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want Config
	}{
		{nil, Config{}},
		{[]string{"-d", "rxe1"}, Config{Dev: "rxe1", ByName: true}},
		{[]string{"--ib-dev="}, Config{ByName: true}},
		{[]string{"--ib=mlx5_0", "x", "-drxe2"}, Config{Dev: "rxe2", ByName: true}},
		{[]string{"extra", "words"}, Config{}},
		{[]string{"-d", strings.Repeat("n", 5000)}, Config{Dev: strings.Repeat("n", 5000), ByName: true}},
	} {
		c, err := Parse(tc.args)
		if err != nil || *c != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.args, c, err, tc.want)
		}
	}
}

// TestLine: the event line for every type the kernel defines and some it
// does not, as asyncwatch.c's event_name_str and printf give them.
func TestLine(t *testing.T) {
	named := map[uverbs.EventType]string{
		8: "IBV_EVENT_DEVICE_FATAL", 9: "IBV_EVENT_PORT_ACTIVE", 10: "IBV_EVENT_PORT_ERR",
		11: "IBV_EVENT_LID_CHANGE", 12: "IBV_EVENT_PKEY_CHANGE", 13: "IBV_EVENT_SM_CHANGE",
		17: "IBV_EVENT_CLIENT_REREGISTER", 18: "IBV_EVENT_GID_CHANGE",
	}
	for typ := uverbs.EventType(0); typ <= 25; typ++ {
		want, ok := named[typ]
		if !ok {
			want = "unexpected" // 20, DEVICE_SPEED_CHANGE, is named only after rdma-core 44
		}
		if got := Name(typ); got != want {
			t.Errorf("Name(%d) = %q, want %q", typ, got, want)
		}
	}
	for _, tc := range []struct {
		ev   uverbs.AsyncEvent
		want string
	}{
		{uverbs.AsyncEvent{Type: uverbs.EventPortErr, Element: 1, Port: 1}, "  event_type IBV_EVENT_PORT_ERR (10), port 1\n"},
		{uverbs.AsyncEvent{Type: uverbs.EventPortActive, Element: 2, Port: 2}, "  event_type IBV_EVENT_PORT_ACTIVE (9), port 2\n"},
		{uverbs.AsyncEvent{Type: uverbs.EventGIDChange, Element: 1, Port: 1}, "  event_type IBV_EVENT_GID_CHANGE (18), port 1\n"},
		{uverbs.AsyncEvent{Type: uverbs.EventDeviceFatal}, "  event_type IBV_EVENT_DEVICE_FATAL (8), port 0\n"},
		{uverbs.AsyncEvent{Type: uverbs.EventLIDChange, Element: 1}, "  event_type IBV_EVENT_LID_CHANGE (11), port 1\n"},
		{uverbs.AsyncEvent{Type: uverbs.EventQPFatal, Element: 0x1_0000_0007}, "  event_type unexpected (1), port 7\n"},
		{uverbs.AsyncEvent{Type: uverbs.EventCQErr, Element: 0xffff_ffff}, "  event_type unexpected (0), port -1\n"},
		{uverbs.AsyncEvent{Type: 20, Element: 1}, "  event_type unexpected (20), port 1\n"},
		{uverbs.AsyncEvent{Type: 0x8000_0000}, "  event_type unexpected (-2147483648), port 0\n"},
	} {
		if got := Line(tc.ev); got != tc.want {
			t.Errorf("Line(%+v) = %q, want %q", tc.ev, got, tc.want)
		}
	}
}

// TestListError: a kernel without RDMA gets libibverbs' ENOSYS text; any
// other failure perror's words for its errno.
func TestListError(t *testing.T) {
	err := listError(fmt.Errorf("device: list: %w", fmt.Errorf("%w (protocol not supported)", nldev.ErrNoRDMA)))
	if want := "Failed to get IB devices list: Function not implemented"; err.Error() != want {
		t.Errorf("no RDMA: %q, want %q", err, want)
	}
	err = listError(fmt.Errorf("device: list: %w", os.NewSyscallError("socket", unix.EMFILE)))
	if want := "Failed to get IB devices list: Too many open files"; err.Error() != want {
		t.Errorf("EMFILE: %q, want %q", err, want)
	}
}

// TestAsyncFDNone: with no uverbs event file open, the number is -1.
func TestAsyncFDNone(t *testing.T) {
	if fd := asyncFD(); fd != -1 {
		t.Errorf("asyncFD() = %d with no event file open, want -1", fd)
	}
}

// TestGone: the device is there while some listed device has its index
// and uverbs char device, whatever its name; a list failure says gone
// only when RDMA itself is.
func TestGone(t *testing.T) {
	dev := uverbs.Device{Name: "rxe_a", Index: 7, Uverbs: "uverbs3"}
	listed := func(ds ...uverbs.Device) func() (*device.Snapshot, error) {
		return func() (*device.Snapshot, error) {
			s := &device.Snapshot{}
			for _, d := range ds {
				s.Devices = append(s.Devices, device.Device{Device: d})
			}
			return s, nil
		}
	}
	failing := func(err error) func() (*device.Snapshot, error) {
		return func() (*device.Snapshot, error) { return nil, err }
	}
	t.Cleanup(func() { listDevices = device.List })
	for _, tc := range []struct {
		name string
		list func() (*device.Snapshot, error)
		want bool
	}{
		{"listed", listed(uverbs.Device{Name: "rxe0", Index: 1, Uverbs: "uverbs0"}, dev), false},
		{"renamed", listed(uverbs.Device{Name: "other", Index: 7, Uverbs: "uverbs3"}), false},
		{"unlisted", listed(uverbs.Device{Name: "rxe0", Index: 1, Uverbs: "uverbs0"}), true},
		{"registered again", listed(uverbs.Device{Name: "rxe_a", Index: 8, Uverbs: "uverbs3"}), true},
		{"char device gone", listed(uverbs.Device{Name: "rxe_a", Index: 7}), true},
		{"no RDMA", failing(fmt.Errorf("device: list: %w", nldev.ErrNoRDMA)), true},
		{"list failed", failing(unix.EMFILE), false},
	} {
		listDevices = tc.list
		if got := gone(dev); got != tc.want {
			t.Errorf("%s: gone = %v, want %v", tc.name, got, tc.want)
		}
	}
}
