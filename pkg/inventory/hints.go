package inventory

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/accelc/accelc/pkg/catalog"
)

// Any GPU hint means a GPU node. Clouds, marketplaces and admins label GPU
// nodes in schemes accelc does not read: Akash providers
// (akash.network/capabilities.gpu.vendor.nvidia.model.a4000=true), AKS
// (kubernetes.azure.com/accelerator=nvidia), CoreWeave
// (gpu.nvidia.com/class=…), NFD rules of the vendors' operators
// (feature.node.kubernetes.io/amd-gpu=true), hand-made ones
// (accelerator=nvidia-tesla-k80). None names a catalog class for sure, but
// each says the node has GPUs: the node is of unknown type, with the
// vendor and, where the labels say, the model and the count.

// gpuWords mark a label as being about accelerators.
var gpuWords = map[string]bool{"gpu": true, "gpus": true, "vgpu": true, "accelerator": true, "accelerators": true, "cuda": true}

// vendorWords name a vendor, or a brand only one vendor has.
var vendorWords = map[string]string{
	"nvidia": "nvidia", "geforce": "nvidia", "quadro": "nvidia", "tesla": "nvidia",
	"amd": "amd", "radeon": "amd", "instinct": "amd",
	"intel": "intel", "habana": "intel", "gaudi": "intel",
}

// vendorDomains are label domains only a vendor's own components write.
var vendorDomains = map[string]string{
	"nvidia.com": "nvidia", "amd.com": "amd", "beta.amd.com": "amd",
	"habana.ai": "intel", "gpu.intel.com": "intel",
}

var tokenSplit = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9]+`) })

func tokens(s string) []string {
	return slices.DeleteFunc(tokenSplit().Split(strings.ToLower(s), -1), func(t string) bool { return t == "" })
}

// falsy values say a label does not apply.
func falsy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "0", "no", "none", "disabled", "absent":
		return true
	}
	return false
}

// modelWords end the keys whose value names a model.
var modelWords = map[string]bool{"model": true, "name": true, "product": true, "class": true, "type": true, "sku": true}

func detectHints(labels map[string]string, cat *catalog.Catalog) detection {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vendors := map[string]bool{}
	var first, model string
	own := false // the first hint is a vendor's own label (nvidia.com/…)
	count := 0
	for _, k := range keys {
		v := labels[k]
		if falsy(v) {
			continue
		}
		domain, _, ok := strings.Cut(k, "/")
		if !ok {
			domain = ""
		}
		kt, vt := tokens(k), tokens(v)
		all := append(slices.Clone(kt), vt...)
		vendor := vendorDomains[domain]
		gpu := slices.ContainsFunc(all, func(t string) bool { return gpuWords[t] })
		if vendor == "" && gpu {
			for _, t := range all {
				if w, ok := vendorWords[t]; ok {
					vendor = w
					break
				}
			}
		}
		m := hintModel(cat, kt, vt, v, gpu || vendor != "")
		if vendor == "" && m != "" {
			// A gpu word beside a catalog model: the model's vendor.
			if vs := modelVendors(cat, m); len(vs) == 1 {
				vendor = vs[0]
			}
		}
		if vendor == "" && !(gpu && m != "") {
			continue
		}
		if vendor != "" {
			vendors[vendor] = true
		}
		if first == "" {
			first = k + "=" + v
			own = vendorDomains[domain] != ""
		}
		if model == "" && m != "" {
			model = m
		}
		if count == 0 && (gpu || vendor != "") && len(kt) > 0 && kt[len(kt)-1] == "count" {
			count, _ = atoi(v)
		}
	}
	if first == "" {
		return detection{}
	}
	d := detection{model: model, count: count}
	names := make([]string, 0, len(vendors))
	for v := range vendors {
		names = append(names, v)
	}
	sort.Strings(names)
	if len(names) == 1 {
		d.vendor = names[0]
	}
	d.why = fmt.Sprintf("%s names a GPU in a scheme accelc does not read", first)
	if own {
		d.why = fmt.Sprintf("%s: a label of the vendor's own components, which names no model", first)
	}
	if len(names) > 1 {
		d.why += fmt.Sprintf(" (labels name %s)", strings.Join(names, " and "))
	}
	return d
}

// hintModel is the model a label about GPUs names: the word after "model"
// in a key whose value is true or a count (Akash), the value of a key whose
// last word is model, name, product, class or type, or a word of the value
// that is a catalog model.
func hintModel(cat *catalog.Catalog, kt, vt []string, value string, about bool) string {
	if !about || len(vt) == 0 {
		return ""
	}
	for i, t := range kt {
		if t == "model" && i+1 < len(kt) {
			if _, err := strconv.Atoi(vt[0]); err == nil || vt[0] == "true" {
				return kt[i+1]
			}
		}
	}
	if modelWords[kt[len(kt)-1]] {
		return strings.TrimSpace(value)
	}
	for _, t := range vt {
		if len(modelVendors(cat, t)) > 0 {
			return strings.ToUpper(t)
		}
	}
	return ""
}

// modelVendors are the vendors of the catalog classes whose model a hint
// names.
func modelVendors(cat *catalog.Catalog, model string) []string {
	var out []string
	for _, v := range []string{"amd", "intel", "nvidia"} {
		if len(cat.ByModel(v, model)) > 0 {
			out = append(out, v)
		}
	}
	return out
}
