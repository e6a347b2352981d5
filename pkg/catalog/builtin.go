package catalog

// The built-in catalog, decoded from the schema's accelerator types.

import (
	"fmt"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/accelc/accelc/schemas"
)

var builtin struct {
	once sync.Once
	cat  *Catalog
	err  error
}

// Builtin returns the catalog embedded in the binary. It is evaluated once
// per process.
func Builtin() (*Catalog, error) {
	builtin.once.Do(func() {
		v, err := schemas.Build(cuecontext.New())
		if err != nil {
			builtin.err = err
			return
		}
		builtin.cat, builtin.err = FromSchema(v)
	})
	return builtin.cat, builtin.err
}

// FromSchema decodes the `catalog` field of the evaluated schema package.
func FromSchema(schema cue.Value) (*Catalog, error) {
	classes, err := DecodeClasses(schema.LookupPath(cue.ParsePath("catalog")))
	if err != nil {
		return nil, fmt.Errorf("built-in catalog: %w", err)
	}
	return New(classes)
}

// DecodeClasses decodes a CUE struct of classes keyed by id.
func DecodeClasses(v cue.Value) ([]Class, error) {
	if err := v.Validate(cue.Concrete(true)); err != nil {
		return nil, err
	}
	var m map[string]Class
	if err := v.Decode(&m); err != nil {
		return nil, err
	}
	out := make([]Class, 0, len(m))
	for id, c := range m {
		c.ID = id
		out = append(out, c)
	}
	return out, nil
}
