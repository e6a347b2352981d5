package serve

// The count's documents as the API serves them: the view a count makes,
// and the JSON of each answer.

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/estimate"
	"github.com/accelc/accelc/pkg/inventory"
)

// view is everything a count gives, ready to serve: the documents are
// encoded once per count, not once per request.
type view struct {
	inv *inventory.Inventory
	// placed is the model placed on inv, which the catalog is counted
	// from and the next count places a node change on.
	placed   *compile.Placed
	doc      catalogdoc.Document
	updated  time.Time
	warnings []string
	profiles encoded // /api/v1/profiles
	nodes    encoded // /api/v1/nodes without filters
	// rows are each node's JSON in nodes.body, by inv.Nodes' index; a
	// filtered node view is put together from them (nodeViews).
	rows      [][]byte
	rowIndex  map[string]int
	filtered  *nodeViews
	page      encoded // /
	fragment  encoded // the page's refreshed part
	byProfile map[string]encoded
	// waiting is what waits for each profile that schedules through
	// Kueue; live is the catalog's profiles with it.
	waiting map[string]*Waiting
	live    []liveProfile
	// figures are, for each team whose quota use the catalog counts, its
	// namespaces; podNamespaces are the namespaces whose pods hold
	// devices on a node (inUseByNamespace). Both sorted: who may not list
	// pods in one is not told what it holds (scoped.go).
	figures       map[string][]string
	teamNS        []string
	podNamespaces []string
}

// liveProfile is a catalog profile as the API serves it: with what
// waits for it.
type liveProfile struct {
	catalogdoc.Profile
	// Waiting is absent for a profile that does not schedule through
	// Kueue.
	Waiting *Waiting `json:"waiting,omitempty"`
}

// Meta says how fresh a response is.
type Meta struct {
	APIVersion string    `json:"apiVersion"`
	Cluster    string    `json:"cluster"`
	UpdatedAt  time.Time `json:"updatedAt"`
	// PodsCounted says availability subtracts what pods hold.
	PodsCounted bool     `json:"podsCounted"`
	Warnings    []string `json:"warnings,omitempty"`
}

func (v *view) meta() Meta {
	return Meta{APIVersion: APIVersion, Cluster: v.doc.Cluster, UpdatedAt: v.updated, PodsCounted: v.inv.UsageKnown(), Warnings: v.warnings}
}

type profilesResponse struct {
	Meta Meta `json:"meta"`
	catalogdoc.Document
	// Profiles are the document's, with what waits for each.
	Profiles []liveProfile `json:"profiles"`
}

type profileResponse struct {
	Meta    Meta        `json:"meta"`
	Profile liveProfile `json:"profile"`
}

type nodesBody struct {
	Meta     Meta                    `json:"meta"`
	Nodes    []inventory.Node        `json:"nodes"`
	Summary  []inventory.TypeSummary `json:"summary"`
	Problems []inventory.Problem     `json:"problems,omitempty"`
}

func nodesResponse(v *view, inv *inventory.Inventory) nodesBody {
	out := nodesBody{Meta: v.meta(), Nodes: inv.Nodes, Summary: inv.Summary(), Problems: inv.Problems}
	if out.Nodes == nil {
		out.Nodes = []inventory.Node{}
	}
	return out
}

// nodesJSON is nodesResponse(v, inv) encoded, put together field by field
// so that each node's row can be cut from it (rows, by inv.Nodes' index)
// and a filtered view, or the next count's, put together from the rows
// without encoding a node again: kept, where given, is the row kept for a
// node, nil for one to encode. With shown, a node's inUseByNamespace
// keeps only those namespaces: a node with another is encoded again.
func nodesJSON(v *view, inv *inventory.Inventory, kept func(*inventory.Node) []byte, shown map[string]bool) (body []byte, rows [][]byte) {
	resp := nodesResponse(v, inv)
	var b bytes.Buffer
	b.WriteString(`{"meta":`)
	b.Write(mustJSON(resp.Meta))
	b.WriteString(`,"nodes":[`)
	ends := make([]int, 0, len(resp.Nodes))
	for i := range resp.Nodes {
		if i > 0 {
			b.WriteByte(',')
		}
		n := &resp.Nodes[i]
		if shown != nil && hidesSome(n.InUseBy, shown) {
			b.Write(mustJSON(scopedNode(n, shown)))
		} else if row := keptRow(kept, n); row != nil {
			b.Write(row)
		} else {
			b.Write(mustJSON(n))
		}
		ends = append(ends, b.Len())
	}
	b.WriteString(`],"summary":`)
	b.Write(mustJSON(resp.Summary))
	if len(resp.Problems) > 0 {
		b.WriteString(`,"problems":`)
		b.Write(mustJSON(resp.Problems))
	}
	b.WriteByte('}')
	body = b.Bytes()
	rows = make([][]byte, len(ends))
	start := bytes.Index(body, []byte(`"nodes":[`)) + len(`"nodes":[`)
	for i, end := range ends {
		rows[i] = body[start:end:end]
		start = end + 1
	}
	return body, rows
}

// keptRow is kept's row for n, nil without kept.
func keptRow(kept func(*inventory.Node) []byte, n *inventory.Node) []byte {
	if kept == nil {
		return nil
	}
	return kept(n)
}

// row is a node's row in the unfiltered view (rows).
func (v *view) row(n *inventory.Node) []byte { return v.rows[v.rowIndex[n.Name]] }

type recommendResponse struct {
	Meta Meta `json:"meta"`
	estimate.Recommendation
}

// estimateResponse is accelc estimate -o json's document, with meta.
type estimateResponse struct {
	Meta Meta `json:"meta"`
	estimate.Report
}

// Error is every error response's body.
type Error struct {
	Error string `json:"error"`
	// Field is the query parameter at fault, when one is.
	Field string `json:"field,omitempty"`
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Every type served is plain data: this is a bug.
		panic(err)
	}
	return b
}
