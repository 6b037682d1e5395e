package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// runBatch runs one command per line of o.batch ("-" is standard input),
// as iproute2's -b does: '#' starts a comment, and the first failing line
// stops the batch unless -f was given.
func runBatch(stdout io.Writer, o options) error {
	var r io.Reader = os.Stdin
	if o.batch != "-" {
		f, err := os.Open(o.batch)
		if err != nil {
			return fmt.Errorf("Cannot open file \"%s\" for reading: %v", o.batch, err)
		}
		defer f.Close()
		r = f
	}
	sc := bufio.NewScanner(r)
	var failed error
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		words := strings.Fields(text)
		if len(words) == 0 {
			continue
		}
		if err := runCommand(stdout, o, words); err != nil {
			err = fmt.Errorf("Command failed %s:%d: %w", o.batch, line, err)
			if !o.force {
				return err
			}
			failed = err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return failed
}
