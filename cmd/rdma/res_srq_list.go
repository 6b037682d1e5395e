package main

import (
	"strconv"
	"strings"

	"github.com/rdmastack/rdmastack/nldev"
)

// srqQPList is iproute2's get_srq_qps: the SRQ's QP numbers and ranges
// with the lqpn filter applied, as the pieces of a comma list. ok is false
// when the SRQ is to be hidden: its QPs are all filtered out, or it has
// none and an lqpn filter was given. Like iproute2 it keeps at most 255
// bytes of list and 15 of each piece.
func srqQPList(fs filters, ranges []nldev.QPNRange) (pieces []string, ok bool) {
	if len(ranges) == 0 {
		_, has := fs.find("lqpn")
		return nil, !has
	}
	var b strings.Builder
	delim := ""
	add := func(lo, hi uint32) {
		piece := delim + strconv.FormatUint(uint64(lo), 10)
		if hi != 0 {
			piece += "-" + strconv.FormatUint(uint64(hi), 10)
		}
		if len(piece) > 15 {
			piece = piece[:15]
		}
		if room := 255 - b.Len(); len(piece) > room {
			piece = piece[:max(room, 0)]
		}
		b.WriteString(piece)
		delim = ","
	}
	_, filtered := fs.find("lqpn")
	for _, r := range ranges {
		if r.First == r.Last {
			if !fs.num("lqpn", r.First, true) {
				add(r.First, 0)
			}
			continue
		}
		if r.First > r.Last {
			continue
		}
		if !filtered {
			// What the loop below yields without a filter (0 is never a
			// range's start: iproute2 takes 0 for "none").
			lo := max(r.First, 1)
			switch {
			case lo == r.Last:
				add(lo, 0)
			case lo < r.Last:
				add(lo, r.Last)
			}
			continue
		}
		var lo, hi uint32
		for q := r.First; ; q++ {
			if fs.num("lqpn", q, true) {
				if lo != 0 {
					add(lo, hi)
				}
				lo, hi = 0, 0
			} else if lo == 0 {
				lo = q
			} else {
				hi = q
			}
			if q == r.Last {
				break
			}
		}
		if lo != 0 {
			add(lo, hi)
		}
	}
	for _, s := range strings.Split(b.String(), ",") {
		if s != "" {
			pieces = append(pieces, s)
		}
	}
	return pieces, len(pieces) > 0
}
