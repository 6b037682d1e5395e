package main

import (
	"fmt"
	"strings"
)

// options are iproute2 rdma's global options (getopt ":Vhdropjfb:" with
// GNU argument permutation, so they may also follow the object).
type options struct {
	version       bool
	help          bool
	details       bool
	driverDetails bool // -dd
	raw           bool
	oneline       bool
	pretty        bool
	json          bool
	force         bool
	batch         string
}

var longOptions = map[string]byte{
	"version": 'V', "help": 'h', "json": 'j', "oneline": 'o', "pretty": 'p',
	"details": 'd', "raw": 'r', "force": 'f', "batch": 'b',
}

// parseOptions splits args into options and the remaining words.
func parseOptions(args []string) (options, []string, error) {
	var o options
	var rest []string
	// batchArg sets -b's file: the rest of the word, or the next argument.
	batchArg := func(i *int, val string) error {
		if val == "" {
			if *i+1 >= len(args) {
				return fmt.Errorf("-b option requires an argument")
			}
			*i++
			val = args[*i]
		}
		o.batch = val
		return nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i+1:]...)
			return o, rest, nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			c, ok := longOptions[name]
			if !ok {
				// getopt_long also accepts unambiguous prefixes.
				var match []byte
				for n, lc := range longOptions {
					if strings.HasPrefix(n, name) {
						match = append(match, lc)
					}
				}
				if len(match) != 1 || name == "" {
					return o, nil, fmt.Errorf("Unknown option.")
				}
				c = match[0]
			}
			if c == 'b' {
				if hasVal && val == "" {
					return o, nil, fmt.Errorf("-b option requires an argument")
				}
				if err := batchArg(&i, val); err != nil {
					return o, nil, err
				}
				continue
			}
			o.set(c)
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				c := a[j]
				if c == 'b' {
					if err := batchArg(&i, a[j+1:]); err != nil {
						return o, nil, err
					}
					break
				}
				if !strings.ContainsRune("Vhdropjf", rune(c)) {
					return o, nil, fmt.Errorf("Unknown option.")
				}
				o.set(c)
			}
		default:
			rest = append(rest, a)
		}
	}
	return o, rest, nil
}

func (o *options) set(c byte) {
	switch c {
	case 'V':
		o.version = true
	case 'h':
		o.help = true
	case 'd':
		if o.details {
			o.driverDetails = true
		}
		o.details = true
	case 'r':
		o.raw = true
	case 'o':
		o.oneline = true
	case 'p':
		o.pretty = true
	case 'j':
		o.json = true
	case 'f':
		o.force = true
	}
}

// matches is iproute2 rdma's strcmpx: word selects cmd when it is a
// prefix of it ("d" and "dev" both select "dev").
func matches(word, cmd string) bool { return strings.HasPrefix(cmd, word) }
