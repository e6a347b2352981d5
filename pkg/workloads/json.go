package workloads

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// The objects of a list are read value by value from the stream with
// jsontext (Go's encoding/json/jsontext to be), as
// unstructured.Unstructured holds them: objects as map[string]any,
// arrays as []any, integers as int64, other numbers as float64. What
// Trim drops at fixed places (managed fields, kubectl's last-applied
// copy, status but for its phase) is skipped unread.

// decoderOptions read what encoding/json reads: a name given twice keeps
// its last value, and invalid UTF-8 is kept as it is.
var decoderOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

func newDecoder(r io.Reader) *jsontext.Decoder {
	return jsontext.NewDecoder(r, decoderOptions...)
}

// reader reads values, interning the names and short strings that
// repeat from object to object ("name", "image", "IfNotPresent").
type reader struct {
	d    *jsontext.Decoder
	strs map[string]string
	unq  []byte
}

// newReader reads from in; reset reads on from another input, with the
// same strings interned.
func newReader(in io.Reader) *reader {
	if in == nil {
		in = bytes.NewReader(nil)
	}
	return &reader{d: newDecoder(in), strs: make(map[string]string, 256)}
}

func (r *reader) reset(in io.Reader) {
	r.d.Reset(in, decoderOptions...)
}

// maxInterned bounds the strings interned: longer ones rarely repeat.
const (
	maxInterned   = 64
	maxInternSize = 1 << 14
)

// str reads a string, or an object's name.
func (r *reader) str() (string, error) {
	v, err := r.d.ReadValue()
	if err != nil {
		return "", err
	}
	if len(v) == 0 || v[0] != '"' {
		return "", fmt.Errorf("%s where a string belongs", v.Kind())
	}
	raw := v[1 : len(v)-1]
	if len(raw) <= maxInterned {
		if s, ok := r.strs[string(raw)]; ok {
			return s, nil
		}
	}
	var s string
	if simple(raw) {
		s = string(raw)
	} else {
		// The decoder has checked the string: the one error left is
		// invalid UTF-8, which comes back replaced (U+FFFD).
		r.unq, _ = jsontext.AppendUnquote(r.unq[:0], v)
		s = string(r.unq)
	}
	if len(raw) <= maxInterned && len(r.strs) < maxInternSize {
		r.strs[string(raw)] = s
	}
	return s, nil
}

// simple says a JSON string's bytes are its value: no escapes.
func simple(raw []byte) bool {
	for _, c := range raw {
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return false
		}
	}
	return true
}

// value reads any value.
func (r *reader) value() (any, error) {
	switch r.d.PeekKind() {
	case '{':
		return r.object(nil)
	case '[':
		if _, err := r.d.ReadToken(); err != nil {
			return nil, err
		}
		a := []any{}
		for r.d.PeekKind() != ']' {
			v, err := r.value()
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := r.d.ReadToken()
		return a, err
	case '"':
		return r.str()
	case '0':
		v, err := r.d.ReadValue()
		if err != nil {
			return nil, err
		}
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i, nil
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", v, err)
		}
		return f, nil
	case 't', 'f':
		tok, err := r.d.ReadToken()
		if err != nil {
			return nil, err
		}
		return tok.Bool(), nil
	case 'n':
		_, err := r.d.ReadToken()
		return nil, err
	}
	// PeekKind found an error, or the end of an object or array, which
	// ReadToken reports.
	_, err := r.d.ReadToken()
	if err == nil {
		err = errors.New("a value is missing")
	}
	return nil, err
}

// field reads the value of an object's field: keep false leaves the
// field out.
type field func(r *reader, name string) (v any, keep bool, err error)

// object reads an object, each field's value with f where f is set.
func (r *reader) object(f field) (map[string]any, error) {
	if _, err := r.d.ReadToken(); err != nil {
		return nil, err
	}
	m := make(map[string]any, 4)
	for r.d.PeekKind() != '}' {
		name, err := r.str()
		if err != nil {
			return nil, err
		}
		var v any
		keep := true
		if f != nil {
			v, keep, err = f(r, name)
		} else {
			v, err = r.value()
		}
		if err != nil {
			return nil, err
		}
		if keep {
			m[name] = v
		}
	}
	_, err := r.d.ReadToken()
	return m, err
}

// item reads an object of a list, skipping what Trim drops at fixed
// places.
func (r *reader) item() (map[string]any, error) {
	return r.object(itemField)
}

func itemField(r *reader, name string) (any, bool, error) {
	switch {
	case name == "metadata" && r.d.PeekKind() == '{':
		v, err := r.object(metadataField)
		return v, true, err
	case name == "status" && r.d.PeekKind() == '{':
		st, err := r.object(statusField)
		return st, len(st) > 0, err
	case name == "status":
		return nil, false, r.d.SkipValue()
	}
	v, err := r.value()
	return v, true, err
}

func metadataField(r *reader, name string) (any, bool, error) {
	switch {
	case name == "managedFields":
		return nil, false, r.d.SkipValue()
	case name == "annotations" && r.d.PeekKind() == '{':
		v, err := r.object(annotationField)
		return v, len(v) > 0, err
	}
	v, err := r.value()
	return v, true, err
}

func annotationField(r *reader, name string) (any, bool, error) {
	if name == "kubectl.kubernetes.io/last-applied-configuration" {
		return nil, false, r.d.SkipValue()
	}
	v, err := r.value()
	return v, true, err
}

func statusField(r *reader, name string) (any, bool, error) {
	if name != "phase" {
		return nil, false, r.d.SkipValue()
	}
	v, err := r.value()
	return v, true, err
}

// fieldsOf is how the items of a kind's list are read: trimmed as Trim
// trims them, but for Kueue's Workloads, whose status says whether Kueue
// admitted them (kueueField).
func fieldsOf(k Kind) field {
	if k.isKueue() {
		return kueueField
	}
	return itemField
}

// kueueField reads a Workload's metadata as any item's, and of its
// status only what says whether Kueue admitted it.
func kueueField(r *reader, name string) (any, bool, error) {
	if name != "status" || r.d.PeekKind() != '{' {
		return itemField(r, name)
	}
	st, err := r.object(func(r *reader, name string) (any, bool, error) {
		if name != "admission" && name != "conditions" {
			return nil, false, r.d.SkipValue()
		}
		v, err := r.value()
		return v, true, err
	})
	return st, len(st) > 0, err
}
