package compile

// Checking that the names accelc derives from the cluster's configuration
// are valid Kubernetes names.

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// checkKubernetesNames checks, with Kubernetes' own validation, the
// settings that become label keys and values in every rendered object:
// the label prefix, and the ids of the accelerator types the cluster
// defines (the type label's values). The rendered objects are checked
// again as a whole (render.Validate); these errors point at the setting.
func checkKubernetesNames(c *Cluster, accelerators []string, root Path) []Diagnostic {
	var out []Diagnostic
	prefix := root.Key("cluster").Key("labelPrefix")
	if errs := validation.IsDNS1123Subdomain(c.LabelPrefix); len(errs) > 0 {
		out = append(out, Diagnostic{Path: prefix, Msg: fmt.Sprintf(
			"%q is not a label key prefix (%s): use a DNS subdomain you own, such as accelerator.example.com",
			c.LabelPrefix, strings.Join(errs, "; "))})
	} else if errs := validation.IsQualifiedName(c.TypeLabel()); len(errs) > 0 {
		out = append(out, Diagnostic{Path: prefix, Msg: fmt.Sprintf(
			"the type label %q is not a label key (%s): shorten the prefix", c.TypeLabel(), strings.Join(errs, "; "))})
	}
	for _, id := range accelerators {
		if errs := validation.IsValidLabelValue(id); len(errs) > 0 {
			out = append(out, Diagnostic{Path: root.Key("accelerators").Key(id), Msg: fmt.Sprintf(
				"a type id is the value of the %s label on nodes, profiles and flavors, and this one is not a label value (%s): shorten it to 63 characters or fewer, as <vendor>-<model>-<memory>gb",
				c.TypeLabel(), strings.Join(errs, "; "))})
		}
	}
	return out
}
