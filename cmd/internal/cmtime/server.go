package cmtime

import (
	"context"
	"sync"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/rdma"
)

// server is cmtime's server: the event loop hands each connection
// request to the accepting goroutine and each disconnection to the
// disconnecting one (cmtime.c's req and disc threads), so that the loop
// never waits on either.
type server struct {
	t    *test
	mu   sync.Mutex
	res  map[*rdma.ID]*qpRes // the QPs of accepted ids
	reqs chan *rdma.ID
	disc chan *rdma.ID
}

// runServer listens and serves until ctx is done (C's server never
// returns but by failing). A failure before the loop prints what
// cmtime.c prints, then "destroying id" (where cmtime.c then crashes on
// its missing nodes) and ends with cmtime.c's return value.
func (t *test) runServer(ctx context.Context) (int, error) {
	s := &server{t: t, res: make(map[*rdma.ID]*qpRes), reqs: make(chan *rdma.ID, 1024), disc: make(chan *rdma.ID, 1024)}
	defer t.ch.Close()
	fail := func(r int) (int, error) {
		t.printf("destroying id\n")
		return r, nil
	}
	listen, err := t.ch.CreateID(rdma.PortSpaceTCP, ib.QPTypeRC)
	if err != nil {
		t.perror("listen request failed", err)
		return fail(-1)
	}
	defer listen.Close()
	src, _, le := t.cfg.hints.GetRDMAAddr(t.cfg.src, t.cfg.dst, true)
	if le != nil {
		t.printf("getrdmaaddr error: %s\n", le.Text)
		return fail(le.Code)
	}
	if err := listen.Bind(src); err != nil {
		t.perror("bind address failed", err)
		return fail(-1)
	}
	if err := listen.Listen(0); err != nil {
		t.perror("failure trying to listen", err)
		return fail(-1)
	}

	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go s.worker(wctx, &wg, s.reqs, s.accept)
	go s.worker(wctx, &wg, s.disc, s.disconnect)
	defer func() {
		// The channel's Close destroys the ids left, and their QPs;
		// then their CQs and the PDs go.
		stop()
		wg.Wait()
		listen.Close()
		t.ch.Close()
		s.mu.Lock()
		for _, r := range s.res {
			r.close()
		}
		s.mu.Unlock()
		for _, pd := range t.pds {
			pd.Close()
		}
	}()
	for {
		ev, err := t.ch.GetEvent(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			t.perror("failure in rdma_get_cm_event in process_server_events", err)
			return fail(int(cmnode.Errno(err)))
		}
		switch {
		case ev.Type == rdma.EventConnectRequest:
			s.queue(ctx, s.reqs, ev.ID)
		case ev.Type == rdma.EventDisconnected && ev.ID != listen:
			s.queue(ctx, s.disc, ev.ID)
		}
		ev.Ack()
	}
}

func (s *server) queue(ctx context.Context, q chan<- *rdma.ID, id *rdma.ID) {
	select {
	case q <- id:
	case <-ctx.Done():
	}
}

func (s *server) worker(ctx context.Context, wg *sync.WaitGroup, q <-chan *rdma.ID, fn func(context.Context, *rdma.ID)) {
	defer wg.Done()
	for {
		select {
		case id := <-q:
			fn(ctx, id)
		case <-ctx.Done():
			return
		}
	}
}

// accept is __req_handler: the QP, then the accept; a failure rejects
// the request.
func (s *server) accept(ctx context.Context, id *rdma.ID) {
	t := s.t
	r, err := t.createQP(id)
	if err != nil {
		t.perror("failure creating qp", err)
	} else {
		s.mu.Lock()
		s.res[id] = r
		s.mu.Unlock()
		if err = id.Accept(ctx, nil); err != nil {
			t.perror("failure accepting", err)
			s.mu.Lock()
			delete(s.res, id)
			s.mu.Unlock()
			r.close()
		}
	}
	if err != nil {
		t.printf("failing connection request\n")
		id.Reject(nil)
		id.Close()
	}
}

// disconnect answers a peer's disconnection: rdma_disconnect,
// rdma_destroy_qp, rdma_destroy_id.
func (s *server) disconnect(_ context.Context, id *rdma.ID) {
	id.Disconnect()
	s.mu.Lock()
	r := s.res[id]
	delete(s.res, id)
	s.mu.Unlock()
	if r != nil {
		r.close()
	}
	id.Close()
}
