package ah

import (
	"testing"

	"github.com/rdmastack/rdmastack/ib"
)

func benchAttr(b *testing.B) (*Table, *Attr) {
	tab := newRoCETable(b)
	e, _ := tab.Add(1, 1, gid(1), ib.GIDTypeRoCEv2, "veth0")
	e.Hold()
	a := new(Attr)
	a.Type, a.Port = TypeRoCE, 1
	MoveGRHSGIDAttr(a, gid(9), 0, 64, 0, e)
	return tab, a
}

func BenchmarkCopyDestroy(b *testing.B) {
	_, a := benchAttr(b)
	var c Attr
	b.ReportAllocs()
	for b.Loop() {
		Copy(&c, a)
		Destroy(&c)
	}
	reportVsKernel(b, "CopyDestroy")
}

func BenchmarkCopy(b *testing.B) {
	_, a := benchAttr(b)
	var c Attr
	b.ReportAllocs()
	for b.Loop() {
		Copy(&c, a) // overwrites without a put, as the kernel's Copy
	}
	reportVsKernel(b, "Copy")
	a.GRH.SGIDAttr().refs.Store(2) // undo the deliberate leaks
}

func BenchmarkMove(b *testing.B) {
	_, a := benchAttr(b)
	var c Attr
	b.ReportAllocs()
	for b.Loop() {
		Move(&c, a)
		Move(a, &c)
	}
	reportVsKernel(b, "Move")
}

func BenchmarkReplace(b *testing.B) {
	_, a := benchAttr(b)
	var c Attr
	Copy(&c, a)
	b.ReportAllocs()
	for b.Loop() {
		Replace(&c, a)
	}
	reportVsKernel(b, "Replace")
}

func BenchmarkDestroyZero(b *testing.B) {
	var a Attr
	b.ReportAllocs()
	for b.Loop() {
		Destroy(&a)
	}
}

// BenchmarkFind shows that finding by GID does not depend on the table's
// size.
func BenchmarkFind(b *testing.B) {
	for _, size := range []uint32{16, 256} {
		b.Run(itoa(int(size)), func(b *testing.B) {
			tab, _ := NewTable(PortSpec{Port: 1, Size: size, RoCE: true})
			for i := uint32(0); i < size; i++ {
				g := gid(byte(i))
				g[14] = byte(i >> 8)
				g[13] = 1
				tab.Add(1, i, g, ib.GIDTypeRoCEv2, "veth0")
			}
			want := gid(byte(size - 1))
			want[14], want[13] = byte((size-1)>>8), 1
			b.ReportAllocs()
			for b.Loop() {
				e, err := tab.Find(want, ib.GIDTypeRoCEv2, "")
				if err != nil {
					b.Fatal(err)
				}
				e.Put()
			}
		})
	}
}

func itoa(n int) string {
	if n >= 10 {
		return itoa(n/10) + string(rune('0'+n%10))
	}
	return string(rune('0' + n))
}

// BenchmarkReplaceOther replaces an attribute referencing one entry with one
// referencing another: a release and a hold, as in the kernel.
func BenchmarkReplaceOther(b *testing.B) {
	tab, a := benchAttr(b)
	e2, _ := tab.Add(1, 2, gid(2), ib.GIDTypeRoCEv2, "veth0")
	e2.Hold()
	var other Attr
	MoveGRHSGIDAttr(&other, gid(9), 0, 64, 0, e2)
	var c Attr
	Copy(&c, a)
	b.ReportAllocs()
	for b.Loop() {
		Replace(&c, &other)
		Replace(&c, a)
	}
	reportVsKernel(b, "ReplaceOther")
}
