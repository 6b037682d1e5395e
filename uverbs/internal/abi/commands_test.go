package abi

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// uapiCmd is what rdma/ib_user_verbs.h says about one write() command.
type uapiCmd struct {
	name string // after IB_USER_VERBS_CMD_ (or IB_USER_VERBS_EX_CMD_ for EX_)
	num  uint32 // its value in enum ib_uverbs_write_cmds
	resp bool   // the header has a struct ib_uverbs_<name>_resp
}

// TestCommands checks every typed command against the uapi: its number
// (written out here from enum ib_uverbs_write_cmds, and compared with the
// installed header when there is one), the extended flag, and that its
// request and response are the structs named after it. A command wired
// to the wrong number or the wrong struct fails here.
func TestCommands(t *testing.T) {
	cmds := map[string]struct {
		c interface {
			spec() (uint32, reflect.Type, reflect.Type)
		}
		uapi uapiCmd
	}{
		"CmdGetContext":        {CmdGetContext, uapiCmd{"GET_CONTEXT", 0, true}},
		"CmdQueryDevice":       {CmdQueryDevice, uapiCmd{"QUERY_DEVICE", 1, true}},
		"CmdExQueryDevice":     {CmdExQueryDevice, uapiCmd{"EX_QUERY_DEVICE", 1, true}},
		"CmdQueryPort":         {CmdQueryPort, uapiCmd{"QUERY_PORT", 2, true}},
		"CmdAllocPd":           {CmdAllocPd, uapiCmd{"ALLOC_PD", 3, true}},
		"CmdDeallocPd":         {CmdDeallocPd, uapiCmd{"DEALLOC_PD", 4, false}},
		"CmdCreateAh":          {CmdCreateAh, uapiCmd{"CREATE_AH", 5, true}},
		"CmdDestroyAh":         {CmdDestroyAh, uapiCmd{"DESTROY_AH", 8, false}},
		"CmdRegMr":             {CmdRegMr, uapiCmd{"REG_MR", 9, true}},
		"CmdReregMr":           {CmdReregMr, uapiCmd{"REREG_MR", 11, true}},
		"CmdDeregMr":           {CmdDeregMr, uapiCmd{"DEREG_MR", 13, false}},
		"CmdAllocMw":           {CmdAllocMw, uapiCmd{"ALLOC_MW", 14, true}},
		"CmdDeallocMw":         {CmdDeallocMw, uapiCmd{"DEALLOC_MW", 16, false}},
		"CmdCreateCompChannel": {CmdCreateCompChannel, uapiCmd{"CREATE_COMP_CHANNEL", 17, true}},
		"CmdCreateCq":          {CmdCreateCq, uapiCmd{"CREATE_CQ", 18, true}},
		"CmdResizeCq":          {CmdResizeCq, uapiCmd{"RESIZE_CQ", 19, true}},
		"CmdDestroyCq":         {CmdDestroyCq, uapiCmd{"DESTROY_CQ", 20, true}},
		"CmdCreateQp":          {CmdCreateQp, uapiCmd{"CREATE_QP", 24, true}},
		"CmdQueryQp":           {CmdQueryQp, uapiCmd{"QUERY_QP", 25, true}},
		"CmdModifyQp":          {CmdModifyQp, uapiCmd{"MODIFY_QP", 26, false}},
		"CmdDestroyQp":         {CmdDestroyQp, uapiCmd{"DESTROY_QP", 27, true}},
		"CmdAttachMcast":       {CmdAttachMcast, uapiCmd{"ATTACH_MCAST", 30, false}},
		"CmdDetachMcast":       {CmdDetachMcast, uapiCmd{"DETACH_MCAST", 31, false}},
		"CmdCreateSrq":         {CmdCreateSrq, uapiCmd{"CREATE_SRQ", 32, true}},
		"CmdModifySrq":         {CmdModifySrq, uapiCmd{"MODIFY_SRQ", 33, false}},
		"CmdQuerySrq":          {CmdQuerySrq, uapiCmd{"QUERY_SRQ", 34, true}},
		"CmdDestroySrq":        {CmdDestroySrq, uapiCmd{"DESTROY_SRQ", 35, true}},
	}

	// Every Cmd* variable in commands.go is in the table.
	declared := cmdVars(t)
	for _, name := range declared {
		if _, ok := cmds[name]; !ok {
			t.Errorf("%s is not in TestCommands' table", name)
		}
	}
	if len(declared) != len(cmds) {
		t.Errorf("commands.go declares %d commands, the table has %d", len(declared), len(cmds))
	}

	header := readHeader(t)
	for name, tc := range cmds {
		num, req, resp := tc.c.spec()
		ex := strings.HasPrefix(tc.uapi.name, "EX_")
		if got := num &^ IB_USER_VERBS_CMD_FLAG_EXTENDED; got != tc.uapi.num {
			t.Errorf("%s: command %d, want %d (IB_USER_VERBS_CMD_%s)", name, got, tc.uapi.num, tc.uapi.name)
		}
		if got := num&IB_USER_VERBS_CMD_FLAG_EXTENDED != 0; got != ex {
			t.Errorf("%s: extended flag %v, want %v", name, got, ex)
		}
		if want := "Cmd" + req.Name(); name != want {
			t.Errorf("%s: request struct %s, want the one the variable is named after", name, req.Name())
		}
		if got := upperSnake(req.Name()); got != tc.uapi.name {
			t.Errorf("%s: request struct %s is struct ib_uverbs_%s, not ib_uverbs_%s", name, req.Name(),
				strings.ToLower(got), strings.ToLower(tc.uapi.name))
		}
		switch {
		case tc.uapi.resp && resp == nil:
			t.Errorf("%s: has a response in the uapi but is a CmdNoResp", name)
		case !tc.uapi.resp && resp != nil:
			t.Errorf("%s: has no response in the uapi but reads %s", name, resp.Name())
		case resp != nil && resp.Name() != req.Name()+"Resp":
			t.Errorf("%s: response struct %s, want %sResp", name, resp.Name(), req.Name())
		}
		// A plain command with a response starts with the response slot.
		if resp != nil && !ex {
			if f := req.Field(0); f.Name != "Response" || f.Type.Kind() != reflect.Uint64 {
				t.Errorf("%s: %s does not start with the u64 response slot", name, req.Name())
			}
		}
		if header == nil {
			continue
		}
		cname := tc.uapi.name
		if ex {
			cname = strings.TrimPrefix(cname, "EX_") // the ex_ enum reuses the plain numbers
		}
		if n, ok := header.nums[cname]; !ok || n != tc.uapi.num {
			t.Errorf("%s: ib_user_verbs.h has IB_USER_VERBS_CMD_%s = %d (found %v), table says %d", name, cname, n, ok, tc.uapi.num)
		}
		if got := header.resps[strings.ToLower(tc.uapi.name)]; got != tc.uapi.resp {
			t.Errorf("%s: ib_user_verbs.h has struct ib_uverbs_%s_resp: %v, table says %v", name, strings.ToLower(tc.uapi.name), got, tc.uapi.resp)
		}
	}
}

