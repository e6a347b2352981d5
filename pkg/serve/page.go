package serve

// The page for people: its template, and the data it is filled from.

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"time"

	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/inventory"
)

//go:embed assets/page.html.tmpl assets/page.css assets/page.js
var assets embed.FS

var pageTemplate = template.Must(template.New("page.html.tmpl").Funcs(template.FuncMap{
	"percent": percent,
}).ParseFS(assets, "assets/page.html.tmpl"))

var (
	pageCSS = mustAsset("assets/page.css")
	pageJS  = mustAsset("assets/page.js")
)

func mustAsset(name string) template.CSS {
	b, err := assets.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return template.CSS(b)
}

// pageData is what the page shows.
type pageData struct {
	Cluster   string
	Updated   string
	Refresh   int // milliseconds
	Counted   bool
	Profiles  []pageProfile
	Types     []pageType
	Attention []pageNode
	Warnings  []string
	CSS       template.CSS
	JS        template.JS
	// Login is the page's shell: no catalog, a form that asks for a
	// token (served to a browser without credentials, with Access).
	Login bool
	// NodesHidden leaves the nodes out, for a user who may not list
	// them.
	NodesHidden bool
}

type pageProfile struct {
	catalogdoc.Profile
	Capacity int
	Cost     string
	// Wait is "0 available — 2 pending — about 12 min" for a profile that
	// schedules through Kueue, and WaitMethod how the minutes were found.
	Wait, WaitMethod string
}

type pageType struct {
	inventory.TypeSummary
	Available int
	Nodes     []*inventory.Node
	// More counts the type's nodes past pageNodesPerType, which the page
	// leaves to /api/v1/nodes?type=.
	More int
	// All is the type's node count.
	All int
}

// pageNodesPerType bounds the rows the page shows of one type: a large
// cluster's page stays light, and the node view has them all.
const pageNodesPerType = 50

type pageNode struct {
	*inventory.Node
	Why string
}

// pageOptions say what of the page a user is shown.
type pageOptions struct {
	withoutNodes bool
}

// renderShell is the page without the catalog, which asks for a token
// and then fetches its main part with it.
func renderShell(refresh time.Duration) []byte {
	var b bytes.Buffer
	d := pageData{Refresh: int(refresh.Milliseconds()), CSS: pageCSS, JS: template.JS(pageJS), Login: true}
	if err := pageTemplate.ExecuteTemplate(&b, "page", d); err != nil {
		panic(fmt.Errorf("the page's template: %w", err))
	}
	return b.Bytes()
}

// renderPage is the whole page and its main part, which the page fetches
// to refresh itself.
func renderPage(v *view, refresh time.Duration, opts pageOptions) (page, fragment []byte) {
	d := pageData{
		Cluster:     v.doc.Cluster,
		Updated:     v.updated.Format(time.RFC3339),
		Refresh:     int(refresh.Milliseconds()),
		Counted:     v.inv.UsageKnown(),
		Warnings:    v.warnings,
		CSS:         pageCSS,
		JS:          template.JS(pageJS),
		NodesHidden: opts.withoutNodes,
	}
	for _, p := range v.doc.Profiles {
		pp := pageProfile{Profile: p, Cost: "—"}
		for _, t := range p.Types {
			pp.Capacity += t.GPUs
		}
		switch {
		case p.Sharing != nil:
			pp.Capacity, pp.Cost = p.Sharing.Devices, costText(p.Sharing.CostPerHour)
		case len(p.Types) > 0:
			pp.Cost = costText(p.Types[0].CostPerHour)
		}
		pp.Capacity = max(pp.Capacity, p.Available)
		pp.Wait, pp.WaitMethod = waitLine(p.Available, v.waiting[p.Name])
		d.Profiles = append(d.Profiles, pp)
	}
	for _, s := range v.inv.Summary() {
		if opts.withoutNodes {
			break
		}
		nodes := v.inv.ByType(s.AcceleratorType)
		t := pageType{TypeSummary: s, Available: s.Allocatable, Nodes: nodes, All: len(nodes)}
		if s.Available != nil {
			t.Available = *s.Available
		}
		if len(nodes) > pageNodesPerType {
			t.Nodes, t.More = nodes[:pageNodesPerType], len(nodes)-pageNodesPerType
		}
		d.Types = append(d.Types, t)
		if s.AcceleratorType == inventory.TypeUnknown || s.AcceleratorType == inventory.TypeMixed {
			for _, n := range nodes {
				why := "unknown type: pin it in cluster.nodes or fix its GPU Feature Discovery labels"
				if n.AcceleratorType == inventory.TypeMixed {
					why = "GPUs of several types: a type label cannot say which a pod gets"
				}
				d.Attention = append(d.Attention, pageNode{Node: n, Why: why})
			}
		}
	}
	var full, part bytes.Buffer
	if err := pageTemplate.ExecuteTemplate(&full, "page", d); err != nil {
		panic(fmt.Errorf("the page's template: %w", err))
	}
	if err := pageTemplate.ExecuteTemplate(&part, "main", d); err != nil {
		panic(fmt.Errorf("the page's template: %w", err))
	}
	return full.Bytes(), part.Bytes()
}

// waitLine is a profile's availability and wait in words, and the
// method of the estimate; empty for a profile without a queue.
func waitLine(available int, w *Waiting) (line, method string) {
	if w == nil {
		return "", ""
	}
	line = fmt.Sprintf("%d available", available)
	if w.Pending != nil {
		line += fmt.Sprintf(" — %d pending", *w.Pending)
	}
	switch e := w.Estimate; {
	case e.Minutes == nil:
		return line + " — wait unknown: " + e.Unknown, ""
	case *e.Minutes == 0:
		// "nothing pending and 3 available": the line says it.
		return line + " — no wait", ""
	default:
		return line + fmt.Sprintf(" — about %d min", *e.Minutes), e.Method
	}
}

func percent(n, of int) int {
	if of <= 0 {
		return 0
	}
	return min(100, n*100/of)
}

func costText(c *float64) string {
	if c == nil {
		return "—"
	}
	return fmt.Sprintf("$%.2f/h", *c)
}
