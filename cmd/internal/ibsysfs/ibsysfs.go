// Package ibsysfs is libibumad's (rdma-core v44) view of the RDMA devices
// in sysfs, for the infiniband-diags drop-ins (ibstat, ibstatus): the CA
// list, umad_get_ca with its ports, and umad_get_ca_portguids, reading
// the same files with the same rules.
//
//   - A value is read with one read(2) into libibumad's buffer and cut to
//     its size less one (fw_ver and hw_rev to 19 bytes, hca_type to 39,
//     link_layer to 19, numbers to 31), then at its last newline.
//   - Numbers are strtoul(value, NULL, 0): the leading number of
//     "4: ACTIVE", "0x1a" or "2.5 Gb/sec (1X SDR)".
//   - GUIDs are four colon-separated groups of 16 bits; a port's GUID is
//     the low half of gids/0.
//   - node_type, node_guid and sys_image_guid are required of a CA;
//     lid_mask_count, sm_lid, sm_sl, lid, state, phys_state, rate,
//     cap_mask, gids/0 and one readable P_Key in pkeys/ of each port. A
//     port that lacks one fails its whole CA. fw_ver, hw_rev, hca_type
//     ("") and link_layer ("IB") are optional.
//
// The root directory is a field, /sys/class/infiniband by default, so
// that tests read fixture trees. Sysfs.Errno is errno as libibumad leaves
// it, for the C tools' "%m".
package ibsysfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultRoot is libibumad's SYS_INFINIBAND.
const DefaultRoot = "/sys/class/infiniband"

// MaxPorts is UMAD_CA_MAX_PORTS: a CA's ports are 0 to MaxPorts-1.
const MaxPorts = 10

// Sysfs reads one sysfs tree as libibumad does.
type Sysfs struct {
	// Root is the directory of the devices; "" is DefaultRoot.
	Root string
	// Warn receives libibumad's "ibwarn:" lines; nil discards them.
	Warn io.Writer
	// Debug turns on libibumad's TRACE and DEBUG lines (umad_debug(1)),
	// written to Warn.
	Debug bool
	// Errno is errno as the C library would have left it: the error of
	// the last failing system call (0 after a successful device list).
	Errno unix.Errno
}

// New returns a reader of root that warns on stderr.
func New(root string) *Sysfs { return &Sysfs{Root: root, Warn: os.Stderr} }

// RootDir is the directory of the devices: Root, or DefaultRoot.
func (s *Sysfs) RootDir() string { return s.root() }

func (s *Sysfs) root() string {
	if s.Root == "" {
		return DefaultRoot
	}
	return s.Root
}

// warn is libibumad's IBWARN from function fn.
func (s *Sysfs) warn(fn, format string, args ...any) {
	if s.Warn != nil {
		fmt.Fprintf(s.Warn, "ibwarn: [%d] %s: %s\n", os.Getpid(), fn, fmt.Sprintf(format, args...))
	}
}

// trace is libibumad's TRACE and DEBUG.
func (s *Sysfs) trace(fn, format string, args ...any) {
	if s.Debug {
		s.warn(fn, format, args...)
	}
}

// Init is umad_init, which since v44 only traces.
func (s *Sysfs) Init() { s.trace("umad_init", "umad_init") }

// CA is umad_ca_t.
type CA struct {
	Name       string // ca_name (at most NameLen-1 bytes)
	NodeType   uint32 // node_type: 1 CA, 2 switch, 3 router, 4 iWARP RNIC
	FWVer      string // fw_ver, "" if absent
	HWVer      string // hw_rev, "" if absent
	CAType     string // hca_type, "" if absent
	NodeGUID   uint64
	SystemGUID uint64
	NumPorts   int             // the highest port number
	Ports      [MaxPorts]*Port // by number; nil where there is none
}

// Port is umad_port_t.
type Port struct {
	CAName    string
	PortNum   int
	BaseLID   uint32 // lid
	LMC       uint32 // lid_mask_count
	SMLID     uint32 // sm_lid
	SMSL      uint32 // sm_sl
	State     uint32 // state: 1 Down ... 4 Active
	PhysState uint32 // phys_state: 5 LinkUp ...
	Rate      uint32 // the integer part of rate, in Gb/s
	CapMask   uint32 // cap_mask
	LinkLayer string // link_layer, "IB" if absent
	GIDPrefix uint64 // the high half of gids/0
	PortGUID  uint64 // the low half of gids/0
	PKeys     []uint32
}

// isIBType is is_ib_type: node_type 1 to 3 (CA, switch, router), which
// leaves out iWARP (4) and usNIC devices.
func (s *Sysfs) isIBType(name string) bool {
	t, err := s.ReadUint(filepath.Join(s.root(), name), "node_type")
	return err == nil && t >= 1 && t <= 3
}

// CAList is umad_get_ca_device_list sorted with umad_sort_ca_device_list:
// the InfiniBand-type devices, by strcmp. A missing root is an empty list
// and no error; afterwards Errno is 0 unless the list failed.
func (s *Sysfs) CAList() ([]string, error) {
	names, err := s.readDir(s.root())
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			s.Errno = 0
			return nil, nil
		}
		return nil, fmt.Errorf("list %s: %w", s.root(), err)
	}
	var cas []string
	for _, n := range names {
		if s.isIBType(n) {
			cas = append(cas, n)
		}
	}
	s.trace("umad_get_ca_device_list", "return %d cas", len(cas))
	s.Errno = 0
	return cas, nil
}

