package rdmaep

import (
	"context"
	"io"

	"github.com/rdmastack/rdmastack/rdma"
)

// ClientMain runs rdma_client with args (the words after the program
// name).
func ClientMain(stdout, stderr io.Writer, args []string) error {
	return mainOf("rdma_client", "127.0.0.1", stdout, stderr, args, (*side).dial)
}

// dial is rdma_client's run: connect, send 16 bytes, receive 16,
// disconnect.
func (s *side) dial() int {
	addr, ret := s.lookup(false)
	if ret != 0 {
		return ret
	}
	opts := epOptions
	id, err := rdma.CreateEP(context.Background(), addr, &opts)
	if err != nil {
		s.perror("rdma_create_ep", err)
		return -1
	}
	s.id = id
	defer s.close()
	if ret := s.prepare(); ret != 0 {
		return ret
	}
	if err := s.id.Connect(context.Background(), nil); err != nil {
		s.perror("rdma_connect", err)
		return -1
	}
	defer s.id.Disconnect()
	if ret := s.postSend(); ret != 0 {
		return ret
	}
	if ret := s.waitComp(false); ret != 0 {
		return ret
	}
	return s.waitComp(true)
}
