package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/accelc/accelc/internal/nodegen"
	"github.com/accelc/accelc/internal/testutil"
)

// BenchmarkCLI times accelc as a command beside crane, the two built here
// the same way (CGO_ENABLED=0, -trimpath, this module's versions: crane is
// go-containerregistry's, the Makefile's CRANE_VERSION), with accelc-core
// beside accelc as make build puts it (version and push never run it). Each iteration
// runs both, in turns, so load from elsewhere falls on both sides; the
// metrics are each side's mean and the ratios of the means and of the
// medians (ns/op is accelc's mean), and each side's minimum, median and
// 90th percentile.
//
//   - version: `accelc version` beside `crane version`, with each
//     binary's size and the sum of its package initialisation
//     (GODEBUG=inittrace=1, the mean of 10 runs apart from the timed ones).
//   - push: `accelc push` of the hetero-prod tree rendered against a
//     generated 5,000-node inventory beside `crane append` of the same tree
//     tarred as hack/bench-push.sh does, each into a new repository of the
//     distribution registry on 127.0.0.1, so every blob is uploaded; and
//     beside tar, gzip and crane append in one, the tarball made as a CI
//     job would have to make it (tar+crane-p50-ms, run after the two).
//
// make bench-cli runs it 30 times, make bench 20 times, make bench-once
// once.
func BenchmarkCLI(b *testing.B) {
	bin := b.TempDir()
	accelc, crane := filepath.Join(bin, "accelc"), filepath.Join(bin, "crane")
	for _, p := range []struct{ out, pkg string }{
		{accelc, "."},
		{filepath.Join(bin, "accelc-core"), "../accelc-core"},
		{crane, "github.com/google/go-containerregistry/cmd/crane"},
	} {
		cmd := exec.Command("go", "build", "-trimpath", "-o", p.out, p.pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", p.pkg, err, out)
		}
	}

	b.Run("version", func(b *testing.B) {
		// Once each untimed, so that neither pays for a cold page cache.
		timeRun(b, []string{accelc, "version"})
		timeRun(b, []string{crane, "version"})
		var t pair
		for i := 0; b.Loop(); i++ {
			t.run(b, i, []string{accelc, "version"}, []string{crane, "version"})
		}
		var inits pair
		for range 10 {
			inits.accelc = append(inits.accelc, initTime(b, accelc, "version"))
			inits.crane = append(inits.crane, initTime(b, crane, "version"))
		}
		t.report(b)
		b.ReportMetric(mean(inits.accelc), "accelc-init-ms")
		b.ReportMetric(mean(inits.crane), "crane-init-ms")
		b.ReportMetric(sizeMB(b, accelc), "accelc-MB")
		b.ReportMetric(sizeMB(b, crane), "crane-MB")
	})

	b.Run("push", func(b *testing.B) {
		addr := testutil.Registry(b)
		dir := b.TempDir()
		nodes, out, tgz := filepath.Join(dir, "nodes.json"), filepath.Join(dir, "out"), filepath.Join(dir, "tree.tgz")
		if err := os.WriteFile(nodes, nodegen.List(nodegen.Generated(5000)), 0o644); err != nil {
			b.Fatal(err)
		}
		// accelc hands render to accelc-core, built beside it.
		if msg, err := exec.Command(accelc, "render", "../../examples/clusters/hetero-prod", "--inventory", nodes, "--output-dir", out).CombinedOutput(); err != nil {
			b.Fatalf("render: %v\n%s", err, msg)
		}
		// GNU tar, sorted, no owners, zero times; gzip without a name or time.
		tar := exec.Command("sh", "-c", `tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$1" -cf - . | gzip -n > "$2"`, "sh", out, tgz)
		if msg, err := tar.CombinedOutput(); err != nil {
			b.Fatalf("tar: %v\n%s", err, msg)
		}
		// Once each untimed: the registry's first repository, a cold page
		// cache.
		timeRun(b, []string{accelc, "push", out, "oci://" + addr + "/warm-accelc:v1", "--created", "2026-11-20T09:30:00Z"})
		timeRun(b, []string{crane, "append", "-f", tgz, "-t", addr + "/warm-crane:v1"})
		// crane with the tarball it needs made first, as a CI job would
		// make it: tar and gzip, then crane append.
		tarThenCrane := `tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$1" -cf - . | gzip -n > "$2" && "$3" append -f "$2" -t "$4"`
		var t pair
		var withTar []time.Duration
		for i := 0; b.Loop(); i++ {
			repo := fmt.Sprintf("%s/bench-%d", addr, i)
			t.run(b, i,
				[]string{accelc, "push", out, "oci://" + repo + "-accelc:v1", "--created", "2026-11-20T09:30:00Z"},
				[]string{crane, "append", "-f", tgz, "-t", repo + "-crane:v1"})
			withTar = append(withTar, timeRun(b, []string{"sh", "-c", tarThenCrane, "sh", out, filepath.Join(dir, "made.tgz"), crane, repo + "-tar-crane:v1"}))
		}
		t.report(b)
		b.ReportMetric(quantile(withTar, 0.5), "tar+crane-p50-ms")
		b.ReportMetric(quantile(t.accelc, 0.5)/quantile(withTar, 0.5), "median-accelc/tar+crane")
	})
}

