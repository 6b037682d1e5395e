package main

import (
	"strconv"

	"github.com/rdmastack/rdmastack/nldev"
)

// printRaw is print_raw_data: the bytes as a JSON array "data", and in
// text each byte in decimal, unseparated, then ">".
func printRaw(p *printer, data []byte) {
	if p.json {
		v := make([]uint, len(data))
		for i, b := range data {
			v[i] = uint(b)
		}
		jsonOnly(p, "data", v)
		return
	}
	for _, b := range data {
		p.text.WriteString(strconv.Itoa(int(b)))
	}
	p.text.WriteString(">")
}

// showRaw prints raw objects: "link DEV/PORT" for QPs, "dev DEV" for the
// others, then the data.
func showRaw(rs *resSession, objs []nldev.RawResource, link bool) error {
	for _, r := range objs {
		if link {
			printLink(rs.p, r.DevIndex, r.DevName, r.Port)
		} else {
			printDev(rs.p, r.DevIndex, r.DevName)
		}
		printRaw(rs.p, r.Data)
		if err := rs.p.end(); err != nil {
			return err
		}
	}
	return nil
}
