package schemas

import (
	"fmt"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/parser"
)

// Build evaluates the embedded schema and catalog as one CUE package in
// ctx. Positions in its errors read "schemas/<file>:line:col".
func Build(ctx *cue.Context) (cue.Value, error) {
	inst := build.NewContext().NewInstance("schemas", nil)
	for _, name := range Files {
		src, err := FS.ReadFile(name)
		if err != nil {
			return cue.Value{}, err
		}
		f, err := parser.ParseFile("schemas/"+name, src, parser.ParseComments)
		if err != nil {
			return cue.Value{}, fmt.Errorf("embedded schema: %w", err)
		}
		if err := inst.AddSyntax(f); err != nil {
			return cue.Value{}, fmt.Errorf("embedded schema: %w", err)
		}
	}
	v := ctx.BuildInstance(inst)
	if err := v.Err(); err != nil {
		return cue.Value{}, fmt.Errorf("embedded schema: %w", err)
	}
	return v, nil
}
