package rsocket

import (
	"bytes"
	"io"
	"testing"
)

// BenchmarkConnCopy: io.Copy of 8 MiB into a Conn from an *os.File and
// from a reader, with the Conn's ReadFrom (the source reads straight into
// the send buffer) and without (io.Copy's 32 KiB buffer, then Write's
// copy), in the order ABBA so that drift shows. The reader is a
// *bytes.Reader with its WriteTo hidden: io.Copy would otherwise call
// that, which gives the Conn one Write of everything. The other end
// drains with Reads of 256 KiB.
func BenchmarkConnCopy(b *testing.B) {
	const size = 8 << 20
	data := pattern(0, size)
	f := tempFile(b, data)
	sources := map[string]func() io.Reader{
		"file":   func() io.Reader { f.Seek(0, io.SeekStart); return f },
		"reader": func() io.Reader { return struct{ io.Reader }{bytes.NewReader(data)} },
	}
	for _, src := range []string{"file", "reader"} {
		for _, readFrom := range []bool{true, false, false, true} {
			name := src + "/readfrom"
			if !readFrom {
				name = src + "/copy"
			}
			b.Run(name, func(b *testing.B) {
				cli, srv := benchPair(b)
				done := make(chan error, 1)
				go func() {
					buf := make([]byte, 256<<10)
					for left := int64(size) * int64(b.N); left > 0; {
						n, err := srv.Read(buf[:min(int64(len(buf)), left)])
						if err != nil {
							done <- err
							return
						}
						left -= int64(n)
					}
					done <- nil
				}()
				var w io.Writer = cli
				if !readFrom {
					w = struct{ io.Writer }{cli}
				}
				b.SetBytes(size)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if n, err := io.Copy(w, sources[src]()); err != nil || n != size {
						b.Fatal(n, err)
					}
				}
				if err := <-done; err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
