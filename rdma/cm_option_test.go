package rdma

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

func TestOptionValue(t *testing.T) {
	for _, c := range []struct {
		o     Option
		value int
		want  []byte
		err   error
	}{
		{OptionTOS, 0x20, []byte{0x20}, nil},
		{OptionTOS, 256, nil, unix.EINVAL},
		{OptionAckTimeout, 31, []byte{31}, nil},
		{OptionAckTimeout, 32, nil, unix.EINVAL},
		{OptionReuseAddr, 1, []byte{1, 0, 0, 0}, nil},
		{OptionAFOnly, 0, []byte{0, 0, 0, 0}, nil},
		{OptionAFOnly, -1, nil, unix.EINVAL},
		{Option(9), 0, nil, ErrNotSupported},
	} {
		got, err := optionValue(c.o, c.value)
		if !errors.Is(err, c.err) || (c.err == nil && string(got) != string(c.want)) {
			t.Errorf("%v = %d: %x %v, want %x %v", c.o, c.value, got, err, c.want, c.err)
		}
	}
	if OptionAckTimeout.String() != "ACK_TIMEOUT" || Option(9).String() != "Option(9)" {
		t.Errorf("names: %v %v", OptionAckTimeout, Option(9))
	}
}
