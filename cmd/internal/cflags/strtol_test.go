package cflags

import (
	"math"
	"syscall"
	"testing"
)

// TestStrtol: each row was checked against glibc 2.36's strtol and
// strtoul (LP64) with the same input and base.
func TestStrtol(t *testing.T) {
	for _, tc := range []struct {
		base int
		s    string
		v    int64
		n    int
		err  error
		u    uint64
		uerr error
	}{
		{0, "12", 12, 2, nil, 12, nil},
		{0, "0x1f", 31, 4, nil, 31, nil},
		{0, "0X1F", 31, 4, nil, 31, nil},
		{0, "010", 8, 3, nil, 8, nil},
		{0, "-3", -3, 2, nil, math.MaxUint64 - 2, nil},
		{0, "7z", 7, 1, nil, 7, nil},
		{0, "", 0, 0, nil, 0, nil},
		{0, "x", 0, 0, nil, 0, nil},
		{0, "  ", 0, 0, nil, 0, nil},
		{0, " +12", 12, 4, nil, 12, nil},
		{0, "\t\n\v\f\r 5", 5, 7, nil, 5, nil},
		{0, "- 1", 0, 0, nil, 0, nil},
		{0, "+-1", 0, 0, nil, 0, nil},
		{0, "0", 0, 1, nil, 0, nil},
		{0, "-0", 0, 2, nil, 0, nil},
		{0, "0x", 0, 1, nil, 0, nil}, // the "0" is the number
		{0, "-0x", 0, 2, nil, 0, nil},
		{0, "0xg", 0, 1, nil, 0, nil},
		{0, "08", 0, 1, nil, 0, nil},
		{0, "0b1", 0, 1, nil, 0, nil}, // no C23 "0b"
		{0, "9223372036854775807", math.MaxInt64, 19, nil, math.MaxInt64, nil},
		{0, "9223372036854775808", math.MaxInt64, 19, syscall.ERANGE, 1 << 63, nil},
		{0, "-9223372036854775808", math.MinInt64, 20, nil, 1 << 63, nil},
		{0, "-9223372036854775809", math.MinInt64, 20, syscall.ERANGE, math.MaxInt64, nil},
		{0, "18446744073709551615", math.MaxInt64, 20, syscall.ERANGE, math.MaxUint64, nil},
		{0, "18446744073709551616", math.MaxInt64, 20, syscall.ERANGE, math.MaxUint64, syscall.ERANGE},
		{0, "-18446744073709551615", math.MinInt64, 21, syscall.ERANGE, 1, nil},
		{0, "-18446744073709551616", math.MinInt64, 21, syscall.ERANGE, math.MaxUint64, syscall.ERANGE},
		{0, "0x8000000000000001", math.MaxInt64, 18, syscall.ERANGE, 1<<63 + 1, nil},
		{0, "-1", -1, 2, nil, math.MaxUint64, nil},
		{16, "0xff", 255, 4, nil, 255, nil},
		{16, "-fF", -255, 3, nil, math.MaxUint64 - 254, nil},
		{16, "0x", 0, 1, nil, 0, nil},
		{16, "g", 0, 0, nil, 0, nil},
		{36, "Zz", 1295, 2, nil, 1295, nil},
		{2, "102", 2, 2, nil, 2, nil},
		{10, "0x10", 0, 1, nil, 0, nil},
		{10, "00012", 12, 5, nil, 12, nil},
		{8, "0778", 63, 3, nil, 63, nil},
		{1, "5", 0, 0, syscall.EINVAL, 0, syscall.EINVAL},
		{37, "5", 0, 0, syscall.EINVAL, 0, syscall.EINVAL},
		{-1, "5", 0, 0, syscall.EINVAL, 0, syscall.EINVAL},
	} {
		v, n, err := Strtol(tc.s, tc.base)
		if v != tc.v || n != tc.n || err != tc.err {
			t.Errorf("Strtol(%q, %d) = %d, %d, %v; want %d, %d, %v", tc.s, tc.base, v, n, err, tc.v, tc.n, tc.err)
		}
		u, n, err := Strtoul(tc.s, tc.base)
		if u != tc.u || n != tc.n || err != tc.uerr {
			t.Errorf("Strtoul(%q, %d) = %d, %d, %v; want %d, %d, %v", tc.s, tc.base, u, n, err, tc.u, tc.n, tc.uerr)
		}
		if tc.base == 0 && (Long(tc.s) != tc.v || ULong(tc.s) != tc.u) {
			t.Errorf("Long/ULong(%q) = %d, %d; want %d, %d", tc.s, Long(tc.s), ULong(tc.s), tc.v, tc.u)
		}
	}
}

// FuzzStrtol: the bytes used are a prefix of the input, and a number
// written back in decimal reads the same.
func FuzzStrtol(f *testing.F) {
	f.Add("  -0x7fz", 0)
	f.Fuzz(func(t *testing.T, s string, base int) {
		v, n, err := Strtol(s, base)
		if n < 0 || n > len(s) || (n == 0 && v != 0) {
			t.Fatalf("Strtol(%q, %d) = %d, %d, %v", s, base, v, n, err)
		}
		if err == nil && n > 0 {
			if w, _, _ := Strtol(itoa(v), 10); w != v {
				t.Fatalf("Strtol(%q) = %d reads back as %d", s, v, w)
			}
		}
	})
}

func itoa(v int64) string {
	if v < 0 {
		return "-" + utoa(uint64(-v))
	}
	return utoa(uint64(v))
}

func utoa(u uint64) string {
	if u < 10 {
		return string(rune('0' + u))
	}
	return utoa(u/10) + string(rune('0'+u%10))
}
