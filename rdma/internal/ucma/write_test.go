package ucma

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/internal/kabi/kabitest"
)

// noFD is the fd of commands the fake kernel answers: one that bypassed
// kabi would fail with EBADF.
const noFD = -1

// kernelPtr is where rdma_user_cm.h puts the u64 each command's kernel
// side follows (ucma.c's u64_to_user_ptr of cmd.response, or of optval
// for SET_OPTION), taken from the C header rather than from the Go
// structs: the offset in the command struct, and whether the kernel reads
// there (in) rather than writes. Commands missing here have no pointer.
var kernelPtr = map[uint32]struct {
	off int
	in  bool
}{
	RDMA_USER_CM_CMD_CREATE_ID:    {off: 8},
	RDMA_USER_CM_CMD_DESTROY_ID:   {off: 0},
	RDMA_USER_CM_CMD_QUERY:        {off: 0},
	RDMA_USER_CM_CMD_INIT_QP_ATTR: {off: 0},
	RDMA_USER_CM_CMD_GET_EVENT:    {off: 0},
	RDMA_USER_CM_CMD_SET_OPTION:   {off: 0, in: true}, // optlen at 20
	RDMA_USER_CM_CMD_JOIN_MCAST:   {off: 0},
	RDMA_USER_CM_CMD_LEAVE_MCAST:  {off: 0},
	RDMA_USER_CM_CMD_MIGRATE_ID:   {off: 0},
}

// command is one command as package rdma builds it: send makes the call
// on fd and returns the response buffer it got back (nil for none).
type command struct {
	name string
	cmd  uint32
	req  []byte // the request, for the framing checks
	in   []byte // what the kernel must read behind the pointer
	send func(fd int) ([]byte, error)
}

// out builds a command with a response, sent with Write.
func out(name string, cmd uint32, req []byte, respOff int, resp []byte) command {
	return command{name: name, cmd: cmd, req: req, send: func(fd int) ([]byte, error) {
		r := bytes.Clone(resp)
		return r, Write(fd, cmd, req, respOff, r)
	}}
}

// plain builds a command without a pointer.
func plain(name string, cmd uint32, req []byte) command {
	return command{name: name, cmd: cmd, req: req, send: func(fd int) ([]byte, error) {
		return nil, Write(fd, cmd, req, 0, nil)
	}}
}

