package controlplane

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// GatekeeperValues are the values of Gatekeeper's Helm chart
// (charts/gatekeeper) that the harness knows how to install as the chart
// would, out of cluster: the audit's flags and the webhooks' scope. A
// values file with any other key is refused, so that a benchmark never
// measures a Gatekeeper installed other than as the values say.
type GatekeeperValues struct {
	AuditInterval                           *int                             `json:"auditInterval,omitempty"`
	AuditMatchKindOnly                      *bool                            `json:"auditMatchKindOnly,omitempty"`
	ValidatingWebhookCustomRules            []admissionv1.RuleWithOperations `json:"validatingWebhookCustomRules,omitempty"`
	ValidatingWebhookMatchConditions        []admissionv1.MatchCondition     `json:"validatingWebhookMatchConditions,omitempty"`
	ValidatingWebhookExemptNamespacesLabels map[string][]string              `json:"validatingWebhookExemptNamespacesLabels,omitempty"`
	MutatingWebhookCustomRules              []admissionv1.RuleWithOperations `json:"mutatingWebhookCustomRules,omitempty"`
	MutatingWebhookMatchConditions          []admissionv1.MatchCondition     `json:"mutatingWebhookMatchConditions,omitempty"`
	MutatingWebhookExemptNamespacesLabels   map[string][]string              `json:"mutatingWebhookExemptNamespacesLabels,omitempty"`
	DisableMutation                         bool                             `json:"disableMutation,omitempty"`
}

// ParseGatekeeperValues reads a values.yaml, refusing keys GatekeeperValues
// does not hold.
func ParseGatekeeperValues(data []byte) (GatekeeperValues, error) {
	var v GatekeeperValues
	if err := yaml.UnmarshalStrict(data, &v); err != nil {
		return v, fmt.Errorf("Gatekeeper's values: %w (the harness installs only the keys of controlplane.GatekeeperValues: teach internal/controlplane/gatekeepervalues.go the new one)", err)
	}
	return v, nil
}

// flags are the manager's flags the values set, after the harness's own:
// the last of a repeated flag wins.
func (v GatekeeperValues) flags() []string {
	var out []string
	if v.AuditInterval != nil {
		out = append(out, "--audit-interval="+strconv.Itoa(*v.AuditInterval))
	}
	if v.AuditMatchKindOnly != nil {
		out = append(out, "--audit-match-kind-only="+strconv.FormatBool(*v.AuditMatchKindOnly))
	}
	return out
}

// StartGatekeeperWithValues is StartGatekeeper with Gatekeeper installed
// as its Helm chart installs it with values: the audit's interval and
// kinds on the manager's command line, and the webhooks' rules,
// matchConditions and exempt namespaces as the chart's templates write
// them (failurePolicy stays Fail: a test must never pass because a call
// was skipped). With DisableMutation the chart registers no mutating
// webhook, and neither does this.
func (cp *ControlPlane) StartGatekeeperWithValues(t testing.TB, values []byte) *Gatekeeper {
	t.Helper()
	v, err := ParseGatekeeperValues(values)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := findGatekeeper()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true, and Gatekeeper is not there: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), gatekeeperStartTimeout)
	defer cancel()
	begin := time.Now()
	gk, err := cp.startGatekeeper(ctx, dir, v.flags()...)
	if err == nil {
		err = gk.scopeWebhooks(ctx, v)
	}
	if err != nil {
		t.Fatalf("starting Gatekeeper %s with values: %v", GatekeeperVersion, err)
	}
	t.Logf("gatekeeper %s with values (%v): webhook at %s, ready in %s", GatekeeperVersion, v.flags(), gk.webhook, time.Since(begin).Round(time.Millisecond))
	return gk
}

// scopeWebhooks rewrites the registered webhooks as the chart's templates
// do with the values: custom rules replace the default ones, each
// exempt-namespaces label becomes a NotIn expression of the namespace
// selector, match conditions are set.
func (gk *Gatekeeper) scopeWebhooks(ctx context.Context, v GatekeeperValues) error {
	client, err := kubernetes.NewForConfig(gk.cp.RESTConfig())
	if err != nil {
		return err
	}
	exempt := func(sel *metav1.LabelSelector, labels map[string][]string) {
		for _, key := range slices.Sorted(maps.Keys(labels)) {
			values := labels[key]
			sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOpNotIn, Values: values})
		}
	}
	mutating := client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	if v.DisableMutation {
		if err := mutating.Delete(ctx, MutatingWebhookName, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("disableMutation: deleting %s: %w", MutatingWebhookName, err)
		}
	} else {
		m, err := mutating.Get(ctx, MutatingWebhookName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range m.Webhooks {
			h := &m.Webhooks[i]
			if v.MutatingWebhookCustomRules != nil {
				h.Rules = v.MutatingWebhookCustomRules
			}
			h.MatchConditions = v.MutatingWebhookMatchConditions
			exempt(h.NamespaceSelector, v.MutatingWebhookExemptNamespacesLabels)
		}
		if _, err := mutating.Update(ctx, m, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("scoping %s: %w", MutatingWebhookName, err)
		}
	}
	validating := client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	c, err := validating.Get(ctx, ValidatingWebhookName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for i := range c.Webhooks {
		h := &c.Webhooks[i]
		if v.ValidatingWebhookCustomRules != nil {
			h.Rules = v.ValidatingWebhookCustomRules
		}
		h.MatchConditions = v.ValidatingWebhookMatchConditions
		exempt(h.NamespaceSelector, v.ValidatingWebhookExemptNamespacesLabels)
	}
	if _, err := validating.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("scoping %s: %w", ValidatingWebhookName, err)
	}
	return nil
}
