package rsocket

import (
	"io"
	"strconv"
	"testing"
)

// BenchmarkConnThroughput: one Conn writes b.N messages of a size to
// another, which reads them (bytes/s is the stream's throughput).
func BenchmarkConnThroughput(b *testing.B) {
	for _, size := range []int{64, 4 << 10, 64 << 10} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			cli, srv := benchPair(b)
			done := make(chan error, 1)
			go func() {
				_, err := io.CopyN(io.Discard, srv, int64(size)*int64(b.N))
				done <- err
			}()
			msg := make([]byte, size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := cli.Write(msg); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}

// benchPair is a connected pair, closed when b ends.
func benchPair(b *testing.B) (cli, srv *Conn) {
	l, _ := rsListen(b)
	cli, srv, err := rsPairErr(l, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cli.Close(); srv.Close() })
	return cli, srv
}