// commands is every command package rdma sends, with its request filled
// in with recognizable values and its response buffer as rdma sizes it.
func commands() []command {
	ss := func(s string) (SockaddrStorage, uint16) {
		var a SockaddrStorage
		n := PutSockaddr(&a, netip.MustParseAddrPort(s))
		return a, uint16(n)
	}
	create := CreateID{UID: 0x1111, PS: 0x0106 /* RDMA_PS_TCP */, QPType: 2 /* IB_QPT_RC */}
	destroy := DestroyID{ID: 0x2222}
	bind := Bind{ID: 0x3333}
	bind.Addr, bind.AddrSize = ss("10.0.2.15:7471")
	resolve := ResolveAddr{ID: 0x4444, TimeoutMs: 2000}
	resolve.DstAddr, resolve.DstSize = ss("[fe80::1%3]:7471")
	route := ResolveRoute{ID: 0x5555, TimeoutMs: 2000}
	qaddr := Query{ID: 0x6666, Option: RDMA_USER_CM_QUERY_ADDR}
	qpath := Query{ID: 0x6666, Option: RDMA_USER_CM_QUERY_PATH}
	qgid := Query{ID: 0x6666, Option: RDMA_USER_CM_QUERY_GID}
	connect := Connect{ID: 0x7777, ConnParam: ConnParam{PrivateDataLen: 3, RNRRetryCount: 7, Valid: 1}}
	listen := Listen{ID: 0x8888, Backlog: 1024}
	accept := Accept{UID: 0x9999, ID: 0x9998}
	reject := Reject{ID: 0xaaaa, PrivateDataLen: 2, PrivateData: [MaxPrivateData]byte{1, 2}}
	disconnect := Disconnect{ID: 0xbbbb}
	initQP := InitQPAttr{ID: 0xcccc, QPState: 2}
	notify := Notify{ID: 0xdddd, Event: IB_EVENT_COMM_EST}
	join := JoinMcast{UID: 0xeeee, ID: 0xeeed, JoinFlags: RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER}
	join.Addr, join.AddrSize = ss("239.1.2.3:0")
	leave := DestroyID{ID: 0xffff}
	migrate := MigrateID{ID: 0x1212, FD: 9}
	addrResp := QueryAddrResp{IBDevIndex: NoDevIndex}
	pathResp := make([]byte, kabi.Sizeof[QueryPathResp]()+(QueryPathMax+1)*kabi.Sizeof[PathRecData]())
	tos := []byte{0x20}
	reuse := binary.NativeEndian.AppendUint32(nil, 1)
	option := func(name uint32, val []byte) command {
		req := SetOption{ID: 0x1313, Level: RDMA_OPTION_ID, OptName: name, OptLen: uint32(len(val))}
		b := kabi.Bytes(&req)
		return command{name: fmt.Sprintf("SET_OPTION %d", name), cmd: RDMA_USER_CM_CMD_SET_OPTION, req: b, in: val,
			send: func(fd int) ([]byte, error) { return nil, WriteIn(fd, RDMA_USER_CM_CMD_SET_OPTION, b, 0, val) }}
	}
	return []command{
		out("CREATE_ID", RDMA_USER_CM_CMD_CREATE_ID, kabi.Bytes(&create), 8, make([]byte, kabi.Sizeof[CreateIDResp]())),
		out("DESTROY_ID", RDMA_USER_CM_CMD_DESTROY_ID, kabi.Bytes(&destroy), 0, make([]byte, kabi.Sizeof[DestroyIDResp]())),
		plain("BIND", RDMA_USER_CM_CMD_BIND, kabi.Bytes(&bind)),
		plain("RESOLVE_ADDR", RDMA_USER_CM_CMD_RESOLVE_ADDR, kabi.Bytes(&resolve)),
		plain("RESOLVE_ROUTE", RDMA_USER_CM_CMD_RESOLVE_ROUTE, kabi.Bytes(&route)),
		out("QUERY ADDR", RDMA_USER_CM_CMD_QUERY, kabi.Bytes(&qaddr), 0, kabi.Bytes(&addrResp)),
		out("QUERY PATH", RDMA_USER_CM_CMD_QUERY, kabi.Bytes(&qpath), 0, pathResp),
		out("QUERY GID", RDMA_USER_CM_CMD_QUERY, kabi.Bytes(&qgid), 0, kabi.Bytes(&addrResp)),
		plain("CONNECT", RDMA_USER_CM_CMD_CONNECT, kabi.Bytes(&connect)),
		plain("LISTEN", RDMA_USER_CM_CMD_LISTEN, kabi.Bytes(&listen)),
		plain("ACCEPT", RDMA_USER_CM_CMD_ACCEPT, kabi.Bytes(&accept)),
		plain("REJECT", RDMA_USER_CM_CMD_REJECT, kabi.Bytes(&reject)),
		plain("DISCONNECT", RDMA_USER_CM_CMD_DISCONNECT, kabi.Bytes(&disconnect)),
		out("INIT_QP_ATTR", RDMA_USER_CM_CMD_INIT_QP_ATTR, kabi.Bytes(&initQP), 0, make([]byte, kabi.Sizeof[QPAttr]())),
		plain("NOTIFY", RDMA_USER_CM_CMD_NOTIFY, kabi.Bytes(&notify)),
		out("JOIN_MCAST", RDMA_USER_CM_CMD_JOIN_MCAST, kabi.Bytes(&join), 0, make([]byte, kabi.Sizeof[CreateIDResp]())),
		out("LEAVE_MCAST", RDMA_USER_CM_CMD_LEAVE_MCAST, kabi.Bytes(&leave), 0, make([]byte, kabi.Sizeof[DestroyIDResp]())),
		out("MIGRATE_ID", RDMA_USER_CM_CMD_MIGRATE_ID, kabi.Bytes(&migrate), 0, make([]byte, kabi.Sizeof[MigrateResp]())),
		option(RDMA_OPTION_ID_TOS, tos),
		option(RDMA_OPTION_ID_REUSEADDR, reuse),
		{name: "GET_EVENT", cmd: RDMA_USER_CM_CMD_GET_EVENT, req: make([]byte, 8), send: func(fd int) ([]byte, error) {
			b := NewEventBuf()
			if e := b.Fetch(uintptr(fd)); e != 0 {
				return nil, e
			}
			return kabi.Bytes(&b.Resp), nil
		}},
	}
}

