package compile

// The cluster's catalog: the built-in accelerator types with the
// cluster's patches merged over them.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/accelc/accelc/pkg/catalog"
)

// catalog is the built-in catalog with the cluster's accelerators merged
// in; nil, with the diagnostics, when a patch is wrong. The error is for
// a built-in catalog that does not load.
func (raw *rawConfig) catalog(m *Model) (*catalog.Catalog, []Diagnostic, error) {
	builtin, err := catalog.Builtin()
	if err != nil {
		return nil, nil, err
	}
	cat, diags := mergeCatalog(builtin, raw.Accelerators, m.root().Key("accelerators"))
	return cat, diags, nil
}

// mergeCatalog applies a cluster's `accelerators` patches to the built-in
// catalog: an id the catalog has gets the given fields replaced; a new id
// must give every required field.
func mergeCatalog(base *catalog.Catalog, patches map[string]map[string]any, at Path) (*catalog.Catalog, []Diagnostic) {
	if len(patches) == 0 {
		return base, nil
	}
	var diags []Diagnostic
	classes := map[string]catalog.Class{}
	for _, c := range base.Classes() {
		classes[c.ID] = *c
	}
	for _, id := range slices.Sorted(maps.Keys(patches)) {
		fields := map[string]any{}
		if c, ok := classes[id]; ok {
			b, _ := json.Marshal(c)
			_ = json.Unmarshal(b, &fields)
		} else {
			var missing []string
			for _, f := range []string{"vendor", "displayName", "model", "architecture", "memoryGB"} {
				if _, ok := patches[id][f]; !ok {
					missing = append(missing, f)
				}
			}
			if len(missing) > 0 {
				diags = append(diags, Diagnostic{Path: at.Key(id), Msg: fmt.Sprintf(
					"not a built-in type, so it needs %s (or fix the id if you meant to override a built-in type)",
					strings.Join(missing, ", "))})
				continue
			}
			fields["resourceName"] = catalog.DefaultResourceName(patches[id]["vendor"].(string))
			fields["pciDeviceIDs"] = []string{}
			fields["identifiedBy"] = map[string][]string{}
		}
		for k, v := range patches[id] {
			fields[k] = v
		}
		fields["id"] = id
		b, err := json.Marshal(fields)
		if err != nil {
			diags = append(diags, Diagnostic{Path: at.Key(id), Msg: err.Error()})
			continue
		}
		var c catalog.Class
		if err := json.Unmarshal(b, &c); err != nil {
			diags = append(diags, Diagnostic{Path: at.Key(id), Msg: err.Error()})
			continue
		}
		classes[id] = c
	}
	if len(diags) > 0 {
		return nil, diags
	}
	list := make([]catalog.Class, 0, len(classes))
	for _, id := range slices.Sorted(maps.Keys(classes)) {
		list = append(list, classes[id])
	}
	cat, err := catalog.New(list)
	if err != nil {
		return nil, []Diagnostic{{Path: at, Msg: err.Error()}}
	}
	return cat, nil
}

// unknownType is the error for an id the catalog lacks, with the closest
// ids it has.
func unknownType(cat *catalog.Catalog, at Path, id string) Diagnostic {
	msg := fmt.Sprintf("unknown accelerator type %q", id)
	if close := cat.Closest(id, 3); len(close) > 0 {
		msg += "; did you mean " + strings.Join(close, ", ") + "?"
	}
	msg += " (a type accelc does not know yet: define it under accelerators)"
	return Diagnostic{Path: at, Msg: msg}
}
