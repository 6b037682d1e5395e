package main

import (
	"strconv"

	"github.com/rdmastack/rdmastack/nldev"
)

// maxDriverLine is iproute2's MAX_LINE_LENGTH: after this many characters
// of driver attributes, they continue on a new indented line.
const maxDriverLine = 80

// printDriver is print_driver_table, shown with -dd: "drv_KEY VALUE "
// after a new indented line.
func printDriver(rs *resSession, attrs []nldev.DriverAttr) {
	p := rs.p
	if !rs.o.driverDetails || attrs == nil {
		return
	}
	textOnly(p, p.sl+"    ")
	cc := 0
	for _, a := range attrs {
		if cc > maxDriverLine {
			textOnly(p, p.sl+"    ")
			cc = 0
		}
		key := "drv_" + a.Key
		if s, ok := a.Value.(nldev.DriverString); ok {
			jsonOnly(p, key, string(s))
			textOnly(p, key+" "+string(s)+" ")
			continue
		}
		var (
			dec, hex string
			js       int32 // iproute2 passes every number through an int
		)
		switch v := a.Value.(type) {
		case nldev.DriverS32:
			dec, hex, js = strconv.FormatInt(int64(v), 10), strconv.FormatUint(uint64(uint32(v)), 16), int32(v)
		case nldev.DriverU32:
			dec, hex, js = strconv.FormatUint(uint64(v), 10), strconv.FormatUint(uint64(v), 16), int32(v)
		case nldev.DriverS64:
			dec, hex, js = strconv.FormatInt(int64(v), 10), strconv.FormatUint(uint64(v), 16), int32(v)
		case nldev.DriverU64:
			dec, hex, js = strconv.FormatUint(uint64(v), 10), strconv.FormatUint(uint64(v), 16), int32(v)
		default:
			return
		}
		if p.json {
			jsonOnly(p, key, js)
			continue
		}
		var s string
		switch a.PrintType {
		case nldev.DriverPrintDefault:
			s = key + " " + dec + " "
		case nldev.DriverPrintHex:
			s = key + " 0x" + hex + " "
		default:
			return // iproute2 stops at a print type it does not know
		}
		textOnly(p, s)
		cc += len(s)
	}
}
