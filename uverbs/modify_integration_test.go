package uverbs

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestIntegrationUverbsModify resizes a CQ, arms and resizes an SRQ and
// re-registers an MR on rxe, through both kernel interfaces.
func TestIntegrationUverbsModify(t *testing.T) {
	devs := devicesForTest(t)
	for _, iface := range []Interface{InterfaceAuto, InterfaceWrite} {
		c := openForTest(t, devs[0], iface)
		cq, err := c.CreateCQ(CQAttr{CQE: 16})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cq.Close() })
		before := bytes.Clone(cq.driver)
		if err := cq.Resize(100); err != nil {
			t.Fatal(err)
		}
		if cq.CQE() < 100 || bytes.Equal(before, bytes.Clone(cq.driver)) {
			t.Fatalf("resized cq: cqe %d, mminfo %x -> %x", cq.CQE(), before, bytes.Clone(cq.driver))
		}
		if err := cq.Resize(0); !errors.Is(err, unix.EINVAL) {
			t.Fatalf("resize to 0: %v", err)
		}

		pd, err := c.AllocPD()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pd.Close() })
		srq, err := pd.CreateSRQ(SRQAttr{MaxWR: 16, MaxSGE: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srq.Close() })
		if err := srq.Modify(SRQAttr{SRQLimit: 4}, SRQAttrLimit); err != nil {
			t.Fatal(err)
		}
		if a, err := srq.Query(); err != nil || a.SRQLimit != 4 {
			t.Fatalf("srq after arming: %+v, %v", a, err)
		}
		before = bytes.Clone(srq.driver)
		if err := srq.Modify(SRQAttr{MaxWR: 64}, SRQAttrMaxWR); err != nil {
			t.Fatal(err)
		}
		a, err := srq.Query()
		if err != nil || a.MaxWR < 64 || srq.MaxWR() != a.MaxWR || bytes.Equal(before[:16], bytes.Clone(srq.driver)[:16]) {
			t.Fatalf("resized srq: %+v (%v), MaxWR %d, mminfo %x -> %x", a, err, srq.MaxWR(), before, bytes.Clone(srq.driver))
		}
		// Both kernels have the CQ, QP and SRQ ioctl methods (5.8+):
		// nothing fell back to write().
		if iface == InterfaceAuto {
			qp, err := pd.CreateQP(QPInit{Type: ib.QPTypeUD, SendCQ: cq, RecvCQ: cq, SRQ: srq, Cap: QPCap{MaxSendWR: 2, MaxSendSGE: 1}})
			if err != nil {
				t.Fatal(err)
			}
			if err := qp.Close(); err != nil {
				t.Fatal(err)
			}
			if m := c.noMethod.Load(); m != 0 {
				t.Fatalf("ioctl methods missing for write() commands %#x", m)
			}
		}
		// A limit beyond the queue is the kernel's EINVAL.
		if err := srq.Modify(SRQAttr{SRQLimit: 1 << 20}, SRQAttrLimit); !errors.Is(err, unix.EINVAL) {
			t.Fatalf("limit beyond the queue: %v", err)
		}

		mem, err := unix.Mmap(-1, 0, 1<<14, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Munmap(mem) })
		mr, err := pd.RegMR(mem, AccessLocalWrite)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mr.Close() })
		pd2, err := c.AllocPD()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pd2.Close() })
		lkey := mr.LKey()
		err = mr.Rereg(ReregPD|ReregAccess, pd2, nil, AccessLocalWrite|AccessRemoteRead)
		t.Logf("%s: rereg PD|ACCESS: %v", testenv.KernelRelease(), err)
		// Debian's 6.1 rxe has no rereg_user_mr (EOPNOTSUPP, measured);
		// 6.12's has it.
		if errors.Is(err, ErrNotSupported) && !uverbsKernelAtLeast(6, 12) {
			if mr.LKey() != lkey || mr.pd != pd {
				t.Fatalf("refused rereg changed the MR: lkey %#x -> %#x", lkey, mr.LKey())
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		// The MR now holds pd2, not pd.
		if err := pd2.Close(); !errors.Is(err, unix.EBUSY) {
			t.Fatalf("pd2 after rereg: %v, want EBUSY", err)
		}
		if err := mr.Rereg(ReregTranslation, nil, mem[:4096], 0); !errors.Is(err, ErrNotSupported) {
			t.Fatalf("rxe translation rereg: %v", err)
		}
	}
}

// uverbsKernelAtLeast compares the running kernel's release with
// major.minor.
func uverbsKernelAtLeast(major, minor int) bool {
	var ma, mi int
	fmt.Sscanf(testenv.KernelRelease(), "%d.%d", &ma, &mi)
	return ma > major || (ma == major && mi >= minor)
}
