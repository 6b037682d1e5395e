package rsock

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// TestPerfLines: the table's lines byte for byte. The fixture's numbers
// are what gcc's build of show_perf's arithmetic (a C float of elapsed
// microseconds) and printf formats printed for the same inputs,
// 0/0 ("-nan") and x/0 ("inf") included.
func TestPerfLines(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(Header)
	for _, r := range []Result{
		{"custom", 1000, 100, 3, 12345 * time.Microsecond},
		{TestName(64, "_lat"), 64, 1, 100000, 2345678 * time.Microsecond},
		{TestName(1<<20, "_bw"), 1 << 20, 100, 1, 987654 * time.Microsecond},
		{"custom", 0, 1, 1, 0},
		{"custom", 10, 1, 1, 0},
		{"custom", 4096, 7, 3, time.Microsecond},
		{TestName(1<<22, "_bw"), 1 << 22, 100, 1, 16777217 * time.Microsecond},
		{"custom", 10, 10, 0, 123456789 * time.Microsecond},
	} {
		r.Write(&b)
	}
	want, err := os.ReadFile("testdata/perf.golden")
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestTestNames: the table's names, as the programs cut size_str into 5
// bytes.
func TestTestNames(t *testing.T) {
	var got []string
	for _, ts := range TestSizes {
		got = append(got, TestName(ts.Size, "_lat"))
	}
	want := []string{"64_lat", "128_lat", "192_lat", "256_lat", "384_lat", "512_lat", "768_lat",
		"1k_lat", "1.5k_lat", "2k_lat", "3k_lat", "4k_lat", "6k_lat", "8k_lat", "12k_lat",
		"16k_lat", "24k_lat", "32k_lat", "48k_lat", "64k_lat", "96k_lat", "128k_lat", "192k_lat",
		"256k_lat", "384k_lat", "512k_lat", "768k_lat", "1m_lat", "1.5m_lat", "2m_lat", "3m_lat",
		"4m_lat", "6m_lat"}
	if len(got) != len(want) {
		t.Fatalf("%d sizes, want %d: %q", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("size %d: %q, want %q", TestSizes[i].Size, got[i], want[i])
		}
	}
	if n := TestName(1<<20+1<<19, "_bw"); n != "1.5m_bw" {
		t.Errorf("bandwidth name %q", n)
	}
}
