package main

import (
	"fmt"
	"strconv"
	"strings"
)

// filterDef is one filter a resource object accepts (iproute2's struct
// filters): numeric filters take lists and ranges ("1,4-7"), string
// filters case-insensitive comma lists; a doit filter with a single
// number is first tried as a lookup by id.
type filterDef struct {
	name   string
	number bool
	doit   bool
}

// filterSpec is how a resource kind's field filters. rank is its place in
// iproute2's list of the kind's filters (rdma/res.h; 1 is the first after
// "dev" or "link"): a key selects the first filter it is a prefix of, so
// the order decides what "p" or "s" mean. Rank 0: the field is no filter.
type filterSpec struct {
	rank  int
	by    filterBy
	doit  bool // a single number is first tried as a lookup by id
	inert bool // accepted, never applied: iproute2 lists it and checks nothing
}

// filterBy is how a filter compares a field's value.
type filterBy uint8

const (
	byNumber filterBy = iota + 1 // numbers and ranges, against the value's low 32 bits
	byString                     // a case-insensitive comma list
	byQPs                        // numbers, against each QP of an SRQ's list (srqQPList)
)

var noFilter filterSpec

func numberFilter(rank int) filterSpec { return filterSpec{rank: rank, by: byNumber} }
func idFilter(rank int) filterSpec     { return filterSpec{rank: rank, by: byNumber, doit: true} }
func stringFilter(rank int) filterSpec { return filterSpec{rank: rank, by: byString} }
func qpsFilter(rank int) filterSpec    { return filterSpec{rank: rank, by: byQPs} }
func inert(s filterSpec) filterSpec    { s.inert = true; return s }

// hides reports whether the filter on field name hides an object whose
// field has value v.
func (fs filters) hides(name string, by filterBy, v value) bool {
	if v.state == exempt {
		return false
	}
	switch by {
	case byNumber:
		return fs.num(name, uint32(v.n), v.state == present)
	case byString:
		return fs.str(name, v.s)
	case byQPs:
		_, ok := srqQPList(fs, v.qps)
		return !ok
	}
	return false
}

// filter is one FILTER VALUE pair of the command line. The key is kept as
// typed: iproute2 matches it as a prefix of the attribute's name.
type filter struct {
	key, value string
	doit       bool
}

type filters []filter

// parseFilters reads the FILTER VALUE pairs after the object name, as
// iproute2's rd_build_filter does ("link DEV/PORT" and "dev DEV" are pairs
// like the others).
func parseFilters(args []string, valid []filterDef) (filters, error) {
	if len(args) == 0 {
		return nil, nil
	}
	if len(args) == 1 {
		return nil, fmt.Errorf("No filter data was supplied to filter option %s", args[0])
	}
	if len(args)%2 != 0 {
		return nil, fmt.Errorf("There is filter option without data")
	}
	var fs filters
	for i := 0; i < len(args); i += 2 {
		key, value := args[i], args[i+1]
		var def *filterDef
		for j := range valid {
			if matches(key, valid[j].name) {
				def = &valid[j]
				break
			}
		}
		if def == nil {
			return nil, fmt.Errorf("Unsupported filter option: %s", key)
		}
		if def.number && strings.Trim(value, "1234567890,-") != "" {
			return nil, fmt.Errorf("%s filter accepts \"1234567890,-\" characters only", key)
		}
		f := filter{key: key, value: strings.ToLower(value)}
		if def.doit {
			_, err := strconv.ParseInt(value, 10, 64)
			f.doit = err == nil || value == ""
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// find returns the first filter whose key selects the attribute name.
func (fs filters) find(name string) (filter, bool) {
	for _, f := range fs {
		if matches(f.key, name) {
			return f, true
		}
	}
	return filter{}, false
}

// doitIndex returns the id of the first doit filter (atoi of its value).
func (fs filters) doitIndex() (uint32, bool) {
	for _, f := range fs {
		if f.doit {
			n, _ := strconv.ParseInt(f.value, 10, 64)
			return uint32(n), true
		}
	}
	return 0, false
}

// num reports whether a numeric attribute is filtered out: present says
// whether the object has the attribute at all (when it has not, any filter
// on it hides the object).
func (fs filters) num(name string, v uint32, present bool) bool {
	f, ok := fs.find(name)
	if !ok {
		return false
	}
	if !present {
		return true
	}
	return !numberMatches(f.value, v)
}

// numberMatches is iproute2's rd_check_is_filtered: numbers separated by
// anything, where "a-b" also matches the numbers between a and b.
func numberMatches(list string, v uint32) bool {
	var left, cur uint32
	rng := false
	for i := 0; i < len(list); {
		c := list[i]
		if c >= '0' && c <= '9' {
			j := i
			for j < len(list) && list[j] >= '0' && list[j] <= '9' {
				j++
			}
			n, err := strconv.ParseInt(list[i:j], 10, 64)
			if err != nil {
				n = 1<<63 - 1 // strtol saturates
			}
			cur = uint32(n)
			if cur == v || (rng && left < v && v < cur) {
				return true
			}
			rng = false
			i = j
			continue
		}
		if c == '-' {
			left, rng = cur, true
		}
		i++
	}
	return false
}

// str reports whether a string attribute is filtered out (iproute2 ignores
// whether the attribute was present and compares the default value).
func (fs filters) str(name, v string) bool {
	f, ok := fs.find(name)
	if !ok {
		return false
	}
	for _, s := range strings.Split(f.value, ",") {
		if s != "" && strings.EqualFold(s, v) {
			return false
		}
	}
	return true
}

// devArg returns the argument after "dev" or "link" (iproute2's
// rd_set_arg_to_devname), or "" when there is none.
func devArg(args []string) (string, error) {
	for i, a := range args {
		if matches(a, "dev") || matches(a, "link") {
			if i+1 >= len(args) {
				return "", fmt.Errorf("No device name was supplied")
			}
			return args[i+1], nil
		}
	}
	return "", nil
}
