package serve

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// documentedFields reads docs/serve.md's api-fields block: path → type.
func documentedFields(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("../../docs/serve.md")
	require.NoError(t, err)
	defer f.Close()
	out := map[string]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "```api-fields":
			in = true
			continue
		case in && line == "```":
			in = false
		}
		if !in {
			continue
		}
		fields := strings.Fields(line)
		require.GreaterOrEqual(t, len(fields), 2, "docs/serve.md api-fields line %q: write PATH TYPE [what it is]", line)
		path := placeholder.ReplaceAllString(fields[0], "{}")
		_, dup := out[path]
		require.False(t, dup, "docs/serve.md api-fields lists %s twice", fields[0])
		out[path] = fields[1]
	}
	require.NotEmpty(t, out, "docs/serve.md has no ```api-fields block")
	return out
}

var placeholder = regexp.MustCompile(`\{[a-z]+\}`)

// typeFields are the JSON paths a Go type can encode to, as the README
// writes them: a.b for fields, [] for a slice's elements, {} for a map's.
func typeFields(prefix string, t reflect.Type, out map[string]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if prefix != "" {
		out[prefix] = jsonKind(t)
	}
	switch {
	case t == reflect.TypeFor[time.Time]():
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				typeFields(prefix, f.Type, out)
				if prefix != "" {
					out[prefix] = "object"
				}
				continue
			}
			if name == "" {
				name = f.Name
			}
			typeFields(join(prefix, name), f.Type, out)
		}
	case t.Kind() == reflect.Slice:
		typeFields(prefix+"[]", t.Elem(), out)
	case t.Kind() == reflect.Map:
		typeFields(join(prefix, "{}"), t.Elem(), out)
	}
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[time.Time]():
		return "string"
	case t.Kind() == reflect.Struct, t.Kind() == reflect.Map:
		return "object"
	case t.Kind() == reflect.Slice:
		return "array"
	case t.Kind() == reflect.String:
		return "string"
	case t.Kind() == reflect.Bool:
		return "boolean"
	default:
		return "number"
	}
}

// responseFields are the JSON paths of every response type the server
// writes, named as the README names them.
func responseFields() map[string]string {
	out := map[string]string{}
	typeFields("meta", reflect.TypeFor[Meta](), out)
	typeFields("error", reflect.TypeFor[Error](), out)
	for name, t := range map[string]reflect.Type{
		"profiles":  reflect.TypeFor[profilesResponse](),
		"nodes":     reflect.TypeFor[nodesBody](),
		"recommend": reflect.TypeFor[recommendResponse](),
		"estimate":  reflect.TypeFor[estimateResponse](),
	} {
		fields := map[string]string{}
		typeFields(name, t, fields)
		for p, k := range fields {
			if p == name+".meta" || strings.HasPrefix(p, name+".meta.") {
				continue // documented once, as meta
			}
			if p == "profiles.part" || p == "profiles.parts" {
				continue // the ConfigMap's split: the API serves the document whole
			}
			if name == "recommend" && strings.HasPrefix(p, "recommend.best.") {
				continue // a choice: documented once, as choices[]
			}
			out[p] = k
		}
	}
	// GET /api/v1/profiles/{name} is {meta, profile}: its profile is
	// profiles.profiles[].
	return out
}

// TestAPISchema: docs/serve.md documents every field the API's responses
// can hold, with its JSON type, and nothing else.
func TestAPISchema(t *testing.T) {
	doc := documentedFields(t)
	code := responseFields()
	var missing, extra, wrong []string
	for p, k := range code {
		switch d, ok := doc[p]; {
		case !ok:
			missing = append(missing, p+" "+k)
		case d != k:
			wrong = append(wrong, p+": docs/serve.md says "+d+", the server writes "+k)
		}
	}
	for p := range doc {
		if _, ok := code[p]; !ok {
			extra = append(extra, p)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	slices.Sort(wrong)
	if len(missing)+len(extra)+len(wrong) > 0 {
		t.Errorf("docs/serve.md's api-fields and the server's responses differ:\nnot documented:\n  %s\ndocumented but never written:\n  %s\nwrong type:\n  %s",
			strings.Join(missing, "\n  "), strings.Join(extra, "\n  "), strings.Join(wrong, "\n  "))
	}
}

// normal names a response's path as the README does: meta once, a
// profile as profiles[], the best choice as choices[].
func normal(prefix, path string) string {
	if path == prefix+".meta" || strings.HasPrefix(path, prefix+".meta.") {
		path = "meta" + strings.TrimPrefix(path, prefix+".meta")
	}
	if rest, ok := strings.CutPrefix(path, "profile.profile"); ok {
		path = "profiles.profiles[]" + rest
	}
	if rest, ok := strings.CutPrefix(path, "recommend.best"); ok {
		path = "recommend.choices[]" + rest
	}
	return path
}

// checkDocumented walks a response the server wrote and fails on a path
// the README does not document (or documents with another type).
func checkDocumented(t *testing.T, doc map[string]string, prefix string, body []byte) {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(body, &v), string(body))
	var walk func(path string, v any)
	walk = func(path string, v any) {
		path = normal(prefix, path)
		if path != prefix && path != "profile" {
			kind := map[bool]string{}[false]
			switch v.(type) {
			case map[string]any:
				kind = "object"
			case []any:
				kind = "array"
			case string:
				kind = "string"
			case bool:
				kind = "boolean"
			case float64:
				kind = "number"
			}
			if d, ok := doc[path]; !ok || d != kind {
				t.Errorf("%s: the server wrote %s %s, docs/serve.md documents %q", prefix, path, kind, doc[path])
				return
			}
		}
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				if _, isMap := doc[join(normal(prefix, path), "{}")]; isMap {
					// A map's keys are data (they may hold dots).
					k = "{}"
				}
				walk(join(path, k), val)
			}
		case []any:
			for _, val := range x {
				walk(path+"[]", val)
			}
		}
	}
	walk(prefix, v)
}
