package render

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// Open Data Hub's HardwareProfile, infrastructure.opendatahub.io/v1.
type hardwareProfile struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Metadata   meta    `json:"metadata"`
	Spec       hwpSpec `json:"spec"`
}

type hwpSpec struct {
	Identifiers []identifier `json:"identifiers"`
	Scheduling  *scheduling  `json:"scheduling,omitempty"`
}

type identifier struct {
	DisplayName  string            `json:"displayName"`
	Identifier   string            `json:"identifier"`
	MinCount     compile.Quantity  `json:"minCount"`
	MaxCount     *compile.Quantity `json:"maxCount,omitempty"`
	DefaultCount compile.Quantity  `json:"defaultCount"`
	ResourceType string            `json:"resourceType"`
}

type scheduling struct {
	Type string          `json:"type"`
	Node *nodeScheduling `json:"node,omitempty"`
}

type nodeScheduling struct {
	NodeSelector map[string]string    `json:"nodeSelector,omitempty"`
	Tolerations  []compile.Toleration `json:"tolerations,omitempty"`
}

// Annotations accelc puts on HardwareProfiles, under the cluster's label
// prefix. Policies and mutations key on them.
const (
	// AnnotationTypes lists the profile's types in preference order,
	// comma-separated; absent on a generic profile.
	AnnotationTypes = "types"
)

func intQ(n int) compile.Quantity { return compile.Quantity{Int: int64(n)} }