// CA is umad_get_ca for a CA named by the caller.
func (s *Sysfs) CA(name string) (*CA, error) {
	s.trace("umad_get_ca", "ca_name %s", name)
	ca, err := s.getCA(name)
	if err != nil {
		return nil, err
	}
	s.trace("umad_get_ca", "opened %s", name)
	return ca, nil
}

// getCA is libibumad's get_ca.
func (s *Sysfs) getCA(name string) (*CA, error) {
	ca := &CA{Name: name}
	if len(ca.Name) > NameLen-1 {
		ca.Name = ca.Name[:NameLen-1]
	}
	dir := filepath.Join(s.root(), ca.Name)
	var err error
	if ca.NodeType, err = s.ReadUint(dir, "node_type"); err != nil {
		return nil, fmt.Errorf("CA %s: %w", name, err)
	}
	ca.FWVer, _ = s.ReadString(dir, "fw_ver", NameLen)
	ca.HWVer, _ = s.ReadString(dir, "hw_rev", NameLen)
	ca.CAType, _ = s.ReadString(dir, "hca_type", CATypeLen)
	if ca.NodeGUID, err = s.ReadGUID(dir, "node_guid"); err != nil {
		return nil, fmt.Errorf("CA %s: %w", name, err)
	}
	if ca.SystemGUID, err = s.ReadGUID(dir, "sys_image_guid"); err != nil {
		return nil, fmt.Errorf("CA %s: %w", name, err)
	}
	portsDir := filepath.Join(dir, "ports")
	ents, err := s.readDir(portsDir)
	if err != nil {
		return nil, fmt.Errorf("CA %s: %w", name, err)
	}
	for _, e := range ents {
		num := 0
		if e != "0" {
			if num = atoi(e); num <= 0 || num >= MaxPorts {
				return nil, fmt.Errorf("CA %s: port directory %q: %w", name, e, unix.EIO)
			}
		}
		p, err := s.port(name, portsDir, num)
		if err != nil {
			return nil, fmt.Errorf("CA %s: %w", name, err)
		}
		ca.Ports[num] = p
		if num > ca.NumPorts {
			ca.NumPorts = num
		}
	}
	return ca, nil
}

// port is libibumad's get_port for ports/num of CA caName.
func (s *Sysfs) port(caName, portsDir string, num int) (*Port, error) {
	p := &Port{CAName: caName, PortNum: num}
	if len(p.CAName) > NameLen-1 {
		p.CAName = p.CAName[:NameLen-1]
	}
	dir := filepath.Join(portsDir, fmt.Sprint(num))
	for _, f := range []struct {
		name string
		v    *uint32
	}{
		{"lid_mask_count", &p.LMC}, {"sm_lid", &p.SMLID}, {"sm_sl", &p.SMSL}, {"lid", &p.BaseLID},
		{"state", &p.State}, {"phys_state", &p.PhysState}, {"rate", &p.Rate}, {"cap_mask", &p.CapMask},
	} {
		v, err := s.ReadUint(dir, f.name)
		if err != nil {
			return nil, fmt.Errorf("port %d: %w", num, err)
		}
		*f.v = v
	}
	ll, err := s.ReadString(dir, "link_layer", NameLen)
	if err != nil {
		ll = "IB"
	}
	p.LinkLayer = ll
	gid, err := s.ReadGID(dir, "gids/0")
	if err != nil {
		return nil, fmt.Errorf("port %d: %w", num, err)
	}
	for i := 0; i < 8; i++ {
		p.GIDPrefix = p.GIDPrefix<<8 | uint64(gid[i])
		p.PortGUID = p.PortGUID<<8 | uint64(gid[8+i])
	}
	pkeysDir := filepath.Join(dir, "pkeys")
	var pkeys []string
	if names, err := s.readDir(pkeysDir); err == nil {
		for _, n := range names {
			if strings.Trim(n, "0123456789") == "" {
				pkeys = append(pkeys, n)
			}
		}
	}
	if len(pkeys) == 0 {
		s.warn("get_port", "no pkeys found for %s:%d (at dir %s)...", p.CAName, num, pkeysDir)
		return nil, fmt.Errorf("port %d: no P_Keys in %s: %w", num, pkeysDir, unix.EIO)
	}
	for _, n := range pkeys {
		v, err := s.ReadUint(pkeysDir, n)
		if err != nil {
			return nil, fmt.Errorf("port %d: %w", num, err)
		}
		p.PKeys = append(p.PKeys, v)
	}
	return p, nil
}

// PortGUIDs is umad_get_ca_portguids(name, guids, max): the GUID of each
// port 0 to NumPorts, 0 where there is no port.
func (s *Sysfs) PortGUIDs(name string, max int) ([]uint64, error) {
	s.trace("umad_get_ca_portguids", "ca name %s max port guids %d", name, max)
	ca, err := s.CA(name)
	if err != nil {
		return nil, err
	}
	if ca.NumPorts+1 > max {
		return nil, fmt.Errorf("CA %s: %d ports for %d GUIDs: %w", name, ca.NumPorts+1, max, unix.ENOMEM)
	}
	defer s.trace("umad_get_ca_portguids", "%s: %d ports", name, ca.NumPorts+1)
	guids := make([]uint64, ca.NumPorts+1)
	for i := range guids {
		if p := ca.Ports[i]; p != nil {
			guids[i] = p.PortGUID
		}
	}
	return guids, nil
}

// atoi is atoi(3): optional white space and sign, then decimal digits.
func atoi(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] >= '\t' && s[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	n := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<31; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// Strerror is glibc's strerror(e), as "%m" prints errno: "Success" for
// 0, otherwise Go's text capitalised as glibc's.
func Strerror(e unix.Errno) string {
	if e == 0 {
		return "Success"
	}
	s := e.Error()
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
