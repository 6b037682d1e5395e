package asyncwatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/device"
	"github.com/rdmastack/rdmastack/internal/uevent"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

// Main is the whole program: it parses args, writes the usage text or the
// event lines to stdout, and returns what cmnode.Exit ends main with: nil
// after -h, an error whose text is the line rdma-core's program prints on
// stderr before exiting 1, or a bare *cmnode.ExitError where it prints
// nothing. It returns only on an error, or when ctx is done (main's never
// is: the program runs until its device goes, a read fails or a signal
// kills it).
//
// Like rdma-core's, the program dies of SIGINT and SIGTERM: it catches
// neither, and Go's default disposition for them re-raises the signal with
// its default action. The kernel closes the verbs context with the
// process, as it does rdma-core's.
func Main(ctx context.Context, stdout io.Writer, args []string) error {
	c, err := Parse(args)
	if err != nil {
		// rdma-core's getopt complains on stderr first; the two go to
		// different streams.
		Usage(stdout, Prog)
		return err
	}
	if c.Help {
		Usage(stdout, Prog)
		return nil
	}
	return Run(ctx, stdout, c)
}

// failure is an error whose text is the whole line rdma-core's program
// prints on stderr.
type failure struct{ msg string }

func (f *failure) Error() string { return f.msg }

func fail(format string, args ...any) error { return &failure{fmt.Sprintf(format, args...)} }

// Run opens c.Dev (the first device without c.ByName), prints the async event
// fd's line, then a line per asynchronous event until ctx is done, the
// device is removed or a read fails.
func Run(ctx context.Context, stdout io.Writer, c *Config) error {
	snap, err := listDevices()
	if err != nil {
		return listError(err)
	}
	devs := snap.Verbs()
	i := 0
	for i < len(devs) && c.ByName && devs[i].Name != c.Dev {
		i++
	}
	if i == len(devs) {
		return fail("IB device %s not found", c.Dev)
	}
	dev := devs[i]
	vc, err := dev.Open()
	if err != nil {
		return fail("Couldn't get context for %s", dev.Name)
	}
	defer vc.Close()
	io.WriteString(stdout, dev.Name+": async event FD "+strconv.Itoa(asyncFD())+"\n")

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go watchRemoval(ctx, cancel, dev.Device)
	for {
		ev, err := vc.GetEvent(ctx)
		if err != nil {
			switch cause := context.Cause(ctx); {
			case errors.Is(cause, errRemoved):
				// The deferred Close lets the kernel's removal go on.
				return fmt.Errorf("%s: %s: %w", Prog, dev.Name, uverbs.ErrDeviceRemoved)
			case cause != nil:
				return cause
			}
			// rdma-core's program returns 1 without a word when
			// ibv_get_async_event fails (as it does after a
			// disassociating driver's DEVICE_FATAL).
			return &cmnode.ExitError{Code: 1}
		}
		// One write per line: stdout is line-buffered in rdma-core's.
		io.WriteString(stdout, Line(ev))
	}
}

// listError is the line for a device list that cannot be had. libibverbs
// fails with ENOSYS where the kernel has no uverbs at all (rdma-core's
// program then prints "Failed to get IB devices list: Function not
// implemented"); our list needs RDMA netlink, whose absence means the same.
func listError(err error) error {
	if errors.Is(err, nldev.ErrNoRDMA) {
		return fail("Failed to get IB devices list: Function not implemented")
	}
	return fail("%s", cmnode.Perror("Failed to get IB devices list", err))
}

// Name is rdma-core's name for an event type: "IBV_EVENT_" and the type's
// name for the device and port events, "unexpected" for the others (the
// program creates no QP, CQ, SRQ or WQ for them to be about) and for
// types it does not know.
func Name(t uverbs.EventType) string {
	switch t {
	case uverbs.EventDeviceFatal, uverbs.EventPortActive, uverbs.EventPortErr, uverbs.EventLIDChange,
		uverbs.EventPKeyChange, uverbs.EventSMChange, uverbs.EventClientReregister, uverbs.EventGIDChange:
		return "IBV_EVENT_" + t.String()
	}
	return "unexpected"
}

// Line is an event's line. Its port is the event's element read as
// libibverbs' element.port_num, an int: the low 32 bits.
func Line(ev uverbs.AsyncEvent) string {
	return fmt.Sprintf("  event_type %s (%d), port %d\n", Name(ev.Type), int32(ev.Type), int32(uint32(ev.Element)))
}

// asyncFD is the number of the async event fd of the context the program
// opened, which it prints as rdma-core's prints context->async_fd.
// Package uverbs does not export its fds (a number only good for printing
// would be a promise it does not mean to keep), so the number is found in
// /proc/self/fd: the process's only anonymous "[infinibandevent]" file,
// the kind uverbs creates for async event fds and completion channels
// (the program creates no channel). -1 when there is not exactly one.
func asyncFD() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	fd := -1
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == eventFile {
			if fd >= 0 {
				return -1
			}
			fd = n
		}
	}
	return fd
}

// eventFile is what /proc/PID/fd shows for a uverbs event fd.
const eventFile = "anon_inode:[infinibandevent]"

// listDevices is device.List; tests replace it.
var listDevices = device.List

// errRemoved ends the wait for events when the device is gone.
var errRemoved = errors.New("device removed")

// removalPoll is how often the program checks that its device is still
// there where the kernel's uevents do not reach its network namespace,
// and removalRecheck how long, where they do, it waits for one before
// it checks anyway.
var (
	removalPoll    = time.Second
	removalRecheck = 10 * time.Second
)

// watchRemoval cancels ctx with errRemoved once dev is no longer listed.
// A device whose driver disassociates (mlx5) ends the wait by itself: the
// kernel queues DEVICE_FATAL and then fails the read. One that cannot
// (rxe, siw) gives nothing: its removal, having unlisted the device and
// removed its uverbs char device, waits for the context's close. The
// watch parks in the netpoller until an RDMA uevent comes (the char
// device's removal is one), then looks at the list; it also looks every
// removalRecheck, in case the list lagged the event, and every
// removalPoll where no uevents are delivered.
func watchRemoval(ctx context.Context, cancel context.CancelCauseFunc, dev uverbs.Device) {
	ev := uevent.ListenIfDelivered()
	defer ev.Close()
	every := removalPoll
	if ev != nil {
		every = removalRecheck
	}
	for {
		// First look once the socket is open: a removal before it is
		// seen here, one after it comes as an event.
		if gone(dev) {
			cancel(errRemoved)
			return
		}
		wctx, stop := context.WithTimeout(ctx, every)
		var err error
		if ev != nil {
			err = ev.Wait(wctx)
		} else {
			<-wctx.Done()
		}
		stop()
		if ctx.Err() != nil {
			return
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			// The socket failed: poll from now on.
			ev.Close()
			ev, every = nil, removalPoll
		}
	}
}

// gone reports whether dev is no longer listed: no device has its index
// (a device registered again gets a new one) and uverbs char device. A
// renamed device is still there. A list that fails for another reason
// than the end of RDMA says nothing.
func gone(dev uverbs.Device) bool {
	snap, err := listDevices()
	if err != nil {
		return errors.Is(err, nldev.ErrNoRDMA)
	}
	for _, d := range snap.Devices {
		if d.Index == dev.Index && d.Uverbs == dev.Uverbs {
			return false
		}
	}
	return true
}