// pair is accelc's and crane's times over the iterations.
type pair struct {
	accelc, crane []time.Duration
}

// run times one run of each command, accelc first on even iterations and
// crane first on odd ones.
func (p *pair) run(b *testing.B, i int, accelc, crane []string) {
	b.Helper()
	if i%2 == 0 {
		p.accelc = append(p.accelc, timeRun(b, accelc))
		p.crane = append(p.crane, timeRun(b, crane))
	} else {
		p.crane = append(p.crane, timeRun(b, crane))
		p.accelc = append(p.accelc, timeRun(b, accelc))
	}
}

// report gives each side's mean, minimum, median and 90th percentile,
// and the ratios of the means, of the minimums and of the medians (the
// last two steadier where other work shares the machine).
func (p *pair) report(b *testing.B) {
	a, c := mean(p.accelc), mean(p.crane)
	b.ReportMetric(a*1e6, "ns/op")
	for _, side := range []struct {
		name string
		ds   []time.Duration
	}{{"accelc", p.accelc}, {"crane", p.crane}} {
		b.ReportMetric(mean(side.ds), side.name+"-ms")
		b.ReportMetric(quantile(side.ds, 0), side.name+"-min-ms")
		b.ReportMetric(quantile(side.ds, 0.5), side.name+"-p50-ms")
		b.ReportMetric(quantile(side.ds, 0.9), side.name+"-p90-ms")
	}
	b.ReportMetric(a/c, "accelc/crane")
	b.ReportMetric(quantile(p.accelc, 0)/quantile(p.crane, 0), "min-accelc/crane")
	b.ReportMetric(quantile(p.accelc, 0.5)/quantile(p.crane, 0.5), "median-accelc/crane")
}

// mean and quantile in milliseconds; quantile q of n times is the
// q·(n-1)th smallest, interpolated (0 the minimum, 0.5 the median).
func mean(ds []time.Duration) float64 {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum.Seconds() * 1e3 / float64(len(ds))
}

func quantile(ds []time.Duration, q float64) float64 {
	s := slices.Sorted(slices.Values(ds))
	pos := q * float64(len(s)-1)
	i := int(pos)
	m := s[i].Seconds()
	if i+1 < len(s) {
		m += (pos - float64(i)) * (s[i+1] - s[i]).Seconds()
	}
	return m * 1e3
}

// timeRun runs a command to the end and returns its wall time.
func timeRun(b *testing.B, args []string) time.Duration {
	b.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return d
}

// initTime runs a command with GODEBUG=inittrace=1 and sums the clock
// time of its packages' initialisation.
func initTime(b *testing.B, args ...string) time.Duration {
	b.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	// init PKG @T ms, D ms clock, B bytes, A allocs
	var total time.Duration
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 7 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		ms, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			b.Fatalf("inittrace line %q: %v", sc.Text(), err)
		}
		total += time.Duration(ms * float64(time.Millisecond))
	}
	return total
}

func sizeMB(b *testing.B, path string) float64 {
	b.Helper()
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return float64(st.Size()) / 1e6
}
