package rsock

import "fmt"

// SizeStr is common.c's size_str: size in the largest unit (k, m, g:
// powers of 1024) it reaches, with one truncated decimal below 10 of
// it ("1.5k", "64k", "192"), cut to ssize-1 bytes as snprintf into a
// buffer of ssize cuts it.
func SizeStr(size int64, ssize int) string {
	base, mag := int64(1), ""
	switch {
	case size >= 1<<30:
		base, mag = 1<<30, "g"
	case size >= 1<<20:
		base, mag = 1<<20, "m"
	case size >= 1<<10:
		base, mag = 1<<10, "k"
	}
	var fraction int64
	if size/base < 10 {
		fraction = (size % base) * 10 / base
	}
	var s string
	if fraction != 0 {
		s = fmt.Sprintf("%d.%d%s", size/base, fraction, mag)
	} else {
		s = fmt.Sprintf("%d%s", size/base, mag)
	}
	return cut(s, ssize)
}

// CntStr is common.c's cnt_str: count in thousands (k), millions (m) or
// billions (b), truncated, cut as SizeStr cuts.
func CntStr(cnt int64, ssize int) string {
	var s string
	switch {
	case cnt >= 1_000_000_000:
		s = fmt.Sprintf("%db", cnt/1_000_000_000)
	case cnt >= 1_000_000:
		s = fmt.Sprintf("%dm", cnt/1_000_000)
	case cnt >= 1000:
		s = fmt.Sprintf("%dk", cnt/1000)
	default:
		s = fmt.Sprintf("%d", cnt)
	}
	return cut(s, ssize)
}

func cut(s string, ssize int) string {
	if ssize <= 0 {
		return ""
	}
	if len(s) > ssize-1 {
		return s[:ssize-1]
	}
	return s
}

// SizeToCount is common.c's size_to_count: how many transfers of size
// bytes a test makes.
func SizeToCount(size int) int {
	switch {
	case size >= 1<<20:
		return 100
	case size >= 1<<16:
		return 1000
	case size >= 1<<10:
		return 10000
	}
	return 100000
}

// Pattern is common.c's format_buf and verify_buf: the bytes a program
// sends, and those it checks it receives, count up from 0 (mod 256)
// across all its transfers, each direction on its own.
type Pattern struct {
	send, recv uint8
	total      int64 // bytes verified so far
}

// Fill writes the next len(b) bytes of the sent pattern into b.
func (p *Pattern) Fill(b []byte) {
	for i := range b {
		b[i] = p.send
		p.send++
	}
}

// VerifyError is the first received byte that is not the pattern's,
// counted from the program's first verified byte.
type VerifyError struct{ Byte int64 }

func (e *VerifyError) Error() string {
	return fmt.Sprintf("data verification failed byte %d", e.Byte)
}

// Verify checks that b holds the next len(b) bytes of the received
// pattern.
func (p *Pattern) Verify(b []byte) error {
	for _, c := range b {
		want := p.recv
		p.recv++
		if c != want {
			return &VerifyError{Byte: p.total}
		}
		p.total++
	}
	return nil
}
