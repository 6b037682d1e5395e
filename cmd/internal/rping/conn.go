package rping

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// conn is one connection (rping's control block): its id, QP and the
// four buffers. The CM goroutine posts states to it (sem_post) and
// cancels its context when the peer disconnects.
type conn struct {
	r      *runner
	id     *rdma.ID
	states chan int
	ctx    context.Context
	cancel context.CancelFunc
	gone   atomic.Bool // DISCONNECTED came

	node                         *cmnode.Node
	recvBuf, sendBuf, rdma, strt *membuf.Buffer
	recvMR, sendMR, rdmaMR, stMR *membuf.MR
	remote                       info
}

func (r *runner) newConn(id *rdma.ID) *conn {
	cn := &conn{r: r, id: id, states: make(chan int, 16)}
	cn.ctx, cn.cancel = context.WithCancel(context.Background())
	go func() {
		select {
		case <-r.fatal:
			cn.cancel()
		case <-cn.ctx.Done():
		}
	}()
	r.track(id, cn)
	return cn
}

func (cn *conn) post(state int) {
	if cn == nil {
		return
	}
	select {
	case cn.states <- state:
	default:
	}
}

func (cn *conn) disconnect() {
	if cn == nil {
		return
	}
	cn.gone.Store(true)
	cn.post(stateDisconnected)
	cn.cancel()
}

// wait is sem_wait: the next state the CM goroutine posts.
func (cn *conn) wait() int {
	select {
	case st := <-cn.states:
		return st
	case <-cn.r.fatal:
		return stateError
	}
}

// state is what the C program's state would be after a failed wait.
func (cn *conn) state() int {
	if cn.gone.Load() {
		return stateDisconnected
	}
	return stateError
}

