package ib

import "fmt"

// MTU is an InfiniBand path MTU code (enum ib_mtu; IBA's MTU encoding),
// as port and QP attributes carry it.
type MTU uint8

// MTUs.
const (
	MTU256  MTU = 1 // IB_MTU_256
	MTU512  MTU = 2 // IB_MTU_512
	MTU1024 MTU = 3 // IB_MTU_1024
	MTU2048 MTU = 4 // IB_MTU_2048
	MTU4096 MTU = 5 // IB_MTU_4096
)

// Bytes returns the MTU in bytes, or 0 for a code without one.
func (m MTU) Bytes() int {
	if m >= MTU256 && m <= MTU4096 {
		return 128 << m
	}
	return 0
}

// MTUFromBytes returns the MTU code for 256, 512, 1024, 2048 or 4096
// bytes.
func MTUFromBytes(n int) (MTU, bool) {
	for m := MTU256; m <= MTU4096; m++ {
		if m.Bytes() == n {
			return m, true
		}
	}
	return 0, false
}

// String returns the size in bytes ("1024"), or "invalid MTU" for codes
// without one, as rdma-core's ibv_devinfo prints them.
func (m MTU) String() string {
	if b := m.Bytes(); b != 0 {
		return fmt.Sprint(b)
	}
	return "invalid MTU"
}
