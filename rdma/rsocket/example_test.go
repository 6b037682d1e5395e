package rsocket_test

import (
	"fmt"
	"io"
	"log"

	"github.com/rdmastack/rdmastack/rdma/rsocket"
)

// An echo server and its client over one RDMA stream, as with net.Listen
// and net.Dial. 10.77.0.1 is the address of an interface with an RDMA
// device (rxe0 on the VM's veth).
func Example() {
	l, err := rsocket.Listen("rdma", "10.77.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, c) // echo until the client's CloseWrite
	}()
	c, err := rsocket.Dial("rdma", l.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "hello over RDMA"); err != nil {
		log.Fatal(err)
	}
	c.CloseWrite()
	b, err := io.ReadAll(c)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", b)
}
