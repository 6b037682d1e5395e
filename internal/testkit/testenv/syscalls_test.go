package testenv

import "testing"

// TestParseStrace reads strace -f -y -x -s 4 lines as the VM tests get
// them: a doorbell is command 28 on a uverbs fd, whatever the thread;
// the runtime's calls and mappings are counted apart, a munmap going
// with the mapping at its address.
func TestParseStrace(t *testing.T) {
	log := `812   write(3</dev/infiniband/uverbs0>, "\x1c\x00\x00\x00"..., 32) = 32
815   write(3</dev/infiniband/uverbs0>, "\x1c\x00\x00\x00"..., 32 <unfinished ...>
812   futex(0xc000100148, FUTEX_WAKE_PRIVATE, 1) = 1
815   <... write resumed>) = 32
812   write(3</dev/infiniband/uverbs0>, "\x1a\x00\x00\x00"..., 24) = 24
812   write(1</dev/pts/0>, "\x1c\x00\x00\x00"..., 4) = 4
812   nanosleep({tv_sec=0, tv_nsec=20000}, NULL) = 0
812   mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_SHARED, 9</dev/infiniband/uverbs0>, 0x10000) = 0x7f372000d000
812   mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f372000c000
815   mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0 <unfinished ...>
812   epoll_pwait(4, [], 128, 0, NULL, 0) = 0
815   <... mmap resumed>) = 0x7f372000a000
812   mmap(NULL, 262144, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f37202a0000
812   mmap(0x1b03f5c00000, 4194304, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_FIXED|MAP_ANONYMOUS, -1, 0) = 0x1b03f5c00000
812   munmap(0x7f372000c000, 4096) = 0
812   munmap(0x7f372000a000, 4096) = 0
812   munmap(0x7f372000d000, 4096) = 0
812   munmap(0x7f37202a0000, 262144) = 0
`
	c := ParseStrace(log)
	if c.Doorbells != 2 || c.Total != 16 || c.Calls["write"] != 4 || c.Calls["futex"] != 1 || c.Calls["nanosleep"] != 1 {
		t.Errorf("parsed %v; want 2 doorbells, 16 calls (4 writes, 1 futex, 1 nanosleep)", c)
	}
	// The runtime's: futex, nanosleep, epoll_pwait, its two mmaps and
	// the munmap of one of them.
	if c.RuntimeTotal() != 6 || c.Runtime["mmap"] != 2 || c.Runtime["munmap"] != 1 || c.Library != 10 {
		t.Errorf("parsed %v; want 6 of the runtime's (2 mmap, 1 munmap), 10 of the program's", c)
	}
}
