package rsocket_test

import (
	"context"
	"fmt"
	"io"
	"log"

	"github.com/rdmastack/rdmastack/rdma/rsocket"
)

// The server maps a 4 KiB window at offset 0; the client writes into it
// with WriteAt and then tells the server on the stream, which RC
// delivers after the writes.
func ExampleConn_Map() {
	lc := rsocket.ListenConfig{}
	l, err := lc.Listen(context.Background(), "rdma", "10.77.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	go func() {
		d := rsocket.Dialer{IOMapSize: 1} // the server may map one window here
		c, err := d.DialContext(context.Background(), "rdma", l.Addr().String())
		if err != nil {
			return
		}
		defer c.Close()
		var ready [1]byte
		io.ReadFull(c, ready[:]) // the window's announcement came before
		c.WriteAt([]byte("written by the peer"), 100)
		c.Write([]byte{1})
	}()
	c, err := l.AcceptConn(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	m, err := c.Map(4096, 0)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	c.Write([]byte{0})
	var done [1]byte
	if _, err := io.ReadFull(c, done[:]); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", m.Bytes()[100:119])
}
