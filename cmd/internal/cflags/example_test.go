package cflags_test

import (
	"fmt"

	"github.com/rdmastack/rdmastack/cmd/internal/cflags"
)

// Example reads a command line as ibv_devinfo's C source does: optstring
// "d:i:lv" and its long-option table, port numbers through strtol into
// an int.
func Example() {
	longs := []cflags.LongOption{
		{Name: "ib-dev", Arg: cflags.RequiredArgument, Val: 'd'},
		{Name: "ib-port", Arg: cflags.RequiredArgument, Val: 'i'},
		{Name: "list", Arg: cflags.NoArgument, Val: 'l'},
		{Name: "verbose", Arg: cflags.NoArgument, Val: 'v'},
	}
	for _, args := range [][]string{
		{"-vdrxe0", "--ib-p=0x1", "extra"},
		{"--ib", "rxe0"},
		{"-x"},
	} {
		g := cflags.New("ibv_devinfo", args, "d:i:lv", longs)
		for g.Next() {
			switch g.Opt() {
			case 'd':
				fmt.Println("device", g.Arg())
			case 'i':
				fmt.Println("port", int32(cflags.Long(g.Arg())))
			case 'v':
				fmt.Println("verbose")
			default:
				fmt.Println(g.Err()) // glibc's words, for stderr
			}
		}
		fmt.Printf("operands %q\n", g.Args())
	}
	// Output:
	// verbose
	// device rxe0
	// port 1
	// operands ["extra"]
	// ibv_devinfo: option '--ib' is ambiguous; possibilities: '--ib-dev' '--ib-port'
	// operands ["rxe0"]
	// ibv_devinfo: invalid option -- 'x'
	// operands []
}
