package abi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/internal/kabi/kabitest"
)

// noFD is the fd of commands the fake kernel answers: one that bypassed
// kabi would fail with EBADF.
const noFD = -1

// respondBytes is what the fake kernel writes as a response of n bytes to
// command cmd.
func respondBytes(cmd uint32, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(cmd) + byte(i)*5 + 1
	}
	return b
}

// verbsKernel is ib_uverbs_write's side of the write() ABI, as
// drivers/infiniband/core/uverbs_main.c reads it: a plain command's
// response address is the u64 that starts its request and out_words
// counts 4-byte words of core and driver response together; an extended
// command's is ib_uverbs_ex_cmd_hdr.response, with out_words and
// provider_out_words counting 8-byte words. The response is written
// through that address.
func verbsKernel(t *testing.T) *kabitest.Kernel {
	return kabitest.New(t, func(c *kabitest.Call) error {
		h := kabi.Decode[CmdHdr](c.Frame)
		if h.Command&IB_USER_VERBS_CMD_FLAG_EXTENDED != 0 {
			ex := kabi.Decode[ExCmdHdr](c.Frame[8:])
			n := 8 * (int(h.OutWords) + int(ex.ProviderOutWords))
			if ex.Response == 0 {
				if n != 0 {
					return unix.EFAULT // as the kernel: output words but no response
				}
				return nil
			}
			return c.CopyOut(ex.Response, respondBytes(h.Command, n))
		}
		if int(h.InWords)*4 != len(c.Frame) {
			t.Errorf("command %d: in_words %d for %d bytes", h.Command, h.InWords, len(c.Frame))
			return unix.EINVAL
		}
		if h.OutWords == 0 {
			return nil
		}
		return c.CopyOut(binary.NativeEndian.Uint64(c.Frame[8:]), respondBytes(h.Command, 4*int(h.OutWords)))
	})
}

// writePaths is one command of each shape Write frames: plain without a
// response, plain with one, plain with driver data both ways, extended
// with and without a response.
func writePaths() []*WriteCmd {
	return []*WriteCmd{
		{Command: IB_USER_VERBS_CMD_DEALLOC_PD, Req: []byte{3, 0, 0, 0}},
		{Command: IB_USER_VERBS_CMD_ALLOC_PD, Req: make([]byte, 8), Resp: make([]byte, 4)},
		{Command: IB_USER_VERBS_CMD_CREATE_CQ, Req: make([]byte, 32), DriverIn: make([]byte, 8),
			Resp: make([]byte, 8), DriverOut: make([]byte, 16)},
		{Command: IB_USER_VERBS_CMD_QUERY_DEVICE, Req: make([]byte, 8), Resp: make([]byte, 176)},
		{Command: IB_USER_VERBS_EX_CMD_QUERY_DEVICE | IB_USER_VERBS_CMD_FLAG_EXTENDED,
			Req: make([]byte, 8), Resp: make([]byte, 304), DriverOut: make([]byte, 8)},
		{Command: IB_USER_VERBS_CMD_MODIFY_QP | IB_USER_VERBS_CMD_FLAG_EXTENDED, Req: make([]byte, 120)}, // EX_MODIFY_QP
	}
}

// checkResponse reports whether w got the fake kernel's response, split
// between Resp and DriverOut.
func checkResponse(w *WriteCmd) error {
	want := respondBytes(w.Command, len(w.Resp)+len(w.DriverOut))
	got := append(bytes.Clone(w.Resp), w.DriverOut...)
	if !bytes.Equal(got, want) {
		return fmt.Errorf("command %#x: response\n %x\nwant\n %x", w.Command, got, want)
	}
	return nil
}

// TestWritePointers runs every framing of Write against the fake kernel:
// the response address must lie in memory kabi pinned for the call, the
// response must come back into Resp and DriverOut, and nothing may stay
// pinned.
func TestWritePointers(t *testing.T) {
	k := verbsKernel(t)
	cmds := writePaths()
	for _, w := range cmds {
		if err := Write(noFD, w); err != nil {
			t.Errorf("command %#x: %v", w.Command, err)
			continue
		}
		if err := checkResponse(w); err != nil {
			t.Error(err)
		}
		if n := kabi.Pinned(); n != 0 {
			t.Errorf("command %#x: %d ranges left pinned", w.Command, n)
		}
	}
	if k.Calls() != len(cmds) {
		t.Fatalf("the kernel saw %d commands of %d: a command bypasses kabi", k.Calls(), len(cmds))
	}
}

// TestWriteAcrossMovingStacks sends every framing over and over from
// goroutines whose stacks stand at a different depth each time while the
// GC keeps shrinking them; each response must arrive whole.
func TestWriteAcrossMovingStacks(t *testing.T) {
	verbsKernel(t)
	kabitest.CollectGarbage(t)
	const workers, rounds = 4, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				for j, w := range writePaths() {
					var err error
					kabitest.AtDepth((i*7+j*3+g)%48, func() { err = Write(noFD, w) })
					if err == nil {
						err = checkResponse(w)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestIoctlUnpins: Do pins the call's buffers and attributes only for the
// call, whether it succeeds or fails.
func TestIoctlUnpins(t *testing.T) {
	c := NewIoctl(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT)
	c.Const(0, 1)
	c.Out(1, make([]byte, 48))
	if err := c.Do(-1, 14); !errors.Is(err, unix.EBADF) {
		t.Fatalf("ioctl on fd -1: %v, want EBADF", err)
	}
	if n := kabi.Pinned(); n != 0 {
		t.Fatalf("%d ranges left pinned", n)
	}
}
