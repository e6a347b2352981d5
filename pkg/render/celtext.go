package render

// CEL text: the literals and small tests the rendered admission policies
// are written with (the pod policy's operations, the match conditions).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/accelc/accelc/pkg/compile"
)

// namespaceIn is the CEL test that the request's namespace is one of
// patterns, each a name or a glob with * at its start or end, as
// Gatekeeper's match reads them.
func namespaceIn(patterns []string) string {
	var exact, globs []string
	for _, ns := range patterns {
		lead, trail := strings.HasPrefix(ns, "*"), strings.HasSuffix(ns, "*")
		core := strconv.Quote(strings.TrimSuffix(strings.TrimPrefix(ns, "*"), "*"))
		switch {
		case lead && trail:
			globs = append(globs, "request.namespace.contains("+core+")")
		case lead:
			globs = append(globs, "request.namespace.endsWith("+core+")")
		case trail:
			globs = append(globs, "request.namespace.startsWith("+core+")")
		default:
			exact = append(exact, ns)
		}
	}
	var parts []string
	if len(exact) > 0 {
		parts = append(parts, "request.namespace in "+celStrings(exact))
	}
	parts = append(parts, globs...)
	return "(" + strings.Join(parts, " || ") + ")"
}

// celStrings is a CEL list of string literals.
func celStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// tolerationEqual is the CEL test that the toleration v (a variable)
// equals t field by field, as Gatekeeper's merge compares them: the
// fields t sets, with the same values, and no other.
func tolerationEqual(v string, t compile.Toleration) string {
	field := func(name, value string, set bool) string {
		if !set {
			return fmt.Sprintf("!has(%s.%s)", v, name)
		}
		return fmt.Sprintf("has(%s.%s) && %s.%s == %s", v, name, v, name, value)
	}
	var secs string
	if t.TolerationSeconds != nil {
		secs = strconv.FormatInt(*t.TolerationSeconds, 10)
	}
	return strings.Join([]string{
		field("key", strconv.Quote(t.Key), t.Key != ""),
		field("operator", strconv.Quote(t.Operator), t.Operator != ""),
		field("value", strconv.Quote(t.Value), t.Value != ""),
		field("effect", strconv.Quote(t.Effect), t.Effect != ""),
		field("tolerationSeconds", secs, t.TolerationSeconds != nil),
	}, " && ")
}

// celLiteral is v (any value that encodes as JSON) as a CEL literal: an
// object a map of its fields, each value dyn() (Kubernetes' CEL takes no
// map literal whose values differ in type), a list its elements, a
// string, number or boolean itself. Not an object initializer
// (Object.spec.…{}): the API server (1.36.3) panics converting a list of
// them to JSON.
func celLiteral(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("render: %v", err))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		panic(fmt.Sprintf("render: %v", err))
	}
	return celValue(x)
}

func celValue(x any) string {
	switch x := x.(type) {
	case map[string]any:
		var fields []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			fields = append(fields, fmt.Sprintf("%q: dyn(%s)", k, celValue(x[k])))
		}
		return "{" + strings.Join(fields, ", ") + "}"
	case []any:
		elems := make([]string, len(x))
		for i, e := range x {
			elems[i] = celValue(e)
		}
		return "[" + strings.Join(elems, ", ") + "]"
	case string:
		return strconv.Quote(x)
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	panic(fmt.Sprintf("render: a %T has no CEL literal", x))
}
