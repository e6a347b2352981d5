package compile

import (
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/token"
	"github.com/stretchr/testify/assert"
)

// TestPath: a path prints as accelc's messages print it and is positioned
// where the user wrote it, or the nearest enclosing field they wrote,
// else where the schema gives it.
func TestPath(t *testing.T) {
	ctx := cuecontext.New()
	user := ctx.CompileString(`profiles: "a100-large": {
	acceleratorTypes: ["nvidia-a100-80gb", "nvidia-h100-80gb"]
}
teams: a: quota: x: 1
`, cue.Filename("/work/c/c.cue"))
	schema := ctx.CompileString(`profiles: [string]: gpu: max: *8 | int
teams: [string]: quota: [string]: int
`, cue.Filename("schemas/schema.cue"))
	src := &source{cwd: "/work", user: user, cfg: schema.Unify(user), built: true}
	profile := src.root().Key("profiles").Key("a100-large")

	for _, tc := range []struct {
		path        Path
		text, where string
	}{
		{profile, "profiles.a100-large", "c/c.cue:1:11"},
		{profile.Key("acceleratorTypes").Index(1), "profiles.a100-large.acceleratorTypes[1]", "c/c.cue:2:41"},
		// Left out by the user: at the nearest field they wrote.
		{profile.Key("gpu").Key("max"), "profiles.a100-large.gpu.max", "c/c.cue:1:11"},
		{profile.Key("acceleratorTypes").Index(5), "profiles.a100-large.acceleratorTypes[5]", "c/c.cue:2:2"},
		// Printed as the quota, positioned at its entry.
		{src.root().Key("teams").Key("a").Key("quota").At(src.root().Key("teams").Key("a").Key("quota").Key("x")), "teams.a.quota", "c/c.cue:4:18"},
		// Printed as the pool's nodes, positioned at the pool.
		{profile.Key("nodes").At(profile), "profiles.a100-large.nodes", "c/c.cue:1:11"},
		{Path{}, "", ""},
		{src.root(), "", ""},
	} {
		assert.Equal(t, tc.text, tc.path.String())
		assert.Equal(t, tc.where, tc.path.Where(), tc.text)
	}

	// A CUE error's path prints as CUE prints it, at the position given.
	pos := token.NewFile("/work/c/c.cue", -1, 100).Pos(0, token.NoRelPos)
	p := Path{src: src, cuePath: `profiles."Bad Profile".name`, pos: pos}
	assert.Equal(t, `profiles."Bad Profile".name`, p.String())
	assert.Equal(t, "c/c.cue:1:1", p.Where())
}

func TestDiagnosticString(t *testing.T) {
	ctx := cuecontext.New()
	user := ctx.CompileString("teams: a: priority: \"urgent\"\n", cue.Filename("/work/c/c.cue"))
	src := &source{cwd: "/work", user: user, cfg: user, built: true}
	at := src.root().Key("teams").Key("a").Key("priority")
	assert.Equal(t, "c/c.cue:1:11: teams.a.priority: urgent is not a class",
		Diagnostic{Path: at, Msg: "urgent is not a class"}.String())
	assert.Equal(t, "warning: inventory: 2 nodes", Diagnostic{Severity: Warning, Msg: "inventory: 2 nodes"}.String())
	assert.Equal(t, "x/c.cue: too big", Diagnostic{Pos: "x/c.cue", Msg: "too big"}.String(), "a position no path gives")
}
