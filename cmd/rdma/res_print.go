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

// printAddr is print_ipaddr: "key ADDR:PORT " in text, "ADDR:PORT" in JSON.
func printAddr(p *printer, key, addr string, port uint16) {
	s := fmt.Sprintf("%s:%d", addr, port)
	jsonOnly(p, key, s)
	textOnly(p, key+" "+s+" ")
}
