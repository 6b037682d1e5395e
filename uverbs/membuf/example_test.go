package membuf_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/rdmastack/rdmastack/uverbs"
	"github.com/rdmastack/rdmastack/uverbs/membuf"
)

// Register a buffer for the device to read and write: the buffer cannot
// be unmapped while the region covers it, so the device never writes into
// memory the process gave back.
// (TestIntegrationExamples runs it on Soft-RoCE and checks what it
// prints.)
func ExampleBuffer_Register() {
	ctx, err := uverbs.OpenName("rxe0")
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	pd, err := ctx.AllocPD()
	if err != nil {
		log.Fatal(err)
	}
	buf, err := membuf.New(1 << 16) // page-aligned, zero-filled
	if err != nil {
		log.Fatal(err)
	}
	mr, err := buf.Register(pd, uverbs.AccessLocalWrite|uverbs.AccessRemoteWrite)
	if err != nil {
		log.Fatal(err)
	}
	// Work requests name the buffer by address and the region's key.
	sge := uverbs.SGE{Addr: buf.Addr(0), Length: uint32(buf.Len()), LKey: mr.LKey()}
	fmt.Println("sge length:", sge.Length)
	fmt.Println("close while registered:", errors.Is(buf.Close(), membuf.ErrBusy))
	if err := mr.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("close after:", buf.Close())
}
