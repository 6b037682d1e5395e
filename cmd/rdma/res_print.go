package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rdmastack/rdmastack/nldev"
)

// jsonOnly adds a field in JSON mode only (iproute2's PRINT_JSON).
func jsonOnly(p *printer, key string, v any) {
	if p.json {
		p.fields = append(p.fields, field{key, v})
	}
}

// textOnly writes s in text mode only (PRINT_FP).
func textOnly(p *printer, s string) {
	if !p.json {
		p.text.WriteString(s)
	}
}

// printLink is iproute2's print_link: "link DEV/PORT " (or "DEV/-" for
// port-less objects) in text; ifindex, ifname and port in JSON.
func printLink(p *printer, dev uint32, name string, port uint32) {
	jsonOnly(p, "ifindex", dev)
	jsonOnly(p, "ifname", name)
	if port != 0 {
		jsonOnly(p, "port", port)
		textOnly(p, fmt.Sprintf("link %s/%d ", name, port))
	} else {
		textOnly(p, fmt.Sprintf("link %s/- ", name))
	}
}

// printDev is iproute2's print_dev: "dev NAME ".
func printDev(p *printer, dev uint32, name string) {
	jsonOnly(p, "ifindex", dev)
	p.str("ifname", "dev %s ", name)
}

// resU32 is res_print_u32/u64: "name N " when the attribute is present.
func resU32[T uint32 | uint64](p *printer, name string, v *T) {
	if v != nil {
		p.uint(name, strings.ReplaceAll(name, "%", "%%")+" %d ", uint64(*v))
	}
}

// printKey is print_key: "name 0xHEX " in text, lowercase hex without 0x
// in JSON; iproute2 passes the value as an unsigned int, so only its low
// 32 bits show.
func printKey[T uint32 | uint64](p *printer, name string, v *T) {
	if v == nil {
		return
	}
	h := strconv.FormatUint(uint64(uint32(*v)), 16)
	if p.json {
		jsonOnly(p, name, h)
		return
	}
	textOnly(p, name+" 0x"+h+" ")
}

// taskName is the name of process pid from /proc/PID/comm (iproute2's
// get_task_name).
func taskName(pid uint32) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(pid), 10) + "/comm")
	if err != nil || len(b) == 0 {
		return "", false
	}
	s, _, _ := strings.Cut(string(b), "\n")
	return s, true
}

// printComm is print_comm: the process's name for user objects, "[name]"
// (plain in JSON) for kernel ones, cut to 17 bytes as iproute2's buffer
// does.
func printComm(p *printer, o nldev.Owner) {
	var s string
	switch {
	case o.PID != 0:
		name, ok := taskName(o.PID)
		if !ok {
			return
		}
		s = name
	case o.Kernel != "":
		s = o.Kernel
		if !p.json {
			s = "[" + s + "]"
		}
	default:
		return
	}
	if len(s) > 17 {
		s = s[:17]
	}
	p.str("comm", "comm %s ", s)
}

// printPID prints "pid N " for user objects.
func printPID(p *printer, o nldev.Owner) {
	if o.PID != 0 {
		p.uint("pid", "pid %d ", uint64(o.PID))
	}
}

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

// fetchShowRaw fetches raw objects (a lookup by id when the filters name
// one, else a dump) and prints them.
func fetchShowRaw(rs *resSession, link bool, get func(id uint32) (nldev.RawResource, error), dump func() ([]nldev.RawResource, error)) error {
	objs, err := fetch(rs, get, dump)
	if err != nil {
		return err
	}
	return showRaw(rs, objs, link)
}
