package ucma

import (
	"net/netip"
	"testing"
	"unsafe"
)

// TestSizes: sizes and key offsets from /usr/include/rdma/rdma_user_cm.h
// and ib_user_verbs.h, computed with gcc on x86-64.
func TestSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"rdma_ucm_cmd_hdr", unsafe.Sizeof(CmdHdr{}), 8},
		{"rdma_ucm_create_id", unsafe.Sizeof(CreateID{}), 24},
		{"rdma_ucm_create_id.ps", unsafe.Offsetof(CreateID{}.PS), 16},
		{"rdma_ucm_create_id_resp", unsafe.Sizeof(CreateIDResp{}), 4},
		{"rdma_ucm_destroy_id", unsafe.Sizeof(DestroyID{}), 16},
		{"rdma_ucm_destroy_id.id", unsafe.Offsetof(DestroyID{}.ID), 8},
		{"rdma_ucm_destroy_id_resp", unsafe.Sizeof(DestroyIDResp{}), 4},
		{"rdma_ucm_bind", unsafe.Sizeof(Bind{}), 136},
		{"rdma_ucm_bind.addr", unsafe.Offsetof(Bind{}.Addr), 8},
		{"rdma_ucm_resolve_addr", unsafe.Sizeof(ResolveAddr{}), 272},
		{"rdma_ucm_resolve_addr.src_addr", unsafe.Offsetof(ResolveAddr{}.SrcAddr), 16},
		{"rdma_ucm_resolve_addr.dst_addr", unsafe.Offsetof(ResolveAddr{}.DstAddr), 144},
		{"rdma_ucm_resolve_route", unsafe.Sizeof(ResolveRoute{}), 8},
		{"rdma_ucm_query", unsafe.Sizeof(Query{}), 16},
		{"rdma_ucm_query_addr_resp", unsafe.Sizeof(QueryAddrResp{}), 280},
		{"rdma_ucm_query_addr_resp.src_addr", unsafe.Offsetof(QueryAddrResp{}.SrcAddr), 16},
		{"rdma_ucm_query_addr_resp.ibdev_index", unsafe.Offsetof(QueryAddrResp{}.IBDevIndex), 272},
		{"rdma_ucm_query_path_resp", unsafe.Sizeof(QueryPathResp{}), 8},
		{"ib_path_rec_data", unsafe.Sizeof(PathRecData{}), 72},
		{"SA PathRecord (ib_path_rec_data.path_rec)", unsafe.Sizeof(SAPathRecord{}), 64},
		{"SA PathRecord DGID (IBA 15.2.5.16: byte 8)", unsafe.Offsetof(SAPathRecord{}.DGID), 8},
		{"SA PathRecord FlowLabel/HopLimit (byte 44)", unsafe.Offsetof(SAPathRecord{}.FlowLabelHopLimit), 44},
		{"SA PathRecord P_Key (byte 50)", unsafe.Offsetof(SAPathRecord{}.PKey), 50},
		{"SA PathRecord MTU (byte 54)", unsafe.Offsetof(SAPathRecord{}.MTU), 54},
		{"SA PathRecord Preference (byte 57)", unsafe.Offsetof(SAPathRecord{}.Preference), 57},
		{"rdma_ucm_conn_param", unsafe.Sizeof(ConnParam{}), 272},
		{"rdma_ucm_conn_param.private_data_len", unsafe.Offsetof(ConnParam{}.PrivateDataLen), 264},
		{"rdma_ucm_conn_param.valid", unsafe.Offsetof(ConnParam{}.Valid), 271},
		{"ib_uverbs_ah_attr", unsafe.Sizeof(AhAttr{}), 32},
		{"ib_uverbs_ah_attr.dlid", unsafe.Offsetof(AhAttr{}.DLID), 24},
		{"rdma_ucm_ud_param", unsafe.Sizeof(UDParam{}), 304},
		{"rdma_ucm_ud_param.private_data", unsafe.Offsetof(UDParam{}.PrivateData), 40},
		{"rdma_ucm_ud_param.private_data_len", unsafe.Offsetof(UDParam{}.PrivateDataLen), 296},
		{"rdma_ucm_ece", unsafe.Sizeof(ECE{}), 8},
		{"rdma_ucm_connect", unsafe.Sizeof(Connect{}), 288},
		{"rdma_ucm_connect.id", unsafe.Offsetof(Connect{}.ID), 272},
		{"rdma_ucm_connect.ece", unsafe.Offsetof(Connect{}.ECE), 280},
		{"rdma_ucm_listen", unsafe.Sizeof(Listen{}), 8},
		{"rdma_ucm_accept", unsafe.Sizeof(Accept{}), 296},
		{"rdma_ucm_accept.conn_param", unsafe.Offsetof(Accept{}.ConnParam), 8},
		{"rdma_ucm_accept.id", unsafe.Offsetof(Accept{}.ID), 280},
		{"rdma_ucm_accept.ece", unsafe.Offsetof(Accept{}.ECE), 288},
		{"rdma_ucm_reject", unsafe.Sizeof(Reject{}), 264},
		{"rdma_ucm_reject.private_data", unsafe.Offsetof(Reject{}.PrivateData), 8},
		{"rdma_ucm_disconnect", unsafe.Sizeof(Disconnect{}), 4},
		{"rdma_ucm_set_option", unsafe.Sizeof(SetOption{}), 24},
		{"rdma_ucm_set_option.optlen", unsafe.Offsetof(SetOption{}.OptLen), 20},
		{"rdma_ucm_join_mcast", unsafe.Sizeof(JoinMcast{}), 152},
		{"rdma_ucm_join_mcast.join_flags", unsafe.Offsetof(JoinMcast{}.JoinFlags), 22},
		{"rdma_ucm_join_mcast.addr", unsafe.Offsetof(JoinMcast{}.Addr), 24},
		{"rdma_ucm_init_qp_attr", unsafe.Sizeof(InitQPAttr{}), 16},
		{"ib_uverbs_qp_attr", unsafe.Sizeof(QPAttr{}), 144},
		{"ib_uverbs_qp_attr.ah_attr", unsafe.Offsetof(QPAttr{}.AhAttr), 40},
		{"ib_uverbs_qp_attr.max_send_wr", unsafe.Offsetof(QPAttr{}.MaxSendWR), 104},
		{"ib_uverbs_qp_attr.pkey_index", unsafe.Offsetof(QPAttr{}.PKeyIndex), 124},
		{"ib_uverbs_qp_attr.timeout", unsafe.Offsetof(QPAttr{}.Timeout), 134},
		{"ib_uverbs_qp_attr.reserved", unsafe.Offsetof(QPAttr{}.Reserved), 139},
		{"rdma_ucm_notify", unsafe.Sizeof(Notify{}), 8},
		{"rdma_ucm_migrate_id", unsafe.Sizeof(MigrateID{}), 16},
		{"rdma_ucm_migrate_resp", unsafe.Sizeof(MigrateResp{}), 4},
		{"rdma_ucm_get_event", unsafe.Sizeof(GetEvent{}), 8},
		{"rdma_ucm_event_resp", unsafe.Sizeof(EventResp{}), 336},
		{"rdma_ucm_event_resp.param", unsafe.Offsetof(EventResp{}.Param), 20},
		{"rdma_ucm_event_resp.reserved", unsafe.Offsetof(EventResp{}.Reserved), 324},
		{"rdma_ucm_event_resp.ece", unsafe.Offsetof(EventResp{}.ECE), 328},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, header says %d", c.name, c.got, c.want)
		}
	}
}