// respond is what the fake kernel writes as the response of a command:
// bytes derived from the command and the request, so that a response
// landing in another call's buffer is noticed.
func respond(cmd uint32, req []byte, n int) []byte {
	b := make([]byte, n)
	seed := byte(cmd) ^ req[len(req)-1] ^ byte(len(req))
	for i := range b {
		b[i] = seed + byte(i)*3 + 1
	}
	return b
}

// ucmaKernel is the kernel's side of the rdma_cm write() ABI as ucma.c
// runs it: the header's lengths, then the pointer field where the C
// header puts it, followed through its address.
func ucmaKernel(t *testing.T, read func(cmd uint32, b []byte)) *kabitest.Kernel {
	return kabitest.New(t, func(c *kabitest.Call) error {
		h := kabi.Decode[CmdHdr](c.Frame)
		req := c.Frame[hdrLen:]
		if len(c.Frame) < hdrLen || int(h.In) != len(req) {
			t.Errorf("command %d: in %d for a %d-byte frame", h.Cmd, h.In, len(c.Frame))
			return unix.EINVAL
		}
		p, ok := kernelPtr[h.Cmd]
		if !ok {
			if h.Out != 0 {
				t.Errorf("command %d without a response announces %d bytes of it", h.Cmd, h.Out)
			}
			return nil
		}
		addr := binary.NativeEndian.Uint64(req[p.off:])
		if p.in {
			n := binary.NativeEndian.Uint32(req[20:]) // rdma_ucm_set_option.optlen
			b, err := c.CopyIn(addr, int(n))
			if err == nil && read != nil {
				read(h.Cmd, b)
			}
			return err
		}
		return c.CopyOut(addr, respond(h.Cmd, req, int(h.Out)))
	})
}

// TestCommandPointers runs every command rdma sends against the fake
// kernel: each address the kernel follows must lie in memory kabi pinned
// for that call, the response written there must come back to the
// caller, and nothing may stay pinned.
func TestCommandPointers(t *testing.T) {
	var read []byte
	k := ucmaKernel(t, func(_ uint32, b []byte) { read = b })
	cmds := commands()
	for _, c := range cmds {
		read = nil
		resp, err := c.send(noFD)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		p, ok := kernelPtr[c.cmd]
		switch {
		case !ok:
			if resp != nil {
				t.Errorf("%s: a response without a pointer", c.name)
			}
		case p.in:
			if !bytes.Equal(read, c.in) {
				t.Errorf("%s: the kernel read %x, want %x", c.name, read, c.in)
			}
		default:
			if want := respond(c.cmd, c.req, len(resp)); !bytes.Equal(resp, want) {
				t.Errorf("%s: response\n %x\nwant\n %x", c.name, resp, want)
			}
		}
		if n := kabi.Pinned(); n != 0 {
			t.Errorf("%s: %d ranges left pinned", c.name, n)
		}
	}
	if k.Calls() != len(cmds) {
		t.Fatalf("the kernel saw %d commands of %d: a command bypasses kabi", k.Calls(), len(cmds))
	}
}

