package main

import (
	"strings"

	"github.com/rdmastack/rdmastack/nldev"
)

// format prints a field an object has, in text and in JSON, as iproute2's
// print helper for that kind of field does.
type format func(rs *resSession, name string, v value)

// fmtNum is res_print_u32/u64: "name N ", a JSON number.
func fmtNum(rs *resSession, name string, v value) {
	rs.p.uint(name, strings.ReplaceAll(name, "%", "%%")+" %d ", v.n)
}

// fmtStr is "name S ", a JSON string.
func fmtStr(rs *resSession, name string, v value) {
	rs.p.str(name, strings.ReplaceAll(name, "%", "%%")+" %s ", v.s)
}

// fmtHex is print_key: "name 0xHEX ", lowercase hex in JSON.
func fmtHex(rs *resSession, name string, v value) { printKey(rs.p, name, &v.n) }

// fmtOnOff is print_on_off: "name on|off ", a JSON boolean (n is 0 or 1).
func fmtOnOff(rs *resSession, name string, v value) {
	rs.p.onOff(name, strings.ReplaceAll(name, "%", "%%")+" %s ", v.n != 0)
}

// fmtAddr is print_ipaddr: s is the address, n the port.
func fmtAddr(rs *resSession, name string, v value) { printAddr(rs.p, name, v.s, uint16(v.n)) }

// fmtComm is print_comm: n is the owner's pid, s a kernel owner's name.
func fmtComm(rs *resSession, _ string, v value) {
	printComm(rs.p, nldev.Owner{PID: uint32(v.n), Kernel: v.s})
}

// fmtQPs prints an SRQ's QP list, as the lqpn filter leaves it: "name
// 17-20,22 ", a JSON array of the pieces; nothing when it is empty.
func fmtQPs(rs *resSession, name string, v value) {
	if qps, _ := srqQPList(rs.fs, v.qps); len(qps) > 0 {
		rs.p.list(name, name+" ", qps, ",", " ")
	}
}

// detailed prints with f only under -d.
func detailed(f format) format {
	return func(rs *resSession, name string, v value) {
		if rs.o.details {
			f(rs, name, v)
		}
	}
}
