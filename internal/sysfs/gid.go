package sysfs

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ParseGID parses sysfs's form of a GID (ports/N/gids/I): eight groups
// of four hex digits, in network order. Anything else is an error
// matching unix.EPROTO.
func ParseGID(s string) ([16]byte, error) {
	var g [16]byte
	s = strings.TrimSpace(s)
	parts := strings.Split(s, ":")
	if len(parts) != 8 {
		return g, fmt.Errorf("malformed gid %q: %w", s, unix.EPROTO)
	}
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 16, 16)
		if err != nil || len(p) != 4 {
			return [16]byte{}, fmt.Errorf("malformed gid %q: %w", s, unix.EPROTO)
		}
		g[2*i], g[2*i+1] = byte(v>>8), byte(v)
	}
	return g, nil
}