// hardwareProfiles renders one HardwareProfile per profile.
//
// A single-type profile selects its nodes with the normalized type label.
// A multi-type profile cannot be a node selector (the v1 API holds no
// affinity): its types go in the types annotation, in preference order,
// for accelc's admission mutation to turn into required and preferred
// node affinity. A generic profile selects only what the admin wrote.
func hardwareProfiles(m *compile.Model) ([]Object, error) {
	var out []Object
	for i := range m.Profiles {
		p := &m.Profiles[i]
		visibility, err := json.Marshal(nonNil(p.Visibility))
		if err != nil {
			return nil, err
		}
		ann := map[string]string{
			"opendatahub.io/display-name":                 p.DisplayName,
			"opendatahub.io/disabled":                     strconv.FormatBool(!p.Enabled),
			"opendatahub.io/dashboard-feature-visibility": string(visibility),
		}
		if p.Description != "" {
			ann["opendatahub.io/description"] = p.Description
		}
		if !p.Generic() {
			ann[m.Cluster.LabelPrefix+"/"+AnnotationTypes] = strings.Join(p.AcceleratorTypes, ",")
		}

		ids := []identifier{
			rangeIdentifier("CPU", "cpu", "CPU", p.CPU),
			rangeIdentifier("Memory", "memory", "Memory", p.Memory),
		}
		if p.GPU.Max == nil || *p.GPU.Max > 0 {
			acc := identifier{
				DisplayName:  acceleratorName(p),
				Identifier:   p.ResourceName,
				MinCount:     intQ(p.GPU.Min),
				DefaultCount: intQ(p.GPU.Default),
				ResourceType: "Accelerator",
			}
			if p.GPU.Max != nil {
				q := intQ(*p.GPU.Max)
				acc.MaxCount = &q
			}
			ids = append(ids, acc)
		}

		selector := map[string]string{}
		for k, v := range p.NodeSelector {
			selector[k] = v
		}
		if len(p.AcceleratorTypes) == 1 {
			if v, ok := selector[m.Cluster.TypeLabel()]; ok && v != p.AcceleratorTypes[0] {
				return nil, fmt.Errorf("profile %s: nodeSelector sets %s=%s but the profile's type is %s: drop it from nodeSelector",
					p.Name, m.Cluster.TypeLabel(), v, p.AcceleratorTypes[0])
			}
			selector[m.Cluster.TypeLabel()] = p.AcceleratorTypes[0]
		}
		var sched *scheduling
		if len(selector) > 0 || len(p.Tolerations) > 0 {
			ns := &nodeScheduling{Tolerations: p.Tolerations}
			if len(selector) > 0 {
				ns.NodeSelector = selector
			}
			sched = &scheduling{Type: "Node", Node: ns}
		}

		out = append(out, Object{
			Dir:        "profiles",
			APIVersion: "infrastructure.opendatahub.io/v1",
			Kind:       "HardwareProfile",
			Namespace:  m.Cluster.ProfileNamespace,
			Name:       p.Name,
			Body: hardwareProfile{
				APIVersion: "infrastructure.opendatahub.io/v1",
				Kind:       "HardwareProfile",
				Metadata: meta{
					Name:        p.Name,
					Namespace:   m.Cluster.ProfileNamespace,
					Labels:      managedLabels(m.Cluster.Name),
					Annotations: ann,
				},
				Spec: hwpSpec{Identifiers: ids, Scheduling: sched},
			},
		})
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func rangeIdentifier(display, id, typ string, r compile.Range) identifier {
	return identifier{DisplayName: display, Identifier: id, MinCount: r.Min, MaxCount: r.Max, DefaultCount: r.Default, ResourceType: typ}
}

// acceleratorName is what the dashboard shows for the accelerator
// identifier: the type's display name, or the types joined by " or ".
func acceleratorName(p *compile.Profile) string {
	if p.Generic() {
		return "GPU"
	}
	names := make([]string, len(p.Classes))
	for i, c := range p.Classes {
		names[i] = c.DisplayName
	}
	return strings.Join(names, " or ")
}

// CatalogConfigMapName is the ConfigMap model-serving and estimation
// tools read.
const CatalogConfigMapName = "accelc-hardware-catalog"

// CatalogDocument is the JSON document in the catalog ConfigMap, under
// key catalog.json: per profile, its accelerator types with their metadata
// and availability at render time.
type CatalogDocument struct {
	// SchemaVersion names this document's shape; a change that breaks
	// readers gets a new version.
	SchemaVersion string           `json:"schemaVersion"`
	Cluster       string           `json:"cluster"`
	TypeLabel     string           `json:"typeLabel"`
	Profiles      []CatalogProfile `json:"profiles"`
}

// CatalogSchemaVersion is the catalog document's current schema.
const CatalogSchemaVersion = "accelc.io/catalog/v1"

// CatalogProfile is one profile of the catalog document. AcceleratorType,
// Memory and Architecture describe its first (preferred) type, as the
// seed's AC-005 response shows them; Types lists them all.
type CatalogProfile struct {
	Name            string           `json:"name"`
	DisplayName     string           `json:"displayName"`
	Enabled         bool             `json:"enabled"`
	AcceleratorType string           `json:"acceleratorType"`
	Memory          string           `json:"memory,omitempty"`
	Architecture    string           `json:"architecture,omitempty"`
	ResourceName    string           `json:"resourceName"`
	GPU             compile.GPURange `json:"gpu"`
	Types           []CatalogType    `json:"types"`
	// Available sums allocatable devices on Ready nodes of the types (for
	// a generic profile: of every node with the resource).
	Available int    `json:"available"`
	Summary   string `json:"summary"`
}

// CatalogType is an accelerator class as estimation and serving tools
// need it, with its availability.
type CatalogType struct {
	ID                  string  `json:"id"`
	DisplayName         string  `json:"displayName"`
	Vendor              string  `json:"vendor"`
	Architecture        string  `json:"architecture"`
	Memory              string  `json:"memory"`
	MemoryGB            int     `json:"memoryGB"`
	ComputeCapability   string  `json:"computeCapability,omitempty"`
	FP16TFLOPS          float64 `json:"fp16TFLOPS,omitempty"`
	BF16TFLOPS          float64 `json:"bf16TFLOPS,omitempty"`
	MemoryBandwidthGBps float64 `json:"memoryBandwidthGBps,omitempty"`
	// CostPerHour is one device's hourly cost, when the admin set one.
	CostPerHour *float64 `json:"costPerHour,omitempty"`
	// Performance is what models measured on the type, by model name.
	Performance map[string]catalog.Performance `json:"performance,omitempty"`
	Nodes       int                            `json:"nodes"`
	GPUs        int                            `json:"gpus"`
	// Available is allocatable on Ready nodes, less what pods use when
	// the inventory counted them.
	Available int `json:"available"`
}

// Catalog builds the catalog document of a cluster and its inventory:
// what the catalog ConfigMap holds and `accelc catalog` prints.
func Catalog(m *compile.Model, inv *inventory.Inventory) CatalogDocument {
	perType := map[string]inventory.TypeSummary{}
	for _, s := range inv.Summary() {
		perType[s.AcceleratorType] = s
	}
	doc := CatalogDocument{SchemaVersion: CatalogSchemaVersion, Cluster: m.Cluster.Name, TypeLabel: m.Cluster.TypeLabel(), Profiles: []CatalogProfile{}}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		cp := CatalogProfile{
			Name:         p.Name,
			DisplayName:  p.DisplayName,
			Enabled:      p.Enabled,
			ResourceName: p.ResourceName,
			GPU:          p.GPU,
			Types:        []CatalogType{},
		}
		for _, c := range p.Classes {
			s := perType[c.ID]
			available := s.Allocatable
			if s.Available != nil {
				available = *s.Available
			}
			cp.Types = append(cp.Types, CatalogType{
				ID: c.ID, DisplayName: c.DisplayName, Vendor: c.Vendor, Architecture: c.Architecture,
				Memory: strconv.Itoa(c.MemoryGB) + "GB", MemoryGB: c.MemoryGB, ComputeCapability: c.ComputeCapability,
				FP16TFLOPS: c.FP16TFLOPS, BF16TFLOPS: c.BF16TFLOPS, MemoryBandwidthGBps: c.MemoryBandwidthGBps,
				CostPerHour: c.CostPerHour, Performance: c.Performance,
				Nodes: s.Nodes, GPUs: s.GPUs, Available: available,
			})
			cp.Available += available
		}
		if len(p.Classes) > 0 {
			first := p.Classes[0]
			cp.AcceleratorType = first.ID
			cp.Memory = strconv.Itoa(first.MemoryGB) + "GB"
			cp.Architecture = first.Architecture
		} else {
			cp.AcceleratorType = "generic"
			for j := range inv.Nodes {
				n := &inv.Nodes[j]
				if resourceOf(m.Catalog, n) == p.ResourceName {
					cp.Available += n.Free()
				}
			}
		}
		cp.Summary = fmt.Sprintf("%s (%s) - %d available", p.DisplayName, acceleratorName(p), cp.Available)
		if p.Generic() {
			cp.Summary = fmt.Sprintf("%s - %d available", p.DisplayName, cp.Available)
		} else if cost := p.Classes[0].CostPerHour; cost != nil {
			// As the seed's dashboard shows it: "… - 6 available - $1.50/hour".
			cp.Summary += fmt.Sprintf(" - $%.2f/hour", *cost)
		}
		doc.Profiles = append(doc.Profiles, cp)
	}
	return doc
}

func catalogConfigMap(m *compile.Model, inv *inventory.Inventory) (Object, error) {
	data, err := json.MarshalIndent(Catalog(m, inv), "", "  ")
	if err != nil {
		return Object{}, err
	}
	body := map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": meta{
			Name:      CatalogConfigMapName,
			Namespace: m.Cluster.ProfileNamespace,
			Labels:    managedLabels(m.Cluster.Name),
		},
		"data": map[string]string{"catalog.json": string(data) + "\n"},
	}
	return Object{Dir: "profiles", APIVersion: "v1", Kind: "ConfigMap", Namespace: m.Cluster.ProfileNamespace, Name: CatalogConfigMapName, Body: body}, nil
}

// resourceOf is the extended resource a node's accelerators are requested
// by: its class's, or its vendor's default for unknown types.
func resourceOf(cat *catalog.Catalog, n *inventory.Node) string {
	if c, ok := cat.Get(n.AcceleratorType); ok {
		return c.ResourceName
	}
	return catalog.DefaultResourceName(n.Vendor)
}
