package pingpong

import (
	"fmt"
	"strconv"
	"strings"
)

// option is one getopt_long option: short letter, long name, and whether
// it takes an argument.
type option struct {
	short  byte
	long   string
	hasArg bool
}

// getopt parses args as glibc's getopt_long does with permutation: short
// options may be grouped (-ec) and take their argument attached (-s64) or
// as the next word; long options take --name=value or --name value, and
// unambiguous prefixes. Non-options are returned in order.
func getopt(args []string, opts []option, set func(c byte, arg string) error) ([]string, error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(rest, args[i+1:]...), nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			var match *option
			for j := range opts {
				if opts[j].long == name {
					match = &opts[j]
					break
				}
				if strings.HasPrefix(opts[j].long, name) {
					if match != nil {
						return nil, fmt.Errorf("option '--%s' is ambiguous", name)
					}
					match = &opts[j]
				}
			}
			if match == nil {
				return nil, fmt.Errorf("unrecognized option '--%s'", name)
			}
			if match.hasArg && !hasVal {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("option '--%s' requires an argument", match.long)
				}
				i++
				val = args[i]
			} else if !match.hasArg && hasVal {
				return nil, fmt.Errorf("option '--%s' doesn't allow an argument", match.long)
			}
			if err := set(match.short, val); err != nil {
				return nil, err
			}
		case len(a) > 1 && a[0] == '-':
			for k := 1; k < len(a); k++ {
				var match *option
				for j := range opts {
					if opts[j].short == a[k] {
						match = &opts[j]
					}
				}
				if match == nil {
					return nil, fmt.Errorf("invalid option -- '%c'", a[k])
				}
				if !match.hasArg {
					if err := set(match.short, ""); err != nil {
						return nil, err
					}
					continue
				}
				val := a[k+1:]
				if val == "" {
					if i+1 >= len(args) {
						return nil, fmt.Errorf("option requires an argument -- '%c'", a[k])
					}
					i++
					val = args[i]
				}
				if err := set(match.short, val); err != nil {
					return nil, err
				}
				break
			}
		default:
			rest = append(rest, a)
		}
	}
	return rest, nil
}

// strtol parses like C's strtol(s, NULL, 0): an optional sign, then
// decimal, 0x hex or 0 octal digits, stopping at the first other
// character; nothing parsed gives 0.
func strtol(s string) int64 {
	s = strings.TrimLeft(s, " \t\n")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	base := 10
	switch {
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isDigit(s[2], 16):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base = 8
	}
	end := 0
	for end < len(s) && isDigit(s[end], base) {
		end++
	}
	v, err := strconv.ParseUint(s[:end], base, 64)
	if err != nil && end > 0 {
		v = 1<<64 - 1
	}
	if neg {
		return -int64(v)
	}
	return int64(v)
}

func isDigit(c byte, base int) bool {
	d := 99
	switch {
	case c >= '0' && c <= '9':
		d = int(c - '0')
	case c >= 'a' && c <= 'z':
		d = int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		d = int(c-'A') + 10
	}
	return d < base
}