// upperSnake turns a Go struct name into the uapi's: CreateCompChannel ->
// CREATE_COMP_CHANNEL.
func upperSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// cmdVars returns the names of the package-level Cmd* variables of
// commands.go.
func cmdVars(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "commands.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			for _, n := range s.(*ast.ValueSpec).Names {
				if strings.HasPrefix(n.Name, "Cmd") {
					names = append(names, n.Name)
				}
			}
		}
	}
	sort.Strings(names)
	return names
}

type uapiHeader struct {
	nums  map[string]uint32 // enum ib_uverbs_write_cmds, without IB_USER_VERBS_CMD_
	resps map[string]bool   // struct ib_uverbs_*_resp, without the affixes
}

// readHeader reads the installed rdma/ib_user_verbs.h; nil (the test then
// trusts its table) where rdma-core's headers are not installed.
func readHeader(t *testing.T) *uapiHeader {
	t.Helper()
	f, err := os.Open("/usr/include/rdma/ib_user_verbs.h")
	if err != nil {
		t.Logf("no uapi header to compare with: %v", err)
		return nil
	}
	defer f.Close()
	h := &uapiHeader{nums: map[string]uint32{}, resps: map[string]bool{}}
	enum := regexp.MustCompile(`^\s*IB_USER_VERBS_CMD_([A-Z_]+)\s*(=\s*(\d+))?\s*,?\s*$`)
	resp := regexp.MustCompile(`^struct ib_uverbs_([a-z_]+)_resp\s*\{`)
	in, next := false, uint32(0)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "enum ib_uverbs_write_cmds"):
			in = true
		case in && strings.HasPrefix(line, "}"):
			in = false
		case in:
			if m := enum.FindStringSubmatch(line); m != nil {
				if m[3] != "" {
					var n uint32
					for _, c := range m[3] {
						n = n*10 + uint32(c-'0')
					}
					next = n
				}
				h.nums[m[1]] = next
				next++
			}
		}
		if m := resp.FindStringSubmatch(line); m != nil {
			h.resps[m[1]] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(h.nums) == 0 {
		t.Fatal("found no enum ib_uverbs_write_cmds in ib_user_verbs.h")
	}
	return h
}
