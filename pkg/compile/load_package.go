package compile

// Reading a cluster directory's CUE package: its files, its package
// clause, and the errors a wrong directory gives.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
)

// cuePackage is a cluster directory's CUE package, loaded but not yet
// evaluated, and the source its diagnostics point into.
type cuePackage struct {
	inst *build.Instance
	src  *source
}

// loadPackage loads the one CUE package of the cluster directory dir,
// with its module's imports. A directory that is not one package (none,
// two package names, every file excluded) or does not parse is an error
// that says what to do.
func loadPackage(dir string) (*cuePackage, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("cluster directory %s: %w", dir, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory: give the cluster directory that holds its .cue files", dir)
	}
	src := &source{cwd: cwd}
	insts := load.Instances([]string{"."}, &load.Config{Dir: abs})
	if len(insts) != 1 {
		return nil, Errors{{Msg: fmt.Sprintf("%s: expected one CUE package, found %d", dir, len(insts))}}
	}
	if err := insts[0].Err; err != nil {
		return nil, packageError(dir, abs, insts[0], src)
	}
	return &cuePackage{inst: insts[0], src: src}, nil
}

// packageError is the diagnostic for a package CUE could not load.
func packageError(dir, abs string, inst *build.Instance, src *source) error {
	err := inst.Err
	if !hasCUEFiles(abs) {
		return Errors{{Msg: fmt.Sprintf("%s: no .cue files: a cluster directory holds the cluster's CUE configuration (see examples/clusters)", dir)}}
	}
	if len(inst.Files) == 0 && len(inst.IgnoredFiles) > 0 {
		return Errors(excludedFiles(inst.IgnoredFiles, src))
	}
	var mp *load.MultiplePackageError
	if errors.As(err, &mp) && len(mp.Files) == 2 && len(mp.Packages) == 2 {
		at := Path{src: src, pos: packageClause(filepath.Join(abs, mp.Files[1]))}
		return Errors{{Path: at, Msg: fmt.Sprintf("package %s, but %s is package %s: the .cue files of a cluster directory are one package; give them one name",
			mp.Packages[1], mp.Files[0], mp.Packages[0])}}
	}
	if diags, ok := unclosedDiagnostics(err, src); ok {
		return Errors(diags)
	}
	return Errors(cueDiagnostics(err, src, &cueScope{files: inst.Files, module: inst.Module != ""}))
}

// packageClause is where file declares its package, else its first
// line.
func packageClause(file string) token.Pos {
	if f, err := parser.ParseFile(file, nil, parser.PackageClauseOnly); err == nil {
		for _, d := range f.Decls {
			if p, ok := d.(*ast.Package); ok {
				return p.Pos()
			}
		}
	}
	return token.NewFile(file, -1, 1).Pos(0, token.NoRelPos)
}

// packageName is the package file declares, "" for none (or a file that
// does not parse as far as its package clause).
func packageName(file string) string {
	f, err := parser.ParseFile(file, nil, parser.PackageClauseOnly)
	if err != nil {
		return ""
	}
	return f.PackageName()
}

// hasCUEFiles reports whether dir holds a .cue file.
func hasCUEFiles(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(entries, func(e os.DirEntry) bool {
		return !e.IsDir() && strings.HasSuffix(e.Name(), ".cue")
	})
}

// excludedFiles are the diagnostics for a directory whose .cue files CUE
// leaves all out of its package (a file without a package clause, or
// whose @if attribute is false), each at the file's first line.
func excludedFiles(files []*build.File, src *source) []Diagnostic {
	var out []Diagnostic
	for _, f := range files {
		at := Path{src: src, pos: token.NewFile(f.Filename, -1, 1).Pos(0, token.NoRelPos)}
		msg := "excluded from the cluster's package"
		if f.ExcludeReason != nil {
			msg += ": " + f.ExcludeReason.Error()
		}
		if f.ExcludeReason != nil && packageName(f.Filename) == "" {
			msg = "no package clause: start the file with `package <name>`, the same name in every .cue file of the cluster directory"
		}
		out = append(out, Diagnostic{Path: at, Msg: msg})
	}
	return out
}
