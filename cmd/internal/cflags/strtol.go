package cflags

import (
	"math"
	"math/bits"
	"syscall"
)

// Strtol converts the start of s as C's strtol(s, &end, base) does on
// LP64 glibc: leading white space, an optional sign, then digits of base
// (2 to 36, or 0: "0x" or "0X" makes it 16, a leading "0" 8, else 10; 16
// also takes a "0x"), up to the first byte that is not one. n is the
// number of bytes used (end - s): 0 when there is no number, when v is 0.
// A value out of range saturates to math.MaxInt64 or math.MinInt64 with
// syscall.ERANGE; a bad base gives syscall.EINVAL.
func Strtol(s string, base int) (v int64, n int, err error) {
	neg, mag, n, over, err := scan(s, base)
	switch {
	case err != nil || n == 0:
		return 0, n, err
	case neg && (over || mag > 1<<63):
		return math.MinInt64, n, syscall.ERANGE
	case neg:
		return int64(-mag), n, nil
	case over || mag > math.MaxInt64:
		return math.MaxInt64, n, syscall.ERANGE
	}
	return int64(mag), n, nil
}

// Strtoul is C's strtoul(s, &end, base) on LP64 glibc, read as Strtol
// is; a minus sign negates the value in unsigned arithmetic ("-1" is
// math.MaxUint64), and a magnitude out of range saturates to
// math.MaxUint64 with syscall.ERANGE, whatever the sign.
func Strtoul(s string, base int) (v uint64, n int, err error) {
	neg, mag, n, over, err := scan(s, base)
	switch {
	case err != nil || n == 0:
		return 0, n, err
	case over:
		return math.MaxUint64, n, syscall.ERANGE
	case neg:
		return -mag, n, nil
	}
	return mag, n, nil
}

// Long is strtol(s, NULL, 0), the way C programs read a numeric option:
// what does not parse is 0, a partial number its start ("7z" is 7).
func Long(s string) int64 {
	v, _, _ := Strtol(s, 0)
	return v
}

// ULong is strtoul(s, NULL, 0).
func ULong(s string) uint64 {
	v, _, _ := Strtoul(s, 0)
	return v
}

// scan reads what strtol and strtoul share: the sign, the magnitude (over
// when it does not fit in 64 bits) and the bytes used, 0 for none.
func scan(s string, base int) (neg bool, mag uint64, n int, over bool, err error) {
	if base < 0 || base == 1 || base > 36 {
		return false, 0, 0, false, syscall.EINVAL
	}
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	switch {
	case (base == 0 || base == 16) && i+1 < len(s) && s[i] == '0' && s[i+1]|0x20 == 'x':
		if i+2 >= len(s) || digit(s[i+2]) >= 16 {
			return false, 0, i + 1, false, nil // "0x" without a hex digit is the number 0
		}
		base, i = 16, i+2
	case base == 0 && i < len(s) && s[i] == '0':
		base = 8
	case base == 0:
		base = 10
	}
	start := i
	for ; i < len(s); i++ {
		d := digit(s[i])
		if d >= base {
			break
		}
		if over {
			continue
		}
		hi, lo := bits.Mul64(mag, uint64(base))
		lo, carry := bits.Add64(lo, uint64(d), 0)
		if hi != 0 || carry != 0 {
			over = true
			continue
		}
		mag = lo
	}
	if i == start {
		return false, 0, 0, false, nil
	}
	return neg, mag, i, over, nil
}

// isSpace is isspace(3) in the C locale.
func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// digit is the value of c as a digit of any base up to 36; 99 for none.
func digit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}