// setup is rping_setup_qp and rping_setup_buffers, then the first
// receive.
func (cn *conn) setup(client bool) int {
	r := cn.r
	node, err := cmnode.NewNode(cn.id, cmnode.NodeConfig{CQE: 2 * 16, CompChannel: true, OwnQP: r.cfg.selfQP,
		Cap: uverbs.QPCap{MaxSendWR: 16, MaxRecvWR: 2, MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		what := "rdma_create_qp"
		if r.cfg.selfQP {
			what = "ibv_create_qp"
		}
		r.printf(r.stderr, "%s\n", cmnode.Perror(what, err))
		r.printf(r.stderr, "setup_qp failed: %d\n", -1)
		return -1
	}
	cn.node = node
	r.debugf("created pd %p\n", node.PD)
	r.debugf("created channel %p\n", node.Chan)
	r.debugf("created cq %p\n", node.SendCQ)
	r.debugf("created qp %p\n", node.QP)
	r.debugf("rping_setup_buffers called on cb %p\n", cn)
	remote := uverbs.AccessLocalWrite | uverbs.AccessRemoteRead | uverbs.AccessRemoteWrite
	for _, b := range []struct {
		buf    **membuf.Buffer
		mr     **membuf.MR
		size   int
		access uverbs.Access
		name   string
	}{
		{&cn.recvBuf, &cn.recvMR, infoSize, uverbs.AccessLocalWrite, "recv_buf"},
		{&cn.sendBuf, &cn.sendMR, infoSize, 0, "send_buf"},
		{&cn.rdma, &cn.rdmaMR, r.cfg.size, remote, "rdma_buf"},
		{&cn.strt, &cn.stMR, r.cfg.size, remote, "start_buf"},
	} {
		if b.name == "start_buf" && !client {
			continue
		}
		if *b.buf, *b.mr, err = node.Buffer(b.size, b.access); err != nil {
			r.printf(r.stderr, "%s reg_mr failed\n", b.name)
			r.printf(r.stderr, "rping_setup_buffers failed: %d\n", cmnode.Errno(err))
			return int(cmnode.Errno(err))
		}
	}
	r.debugf("allocated & registered buffers...\n")
	if err := cn.postRecv(); err != nil {
		r.printf(r.stderr, "ibv_post_recv failed: %d\n", cmnode.Errno(err))
		return int(cmnode.Errno(err))
	}
	return 0
}

func (cn *conn) postRecv() error {
	return cn.node.QP.PostRecv(&uverbs.RecvWR{SGE: []uverbs.SGE{{Addr: cn.recvBuf.Addr(0), Length: infoSize, LKey: cn.recvMR.LKey()}}})
}

// send posts the 16-byte send buffer.
func (cn *conn) send() error {
	return cn.node.QP.PostSend(&uverbs.SendWR{Opcode: uverbs.OpSend, Flags: uverbs.SendSignaled,
		SGE: []uverbs.SGE{{Addr: cn.sendBuf.Addr(0), Length: infoSize, LKey: cn.sendMR.LKey()}}})
}

// rdmaOp posts an RDMA READ or WRITE of n bytes between the rdma buffer
// and the peer's announced buffer.
func (cn *conn) rdmaOp(op uverbs.Opcode, n uint32) error {
	return cn.node.QP.PostSend(&uverbs.SendWR{Opcode: op, Flags: uverbs.SendSignaled, RemoteAddr: cn.remote.addr, RKey: cn.remote.rkey,
		SGE: []uverbs.SGE{{Addr: cn.rdma.Addr(0), Length: n, LKey: cn.rdmaMR.LKey()}}})
}

// await is the completion side of rping (its cq_thread) for one wait:
// completions are taken in order, sends are skipped, a receive is
// checked, decoded and its buffer re-posted. It reports whether the
// next completion of interest was want.
func (cn *conn) await(want uverbs.WCOpcode) bool {
	r := cn.r
	for {
		wc, err := cn.node.Wait(cn.ctx, cn.node.SendCQ)
		if err != nil {
			return false
		}
		if wc.Status == uverbs.WCWRFlushErr {
			// The QP is in the error state: the CM's event ends the wait
			// (rping's cq thread skips flushed completions). On iWARP the
			// flush comes first: the kernel errors the QP when the peer's
			// TCP connection closes, before the DISCONNECTED event.
			continue
		}
		if wc.Status != uverbs.WCSuccess {
			r.printf(r.stderr, "cq completion failed status %d\n", wc.Status)
			return false
		}
		switch wc.Opcode {
		case uverbs.WCSend:
			r.debugf("send completion\n")
			continue
		case uverbs.WCRDMAWrite:
			r.debugf("rdma write completion\n")
		case uverbs.WCRDMARead:
			r.debugf("rdma read completion\n")
		case uverbs.WCRecv:
			r.debugf("recv completion\n")
			if wc.ByteLen != infoSize {
				r.printf(r.stderr, "Received bogus data, size %d\n", wc.ByteLen)
				r.printf(r.stderr, "recv wc error: %d\n", -1)
				return false
			}
			if r.cfg.server == 1 {
				cn.remote = parseInfo(cn.recvBuf.Bytes())
				r.debugf("Received rkey %x addr %x len %d from peer\n", cn.remote.rkey, cn.remote.addr, cn.remote.size)
			}
			if err := cn.postRecv(); err != nil {
				r.printf(r.stderr, "post recv error: %d\n", cmnode.Errno(err))
				return false
			}
		default:
			r.debugf("unknown!!!!! completion\n")
			return false
		}
		return wc.Opcode == want
	}
}

func (cn *conn) close() {
	cn.cancel()
	cn.r.untrack(cn.id)
	if cn.node != nil {
		cn.node.Close()
	} else {
		cn.id.Close()
	}
}

// serve is the server's side of one connection: accept, the ping loop
// until the client disconnects, disconnect.
func (cn *conn) serve(persistent bool) int {
	r := cn.r
	defer cn.close()
	if ret := cn.setup(false); ret != 0 {
		return ret
	}
	r.debugf("accepting client connection request\n")
	var param *rdma.ConnParam
	if r.cfg.selfQP {
		if err := cn.selfModify(); err != nil {
			r.printf(r.stderr, "connect error %d\n", -1)
			return -1
		}
		param = cn.connParam()
	}
	if err := cn.id.Accept(context.Background(), param); err != nil {
		r.printf(r.stderr, "%s\n", cmnode.Perror("rdma_accept", err))
		r.printf(r.stderr, "connect error %d\n", -1)
		return -1
	}
	if st := cn.wait(); st == stateError {
		r.fail(fmt.Sprintf("wait for CONNECTED state %d", st))
		r.fail(fmt.Sprintf("connect error %d", -1))
		return -1
	}
	ret := cn.testServer()
	if ret != 0 && !persistent {
		r.fail(fmt.Sprintf("rping server failed: %d", ret))
	}
	cn.disconnectQP()
	return ret
}

// posted is a post's outcome as rping reports it: 0, or "post send
// error" and the errno.
func (cn *conn) posted(err error) int {
	if err == nil {
		return 0
	}
	cn.r.printf(cn.r.stderr, "post send error %d\n", cmnode.Errno(err))
	return int(cmnode.Errno(err))
}

// awaited is await with rping's message for a wait that ended
// otherwise: "wait for <state> state <the state it found>".
func (cn *conn) awaited(want uverbs.WCOpcode, state string) bool {
	if cn.await(want) {
		return true
	}
	cn.r.fail(fmt.Sprintf("wait for %s state %d", state, cn.state()))
	return false
}

// testServer is rping_test_server: per ping, read the client's
// buffer, send a go-ahead, write the text back into the client's second
// buffer, send another go-ahead; until the client disconnects.
func (cn *conn) testServer() int {
	r := cn.r
	ret := 0
	for ret == 0 {
		if !cn.awaited(uverbs.WCRecv, "RDMA_READ_ADV") {
			ret = -1
			break
		}
		r.debugf("server received sink adv\n")
		if ret = cn.posted(cn.rdmaOp(uverbs.OpRDMARead, cn.remote.size)); ret != 0 {
			break
		}
		r.debugf("server posted rdma read req \n")
		if !cn.awaited(uverbs.WCRDMARead, "RDMA_READ_COMPLETE") {
			ret = -1
			break
		}
		r.debugf("server received read complete\n")
		data := cstring(cn.rdma.Bytes())
		if r.cfg.verbose {
			r.printf(r.stdout, "server ping data: %s\n", data)
		}
		if ret = cn.posted(cn.send()); ret != 0 {
			break
		}
		r.debugf("server posted go ahead\n")
		if !cn.awaited(uverbs.WCRecv, "RDMA_WRITE_ADV") {
			ret = -1
			break
		}
		r.debugf("server received sink adv\n")
		n := uint32(min(len(data)+1, len(cn.rdma.Bytes())))
		r.debugf("rdma write from lkey %x laddr %x len %d\n", cn.rdmaMR.LKey(), cn.rdma.Addr(0), n)
		if ret = cn.posted(cn.rdmaOp(uverbs.OpRDMAWrite, n)); ret != 0 {
			break
		}
		if !cn.awaited(uverbs.WCRDMAWrite, "RDMA_WRITE_COMPLETE") {
			ret = -1
			break
		}
		r.debugf("server rdma write complete \n")
		ret = cn.posted(cn.send())
		r.debugf("server posted go ahead\n")
	}
	if cn.gone.Load() {
		return 0
	}
	return ret
}

// runClient connects, pings and disconnects.
func (cn *conn) runClient() int {
	r := cn.r
	defer cn.close()
	if ret := cn.setup(true); ret != 0 {
		return ret
	}
	if err := cn.id.Connect(context.Background(), cn.connParam()); err != nil {
		r.printf(r.stderr, "%s\n", cmnode.Perror("rdma_connect", err))
		r.printf(r.stderr, "connect error %d\n", -1)
		return -1
	}
	if st := cn.wait(); st != stateConnected {
		r.fail(fmt.Sprintf("wait for CONNECTED state %d", st))
		r.fail(fmt.Sprintf("connect error %d", -1))
		return -1
	}
	if r.cfg.selfQP {
		if err := cn.selfModify(); err != nil {
			r.printf(r.stderr, "%s\n", cmnode.Perror("rping_modify_qp", err))
			r.printf(r.stderr, "connect error %d\n", -1)
			return -1
		}
		if err := cn.id.Establish(); err != nil {
			r.printf(r.stderr, "%s\n", cmnode.Perror("rdma_establish", err))
			r.printf(r.stderr, "connect error %d\n", -1)
			return -1
		}
	}
	r.debugf("rdma_connect successful\n")
	ret := cn.testClient()
	if ret != 0 {
		r.fail(fmt.Sprintf("rping client failed: %d", ret))
	}
	cn.disconnectQP()
	// The server's answer, so that "client DISCONNECT EVENT..." is
	// printed as the C client prints it when its CM thread is quick.
	select {
	case <-cn.ctx.Done():
	case <-time.After(time.Second):
	}
	return ret
}

// testClient is rping_test_client: per ping, fill the start buffer,
// announce it, wait for the go-ahead, announce the rdma buffer, wait for
// the second go-ahead, compare (-V) and print (-v).
func (cn *conn) testClient() int {
	r := cn.r
	size := r.cfg.size
	start := byte('A')
	announce := func(b *membuf.Buffer, mr *membuf.MR) int {
		info{addr: b.Addr(0), rkey: mr.RKey(), size: uint32(size)}.put(cn.sendBuf.Bytes())
		r.debugf("RDMA addr %x rkey %x len %d\n", b.Addr(0), mr.RKey(), size)
		return cn.posted(cn.send())
	}
	ret := 0
	for ping := 0; r.cfg.count == 0 || ping < r.cfg.count; ping++ {
		sb := cn.strt.Bytes()[:size]
		start = fill(sb, ping, start)
		if ret = announce(cn.strt, cn.stMR); ret != 0 {
			break
		}
		if !cn.awaited(uverbs.WCRecv, "RDMA_WRITE_ADV") {
			ret = -1
			break
		}
		if ret = announce(cn.rdma, cn.rdmaMR); ret != 0 {
			break
		}
		if !cn.awaited(uverbs.WCRecv, "RDMA_WRITE_COMPLETE") {
			ret = -1
			break
		}
		rb := cn.rdma.Bytes()[:size]
		if r.cfg.validate && !bytes.Equal(sb, rb) {
			r.printf(r.stderr, "data mismatch!\n")
			ret = -1
			break
		}
		if r.cfg.verbose {
			r.printf(r.stdout, "ping data: %s\n", cstring(rb))
		}
	}
	if cn.gone.Load() {
		return 0
	}
	return ret
}

// connParam is rping_init_conn_param: one read each way, retries 7,
// and the QP's number when the QP is our own (-q).
func (cn *conn) connParam() *rdma.ConnParam {
	p := &rdma.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7}
	if cn.r.cfg.selfQP {
		p.QPNum = cn.node.QP.Num()
	}
	return p
}

// selfModify is rping_self_modify_qp: INIT, RTR and RTS with the
// connection manager's attributes.
func (cn *conn) selfModify() error {
	for _, st := range []ib.QPState{ib.QPStateInit, ib.QPStateRTR, ib.QPStateRTS} {
		if err := cn.node.Modify(st); err != nil {
			return err
		}
	}
	return nil
}

// disconnectQP is rping_disconnect: an own QP goes to ERR first (the id
// does that for its own).
func (cn *conn) disconnectQP() {
	if cn.r.cfg.selfQP {
		cn.node.QP.Modify(&uverbs.QPAttr{State: ib.QPStateErr}, uverbs.QPAttrState)
	}
	cn.id.Disconnect()
}
