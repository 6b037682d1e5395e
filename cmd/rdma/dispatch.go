package main

import (
	"fmt"
	"io"
)

// command is one word of a command line, which any prefix of it selects
// (as in iproute2), and what runs the words after it.
type command struct {
	name string
	run  func(stdout io.Writer, o options, args []string) error
}

// dispatch is iproute2's rd_exec_cmd: with no words it runs def (most
// objects show themselves), else the first of cmds that args[0] is a
// prefix of, with the words after it; another word is "Unknown what
// 'word'.". The order of cmds is iproute2's: "s" is show where show
// comes before set.
func dispatch(stdout io.Writer, o options, args []string, what string,
	def func(io.Writer, options, []string) error, cmds ...command) error {
	if len(args) == 0 {
		return def(stdout, o, nil)
	}
	for _, c := range cmds {
		if matches(args[0], c.name) {
			return c.run(stdout, o, args[1:])
		}
	}
	return fmt.Errorf("Unknown %s '%s'.", what, args[0])
}

// printUsage runs as a command that prints usage.
func printUsage(usage string) func(io.Writer, options, []string) error {
	return func(stdout io.Writer, _ options, _ []string) error {
		_, err := io.WriteString(stdout, usage)
		return err
	}
}

// help is the "help" command of an object: it prints usage.
func help(usage string) command { return command{"help", printUsage(usage)} }
