package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// printer writes records the way iproute2's print_* helpers do: in text
// mode each field is its format with the value, a record ends with a
// newline; in JSON mode each record is an object of the fields' keys, in
// the order printed, and the records form one array.
type printer struct {
	w       io.Writer
	json    bool
	pretty  bool
	sl      string // "\n", or "\\" in oneline mode (iproute2's _SL_)
	text    bytes.Buffer
	objects [][]byte
	fields  []field // the open record's fields (JSON mode)
}

type field struct {
	key   string
	value any
}

func newPrinter(w io.Writer, o options) *printer {
	sl := "\n"
	if o.oneline {
		sl = "\\"
	}
	return &printer{w: w, json: o.json, pretty: o.pretty, sl: sl}
}

// str prints a string field: format (fmt syntax) in text, key in JSON.
func (p *printer) str(key, format, v string) {
	if p.json {
		p.fields = append(p.fields, field{key, v})
		return
	}
	fmt.Fprintf(&p.text, format, v)
}

// uint prints a number field.
func (p *printer) uint(key, format string, v uint64) {
	if p.json {
		p.fields = append(p.fields, field{key, v})
		return
	}
	fmt.Fprintf(&p.text, format, v)
}

// jsonUint prints a number field in JSON only (PRINT_JSON).
func (p *printer) jsonUint(key string, v uint64) {
	if p.json {
		p.fields = append(p.fields, field{key, v})
	}
}

// onOff prints "on"/"off" in text and a boolean in JSON (print_on_off).
func (p *printer) onOff(key, format string, v bool) {
	if p.json {
		p.fields = append(p.fields, field{key, v})
		return
	}
	s := "off"
	if v {
		s = "on"
	}
	fmt.Fprintf(&p.text, format, s)
}

// list prints items as a JSON array under key, and in text as
// open + items joined by sep + close.
func (p *printer) list(key, open string, items []string, sep, close string) {
	if p.json {
		if items == nil {
			items = []string{}
		}
		p.fields = append(p.fields, field{key, items})
		return
	}
	p.text.WriteString(open)
	for i, it := range items {
		if i > 0 {
			p.text.WriteString(sep)
		}
		p.text.WriteString(it)
	}
	p.text.WriteString(close)
}

// end closes the open record.
func (p *printer) end() error {
	if !p.json {
		p.text.WriteByte('\n')
		_, err := p.w.Write(p.text.Bytes())
		p.text.Reset()
		return err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range p.fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		v, err := json.Marshal(f.value)
		if err != nil {
			return err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	p.objects = append(p.objects, b.Bytes())
	p.fields = p.fields[:0]
	return nil
}

// joined takes the finished JSON objects, comma-separated.
func (p *printer) joined() []byte {
	out := bytes.Join(p.objects, []byte{','})
	p.objects = p.objects[:0]
	return out
}

// writeObjects writes the finished JSON objects without the enclosing
// array, for output that streams (monitor).
func (p *printer) writeObjects() error {
	_, err := p.w.Write(p.joined())
	return err
}

// flush writes the JSON array of every record; text was written as it went.
func (p *printer) flush() error {
	if !p.json {
		return nil
	}
	out := append(append([]byte{'['}, p.joined()...), ']')
	if p.pretty {
		var ind bytes.Buffer
		if err := json.Indent(&ind, out, "", "    "); err != nil {
			return err
		}
		out = ind.Bytes()
	}
	_, err := p.w.Write(append(out, '\n'))
	return err
}