func TestSockaddr(t *testing.T) {
	for _, s := range []string{"10.0.2.15:7471", "[fe80::1%3]:1", "[::1]:0", "0.0.0.0:0"} {
		ap := netip.MustParseAddrPort(s)
		var ss SockaddrStorage
		n := PutSockaddr(&ss, ap)
		fam, got := Sockaddr(ss[:n])
		if got != ap || (ap.Addr().Is4() && (n != 16 || fam != AF_INET)) || (ap.Addr().Is6() && (n != 28 || fam != AF_INET6)) {
			t.Errorf("%s: size %d family %d back %s", s, n, fam, got)
		}
	}
	// IPv4-mapped addresses go as AF_INET.
	var ss SockaddrStorage
	if n := PutSockaddr(&ss, netip.MustParseAddrPort("[::ffff:10.1.2.3]:5")); n != 16 {
		t.Errorf("4in6 size %d", n)
	}
	if n := PutSockaddr(&ss, netip.AddrPort{}); n != 0 {
		t.Errorf("invalid address size %d", n)
	}
	if _, ap := Sockaddr([]byte{2}); ap.IsValid() {
		t.Error("a short sockaddr decoded")
	}
	ib := make([]byte, 48)
	ib[0] = AF_IB
	ib[8], ib[24+7] = 0xfe, 0x34
	if gid, _, sid, ok := SockaddrIB(ib); !ok || gid[0] != 0xfe || sid != 0x34 {
		t.Errorf("sockaddr_ib: %x %x %v", gid, sid, ok)
	}
}
