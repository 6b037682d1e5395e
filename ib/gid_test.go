package ib

import "testing"

func TestGIDString(t *testing.T) {
	for s, want := range map[string]string{
		"fe80:0000:0000:0000:5054:00ff:fe12:3456": "fe80::5054:ff:fe12:3456",
		"::ffff:10.0.0.1":                         "::ffff:10.0.0.1",
		"10.0.0.1":                                "::ffff:10.0.0.1",
	} {
		g, err := ParseGID(s)
		if err != nil {
			t.Fatalf("ParseGID(%q): %v", s, err)
		}
		if g.String() != want {
			t.Errorf("ParseGID(%q).String() = %q, want %q", s, g, want)
		}
	}
	if g, err := ParseGID("fe80::1%eth0"); err == nil {
		t.Errorf("ParseGID with a zone = %v, want an error", g)
	}
	if !(GID{}).IsZero() {
		t.Error("zero GID is not IsZero")
	}
}

func TestMTU(t *testing.T) {
	if MTU1024.Bytes() != 1024 || MTU4096.String() != "4096" || MTU(0).String() != "invalid MTU" || MTU(6).Bytes() != 0 {
		t.Fatal("MTU codes do not map to sizes")
	}
	if m, ok := MTUFromBytes(2048); !ok || m != MTU2048 {
		t.Fatalf("MTUFromBytes(2048) = %v, %v", m, ok)
	}
	if GIDTypeRoCEv2.String() != "RoCE v2" {
		t.Fatal(GIDTypeRoCEv2.String())
	}
}
