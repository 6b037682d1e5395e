package rdmaep

import (
	"context"
	"io"

	"github.com/rdmastack/rdmastack/rdma"
)

// ServerMain runs rdma_server with args (the words after the program
// name).
func ServerMain(stdout, stderr io.Writer, args []string) error {
	return mainOf("rdma_server", "0.0.0.0", stdout, stderr, args, (*side).serve)
}

// serve is rdma_server's run: listen, take one request, receive 16
// bytes, answer 16, disconnect.
func (s *side) serve() int {
	addr, ret := s.lookup(true)
	if ret != 0 {
		return ret
	}
	opts := epOptions
	listen, err := rdma.ListenEP(addr, 0, &opts)
	if err != nil {
		s.perror("rdma_create_ep", err)
		return -1
	}
	defer listen.Close()
	if s.id, err = listen.GetRequest(context.Background()); err != nil {
		s.perror("rdma_get_request", err)
		return -1
	}
	defer s.close()
	if ret := s.prepare(); ret != 0 {
		return ret
	}
	if err := s.id.Accept(context.Background(), nil); err != nil {
		s.perror("rdma_accept", err)
		return -1
	}
	defer s.id.Disconnect()
	if ret := s.waitComp(true); ret != 0 {
		return ret
	}
	if ret := s.postSend(); ret != 0 {
		return ret
	}
	return s.waitComp(false)
}
