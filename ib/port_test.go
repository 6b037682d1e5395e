package ib

import (
	"fmt"
	"testing"
)

func TestLinkLayerString(t *testing.T) {
	for l, want := range map[LinkLayer]string{LinkLayerUnspecified: "Unspecified", LinkLayerInfiniBand: "InfiniBand",
		LinkLayerEthernet: "Ethernet", 9: "Unknown"} {
		if got := l.String(); got != want {
			t.Errorf("LinkLayer(%d).String() = %q, want %q", uint8(l), got, want)
		}
	}
	if got := fmt.Sprintf("%#v", LinkLayer(9)); got != "ib.LinkLayer(9)" {
		t.Errorf("%%#v = %q", got)
	}
}
