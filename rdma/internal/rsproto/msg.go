package rsproto

import "fmt"

// Op is a message's operation (the RS_OP_* enum in rsocket.c).
type Op uint8

// Operations.
const (
	OpData      Op = 0 // RS_OP_DATA: Data bytes were written into the receive buffer
	OpWrite     Op = 2 // RS_OP_WRITE: a direct write (local only, never on the wire)
	OpSGL       Op = 4 // RS_OP_SGL: a credit update; Data is the new send sequence limit
	OpIOMapSGL  Op = 6 // RS_OP_IOMAP_SGL: the iomap entry Data was updated
	OpCtrl      Op = 7 // RS_OP_CTRL: a control message, Data a Ctrl
	opReserved1 Op = 1 // RS_OP_RSVD_DATA_MORE
	opReserved3 Op = 3 // RS_OP_RSVD_DRA_MORE
	opReserved5 Op = 5 // RS_OP_RSVD
)

var opNames = [...]string{"DATA", "RSVD_DATA_MORE", "WRITE", "RSVD_DRA_MORE", "SGL", "RSVD", "IOMAP_SGL", "CTRL"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Ctrl is a control message (the RS_CTRL_* enum).
type Ctrl uint32

// Control messages.
const (
	CtrlDisconnect Ctrl = 0 // RS_CTRL_DISCONNECT: the sender closed both ways
	CtrlKeepAlive  Ctrl = 1 // RS_CTRL_KEEPALIVE: sent as a 0-byte RDMA WRITE without immediate
	CtrlShutdown   Ctrl = 2 // RS_CTRL_SHUTDOWN: the sender will write no more
)

var ctrlNames = [...]string{"DISCONNECT", "KEEPALIVE", "SHUTDOWN"}

func (c Ctrl) String() string {
	if int(c) < len(ctrlNames) {
		return ctrlNames[c]
	}
	return fmt.Sprintf("Ctrl(%d)", uint32(c))
}

// DataMask is the data field of a message: its low 29 bits.
const DataMask = 1<<29 - 1

// Msg is one rsocket message: an immediate value (host order; the verbs
// layer sends it big-endian) or a send work request's id.
type Msg uint32

// MakeMsg is rs_msg_set(op, data); data above DataMask is cut.
func MakeMsg(op Op, data uint32) Msg { return Msg(uint32(op&7)<<29 | data&DataMask) }

// Op is the message's operation.
func (m Msg) Op() Op { return Op(m >> 29) }

// Data is the message's data field.
func (m Msg) Data() uint32 { return uint32(m) & DataMask }

func (m Msg) String() string {
	if m.Op() == OpCtrl {
		return fmt.Sprintf("%v %v", m.Op(), Ctrl(m.Data()))
	}
	return fmt.Sprintf("%v %d", m.Op(), m.Data())
}
