package main

import (
	"io"
	"strconv"
	"strings"
)

// parseArgs parses getopt_long-style options: -d DEV, -dDEV, --ib-dev=DEV,
// --ib-dev DEV, and so on. A nil *options with a nil error means the usage
// text was printed and the command is done. As in rdma-core, -l acts as
// soon as it is seen.
func parseArgs(stdout io.Writer, args []string) (*options, error) {
	o := &options{}
	bad := func() (*options, error) {
		io.WriteString(stdout, usage)
		return nil, &exitError{code: 255}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		var opt, val string
		var hasVal bool
		switch {
		case strings.HasPrefix(a, "--"):
			name, v, ok := strings.Cut(a[2:], "=")
			var long = map[string]string{"ib-dev": "d", "ib-port": "i", "list": "l", "verbose": "v"}
			// getopt_long accepts unambiguous prefixes.
			var match string
			for full, short := range long {
				if strings.HasPrefix(full, name) && name != "" {
					if match != "" && match != short {
						return bad()
					}
					match = short
					if full == name {
						break
					}
				}
			}
			if match == "" {
				return bad()
			}
			opt, val, hasVal = match, v, ok
		case strings.HasPrefix(a, "-") && len(a) > 1:
			opt = a[1:2]
			if len(a) > 2 {
				if opt == "d" || opt == "i" {
					val, hasVal = a[2:], true
				} else {
					// Bundled flags such as -lv.
					args = append(args[:i+1], append([]string{"-" + a[2:]}, args[i+1:]...)...)
				}
			}
		default:
			continue // getopt permutes non-options to the end; ibv_devinfo ignores them
		}
		if (opt == "d" || opt == "i") && !hasVal {
			if i+1 >= len(args) {
				return bad()
			}
			i++
			val = args[i]
		}
		switch opt {
		case "d":
			o.dev = val
		case "i":
			p := strtol(val)
			if p <= 0 {
				io.WriteString(stdout, usage)
				return nil, &exitError{code: 1} // rdma-core returns 1 here, -1 elsewhere
			}
			o.port = p
		case "v":
			o.verbose = true
		case "l":
			o.list = true
			return o, nil
		default:
			return bad()
		}
	}
	return o, nil
}

// strtol parses like C's strtol(s, NULL, 0): an optional sign, then
// decimal, 0x hex or 0 octal digits, stopping at the first other byte.
func strtol(s string) int {
	s = strings.TrimLeft(s, " \t\n")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	base := 10
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		base, s = 16, s[2:]
	case strings.HasPrefix(s, "0"):
		base = 8
	}
	end := 0
	for end < len(s) {
		if _, err := strconv.ParseInt(s[end:end+1], base, 64); err != nil {
			break
		}
		end++
	}
	v, _ := strconv.ParseInt(s[:end], base, 64)
	if neg {
		v = -v
	}
	if v > 1<<31-1 || v < -(1<<31) {
		return -1
	}
	return int(v)
}
