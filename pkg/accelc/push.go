package accelc

// accelc push: the rendered tree published (pkg/publish does the work).

import (
	"context"

	"github.com/accelc/accelc/pkg/artifact"
	"github.com/accelc/accelc/pkg/publish"
)

// PushOptions say what to publish, where, and how to annotate and sign
// it (publish.Options).
type PushOptions = publish.Options

// GitCheckout is what the Git checkout a cluster directory is in says
// about the configuration's version (publish.GitCheckout).
type GitCheckout = publish.GitCheckout

// Push packs the rendered tree in opts.Dir as Flux's OCI artifact and
// pushes it, signing it where asked (publish.Push: `accelc push`, which
// runs it without the compiler).
func Push(ctx context.Context, opts PushOptions) (*artifact.Pushed, error) {
	return publish.Push(ctx, opts)
}

// Checkout reads the Git checkout dir is in; every field is empty where
// it is not in one (publish.Checkout).
func Checkout(dir string) GitCheckout { return publish.Checkout(dir) }