// TestCommandsAcrossMovingStacks sends every command, over and over, from
// goroutines whose stacks stand at a different depth each time (so that
// the calls on the way to write(2) grow and move them) while the GC keeps
// shrinking them: each response must still arrive whole.
func TestCommandsAcrossMovingStacks(t *testing.T) {
	ucmaKernel(t, nil)
	kabitest.CollectGarbage(t)
	cmds := commands()
	const workers, rounds = 4, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds * len(cmds) {
				c := cmds[(i+w)%len(cmds)]
				var resp []byte
				var err error
				kabitest.AtDepth((i*5+w*11)%48, func() { resp, err = c.send(noFD) })
				if err == nil && resp != nil && !bytes.Equal(resp, respond(c.cmd, c.req, len(resp))) {
					err = errors.New("response lost")
				}
				if err != nil {
					errs <- fmt.Errorf("%s: %w", c.name, err)
					return
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

// TestCommandFraming makes the real write(2) of every command into a pipe
// and checks the bytes: the header (lengths in bytes), then the request
// as given, but for the pointer field, which holds an 8-aligned address.
func TestCommandFraming(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	for _, c := range commands() {
		resp, err := c.send(p[1])
		if err != nil {
			// GET_EVENT into a pipe "succeeds" with a zero response, the
			// others with theirs unchanged.
			t.Errorf("%s: %v", c.name, err)
		}
		got := make([]byte, 1024)
		n, err := unix.Read(p[0], got)
		if err != nil {
			t.Fatalf("%s: read %v", c.name, err)
		}
		got = got[:n]
		h := kabi.Decode[CmdHdr](got)
		outLen := uint16(0)
		ptr, hasPtr := kernelPtr[c.cmd]
		if hasPtr && !ptr.in {
			outLen = uint16(len(resp))
		}
		if h.Cmd != c.cmd || int(h.In) != len(c.req) || h.Out != outLen || n != hdrLen+len(c.req) {
			t.Errorf("%s: header %+v of %d bytes, want cmd %d in %d out %d", c.name, h, n, c.cmd, len(c.req), outLen)
			continue
		}
		want := bytes.Clone(c.req)
		if hasPtr {
			addr := binary.NativeEndian.Uint64(got[hdrLen+ptr.off:])
			if addr == 0 || addr%8 != 0 {
				t.Errorf("%s: pointer field %#x", c.name, addr)
			}
			copy(want[ptr.off:], got[hdrLen+ptr.off:hdrLen+ptr.off+8])
		}
		if !bytes.Equal(got[hdrLen:], want) {
			t.Errorf("%s: request\n %x\nwant\n %x", c.name, got[hdrLen:], want)
		}
	}
	if n := kabi.Pinned(); n != 0 {
		t.Fatalf("%d ranges left pinned", n)
	}
}

// TestCreateIDEncoding pins one frame byte for byte, pointer aside.
func TestCreateIDEncoding(t *testing.T) {
	var frame []byte
	kabitest.New(t, func(c *kabitest.Call) error { frame = c.Frame; return nil })
	req := CreateID{UID: 0x0102030405060708, PS: 0x0106 /* RDMA_PS_TCP */, QPType: 2 /* IB_QPT_RC */}
	var resp CreateIDResp
	if err := Write(noFD, RDMA_USER_CM_CMD_CREATE_ID, kabi.Bytes(&req), 8, kabi.Bytes(&resp)); err != nil {
		t.Fatal(err)
	}
	// cmd 0, in 24, out 4; uid; response (checked apart); ps 0x106, qp_type 2.
	want := "00000000" + "1800" + "0400" + "0807060504030201" + "????????????????" + "0601" + "02" + "0000000000"
	got := fmt.Sprintf("%x", frame)
	if len(got) != len(want) {
		t.Fatalf("frame %s, want %s", got, want)
	}
	for i := range want {
		if want[i] != '?' && want[i] != got[i] {
			t.Fatalf("frame differs at byte %d:\n got %s\nwant %s", i/2, got, want)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	k := ucmaKernel(t, nil)
	req := DestroyID{ID: 1}
	var resp DestroyIDResp
	for _, off := range []int{-1, 9, 16} {
		if err := Write(noFD, RDMA_USER_CM_CMD_DESTROY_ID, kabi.Bytes(&req), off, kabi.Bytes(&resp)); !errors.Is(err, unix.EINVAL) {
			t.Errorf("response field at %d: %v, want EINVAL", off, err)
		}
	}
	if err := WriteIn(noFD, RDMA_USER_CM_CMD_SET_OPTION, make([]byte, 24), 0, make([]byte, 0x10000)); !errors.Is(err, unix.E2BIG) {
		t.Errorf("a 64 KiB optval: %v, want E2BIG", err)
	}
	if k.Calls() != 0 {
		t.Fatalf("%d bad commands reached the kernel", k.Calls())
	}
}

// TestShortWrite: a kernel that takes part of a frame is an error
// (io.ErrShortWrite), and EIO from Fetch.
func TestShortWrite(t *testing.T) {
	defer kabi.SetHook(func(fd int, frame []byte, pins *kabi.Pins) (int, error) { return len(frame) - 1, nil })()
	req := Disconnect{ID: 1}
	if err := Write(noFD, RDMA_USER_CM_CMD_DISCONNECT, kabi.Bytes(&req), 0, nil); !errors.Is(err, io.ErrShortWrite) {
		t.Errorf("short write: %v", err)
	}
	if e := NewEventBuf().Fetch(^uintptr(0)); e != unix.EIO {
		t.Errorf("short GET_EVENT: %v, want EIO", e)
	}
}

// TestFetchAllocs: fetching an event allocates nothing.
func TestFetchAllocs(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := NewEventBuf()
	if e := b.Fetch(f.Fd()); e != 0 {
		t.Fatal(e)
	}
	if n := testing.AllocsPerRun(100, func() { b.Fetch(f.Fd()) }); n != 0 {
		t.Fatalf("%v allocations per Fetch", n)
	}
}
