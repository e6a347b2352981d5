package compile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/schemas"
)

// writeTree writes files (path → content) under a new directory and
// returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return root
}

const testModule = "module: \"example.com/m@v0\"\nlanguage: version: \"v0.17.0\"\n"

// TestCUEProblems: each kind of CUE error is told from its path, its
// position and the values there, and gets its advice.
func TestCUEProblems(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		dir   string // the cluster directory under the tree; "c" if empty
		want  cueProblem
	}{
		"field not allowed":      {files: map[string]string{"c/c.cue": "package c\ncluster: name: \"n\"\ncluster: nmae: \"x\"\n"}, want: problemNotAllowed},
		"field not allowed deep": {files: map[string]string{"c/c.cue": "package c\ncluster: name: \"n\"\nprofiles: l4: {displayName: \"x\", acceleratorTypes: [\"nvidia-l4-24gb\"], sharing: 3}\n"}, want: problemNotAllowed},
		"incomplete":             {files: map[string]string{"c/c.cue": "package c\ncluster: name: string\n"}, want: problemIncomplete},
		"another kind":           {files: map[string]string{"c/c.cue": "package c\ncluster: name: \"n\"\nprofiles: l4: {displayName: \"x\", acceleratorTypes: [\"nvidia-l4-24gb\"], gpu: max: \"8\"}\n"}, want: problemKind},
		"two values":             {files: map[string]string{"c/c.cue": "package c\ncluster: name: \"a\"\ncluster: name: \"b\"\n"}, want: problemConflict},
		"name from a key":        {files: map[string]string{"c/c.cue": "package c\ncluster: name: \"n\"\nprofiles: \"Bad Profile\": {displayName: \"x\", acceleratorTypes: [\"nvidia-l4-24gb\"]}\n"}, want: problemName},
		"out of bounds":          {files: map[string]string{"c/c.cue": "package c\ncluster: name: \"n\"\nprofiles: l4: {displayName: \"x\", acceleratorTypes: [\"nvidia-l4-24gb\"], gpu: max: -3}\n"}, want: problemBound},
		"one of":                 {files: map[string]string{"c/c.cue": "package c\ncluster: name: \"n\"\ncluster: enforcement: \"block\"\n"}, want: problemOneOf},
		"structural cycle":       {files: map[string]string{"c/c.cue": "package c\ncluster: name: \"n\"\na: b: a\n"}, want: problemCycle},
		"import, no module":      {files: map[string]string{"c/c.cue": "package c\n\nimport \"example.com/nothere\"\n\ncluster: name: \"n\"\nx: nothere.a\n"}, want: problemImportNoModule},
		"import, no package": {files: map[string]string{"cue.mod/module.cue": testModule,
			"c/c.cue": "package c\n\nimport \"example.com/m/nothere\"\n\ncluster: name: \"n\"\nx: nothere.a\n"}, want: problemImport},
		"embed, no module": {files: map[string]string{"c/c.cue": "@extern(embed)\npackage c\n\ncluster: name: \"n\"\nx: _ @embed(file=\"missing.json\")\n"}, want: problemEmbedNoModule},
		"embed, no file": {files: map[string]string{"cue.mod/module.cue": testModule,
			"c/c.cue": "@extern(embed)\npackage c\n\ncluster: name: \"n\"\nx: _ @embed(file=\"missing.json\")\n"}, want: problemEmbed},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(writeTree(t, tc.files), "c")
			_, err := loadUnbounded(dir)
			require.Error(t, err)
			var errs Errors
			require.ErrorAs(t, err, &errs)
			require.Len(t, errs, 1, "one diagnostic: %v", err)
			assert.True(t, strings.Contains(errs[0].Msg, tc.want.hint()), "%q lacks the advice %q", errs[0].Msg, tc.want.hint())
			assert.True(t, errs[0].Path.Position().IsValid(), "no position: %s", errs[0])
		})
	}
}

// TestCUEOneOf: a value none of the schema's choices is one message that
// lists them, not one per branch of the disjunction nor CUE's summary.
func TestCUEOneOf(t *testing.T) {
	dir := writeTree(t, map[string]string{"c.cue": "package c\ncluster: name: \"n\"\ncluster: enforcement: \"block\"\n"})
	_, err := loadUnbounded(dir)
	require.Error(t, err)
	assert.Equal(t, filepath.ToSlash(relTo(t, dir))+`/c.cue:3:23: cluster.enforcement: "block" is not one of "dryrun", "warn", "deny": write one of them`, err.Error())
}

func relTo(t *testing.T, dir string) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	rel, err := filepath.Rel(wd, dir)
	require.NoError(t, err)
	return rel
}

// rewordedError is a CUE error at a path with a message no CUE release
// wrote: what classify makes of it must not depend on the words.
type rewordedError struct {
	path []string
	pos  token.Pos
}

func (e rewordedError) Error() string                            { return "something CUE never said" }
func (e rewordedError) Position() token.Pos                      { return e.pos }
func (e rewordedError) InputPositions() []token.Pos              { return nil }
func (e rewordedError) Path() []string                           { return e.path }
func (e rewordedError) Msg() (format string, args []interface{}) { return "reworded %d", []any{7} }

// TestCUEProblemsIgnoreWording: the same paths and values give the same
// problems whatever the errors say.
func TestCUEProblemsIgnoreWording(t *testing.T) {
	dir := writeTree(t, map[string]string{"c.cue": "package c\ncluster: name: \"n\"\ncluster: nmae: \"x\"\ncluster: enforcement: \"block\"\nprofiles: l4: {displayName: \"x\", acceleratorTypes: [\"nvidia-l4-24gb\"], gpu: max: \"8\"}\nprofiles: l5: {displayName: \"x\", acceleratorTypes: [\"nvidia-l4-24gb\"], gpu: max: -1}\n"})
	pkg, err := loadPackage(dir)
	require.NoError(t, err)
	ctx := cuecontext.New()
	schema, err := schemas.Build(ctx)
	require.NoError(t, err)
	scope := &cueScope{files: pkg.inst.Files, schema: schema.LookupPath(cue.ParsePath("#Config"))}
	scope.user = ctx.BuildInstance(pkg.inst)
	scope.cfg = scope.schema.Unify(scope.user)
	for path, want := range map[string]cueProblem{
		"cluster.nmae":        problemNotAllowed,
		"cluster.enforcement": problemOneOf,
		"profiles.l4.gpu.max": problemKind,
		"profiles.l5.gpu.max": problemBound,
		"cluster.name":        problemOther, // a valid value: no advice
	} {
		e := rewordedError{path: append([]string{"#Config"}, strings.Split(path, ".")...)}
		var _ cueerrors.Error = e
		assert.Equal(t, want, scope.classify(e, strings.Split(path, ".")), path)
	}
}

// TestUnclosedBrace: a missing } is reported where CUE reports it, the
// end of the file, and where the { it lacks opened.
func TestUnclosedBrace(t *testing.T) {
	dir := writeTree(t, map[string]string{"c.cue": "package c\n\nx: \"a\\(1+2)b\"\ncluster: {\n\tname: \"n\"\n\tprofiles: {\n\t}\n"})
	_, err := loadUnbounded(dir)
	require.Error(t, err)
	rel := filepath.ToSlash(relTo(t, dir))
	assert.Contains(t, err.Error(), rel+"/c.cue:")
	assert.Contains(t, err.Error(), "the { at "+rel+"/c.cue:4:10 is never closed: add its }")
}
