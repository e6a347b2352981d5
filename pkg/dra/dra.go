// Package dra evaluates Dynamic Resource Allocation DeviceClass selectors
// with Kubernetes' own DRA CEL environment (k8s.io/dynamic-resource-allocation/cel,
// what the API server compiles a DeviceClass with and the scheduler's
// allocator evaluates it with). Its packages take some 8 ms of start-up
// and 12 MB, so accelc does not link it: accelc-policytest runs it for
// `accelc vet` and `render` (policytest.CheckSelectors).
package dra

import (
	"context"
	"fmt"
	"maps"
	"slices"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apiserver/pkg/cel/environment"
	dracel "k8s.io/dynamic-resource-allocation/cel"

	"github.com/accelc/accelc/pkg/compile"
)

// Compile compiles a selector as the API server does for a new
// DeviceClass, and checks its worst-case cost against the API server's
// limit.
func Compile(expr string) (dracel.CompilationResult, error) {
	env := environment.NewExpressions
	res := dracel.GetCompiler(dracel.Features{EnableConsumableCapacity: true}).CompileCELExpression(expr, dracel.Options{EnvType: &env})
	if res.Error != nil {
		return res, fmt.Errorf("%s", res.Error.Detail)
	}
	if res.MaxCost > resourceapi.CELSelectorExpressionMaxCost {
		return res, fmt.Errorf("its worst-case cost %d is over the API server's limit of %d for a selector: simplify it", res.MaxCost, resourceapi.CELSelectorExpressionMaxCost)
	}
	return res, nil
}

// Match reports whether the compiled selector selects the device.
func Match(ctx context.Context, res dracel.CompilationResult, dev compile.DRADevice) (bool, error) {
	ok, _, err := res.DeviceMatches(ctx, dracel.Device{Driver: dev.Driver, Attributes: dev.Attributes, Capacity: dev.Capacity})
	return ok, err
}

// Evaluate compiles each selector and evaluates it on each device (by
// name, as compile.SampleDevices gives them): which devices it selects,
// or why it does not compile.
func Evaluate(ctx context.Context, selectors map[string]string, devices map[string]compile.DRADevice) map[string]compile.SelectorOutcome {
	out := map[string]compile.SelectorOutcome{}
	for name, expr := range selectors {
		res, err := Compile(expr)
		if err != nil {
			out[name] = compile.SelectorOutcome{Error: err.Error()}
			continue
		}
		var o compile.SelectorOutcome
		for _, id := range slices.Sorted(maps.Keys(devices)) {
			ok, err := Match(ctx, res, devices[id])
			if err != nil {
				if o.EvalError == "" {
					o.EvalError = fmt.Sprintf("on %s: %v", id, err)
				}
				continue
			}
			if ok {
				o.Matches = append(o.Matches, id)
			}
		}
		out[name] = o
	}
	return out
}
