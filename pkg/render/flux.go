package render

// Flux objects that deliver the rendered tree from its repository or OCI
// artifact.

import (
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/kustomize"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/fluxmedia"
	"github.com/accelc/accelc/pkg/rendered"
	"github.com/accelc/accelc/policies"
)

// Folders that the root kustomization leaves out: they are applied on
// their own (rendered.Standalone says why).
const (
	DirConstraints = rendered.DirConstraints
	DirFlux        = rendered.DirFlux
	DirMonitoring  = rendered.DirMonitoring
)

// fluxObjects renders the OCIRepository that pulls the cluster's artifact
// and two Kustomizations that apply it: the tree, healthy once Gatekeeper
// has made the CRD from the admission template, then the constraint,
// which needs that CRD: in one Kustomization its server-side dry run would
// fail before anything is applied, every time.
func fluxObjects(m *compile.Model) ([]Object, error) {
	d := m.Cluster.Delivery
	if d == nil {
		return nil, nil
	}
	interval, err := time.ParseDuration(d.Interval)
	if err != nil {
		return nil, err
	}
	name := "accelc-" + m.Cluster.Name
	labels := managedLabels(m.Cluster.Name)

	repo := &fluxOCIRepository{OCIRepository: sourcev1.OCIRepository{
		TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.OCIRepositoryKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.Namespace, Labels: labels},
		Spec: sourcev1.OCIRepositorySpec{
			URL:           d.URL,
			Reference:     &sourcev1.OCIRepositoryRef{Tag: d.Ref.Tag, SemVer: d.Ref.Semver, Digest: d.Ref.Digest},
			LayerSelector: &sourcev1.OCILayerSelector{MediaType: fluxmedia.ContentMediaType, Operation: sourcev1.OCILayerExtract},
			Provider:      d.Provider,
			Insecure:      d.Insecure,
			Interval:      metav1.Duration{Duration: interval},
		},
	}}
	if d.SecretRef != "" {
		repo.Spec.SecretRef = &fluxmeta.LocalObjectReference{Name: d.SecretRef}
	}
	if v := d.Verify; v != nil {
		repo.Spec.Verify = &sourcev1.OCIRepositoryVerification{Provider: v.Provider}
		if v.SecretRef != "" {
			repo.Spec.Verify.SecretRef = &fluxmeta.LocalObjectReference{Name: v.SecretRef}
		}
		for _, id := range v.MatchOIDCIdentity {
			repo.Spec.Verify.MatchOIDCIdentity = append(repo.Spec.Verify.MatchOIDCIdentity, sourcev1.OIDCIdentityMatch{Issuer: id.Issuer, Subject: id.Subject})
		}
	}

	source := kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: name}
	retry := metav1.Duration{Duration: time.Minute}
	timeout := metav1.Duration{Duration: 5 * time.Minute}
	tree := newFluxKustomization(name, d.Namespace, labels, interval, source, "./")
	tree.Spec.RetryInterval, tree.Spec.Timeout = &retry, &timeout
	// Ready when Gatekeeper has made the constraint's CRD from the
	// template (status.created), failed when a Gatekeeper pod reports an
	// error compiling it. kstatus alone would call the template ready at
	// once: it has no conditions.
	tree.Spec.HealthChecks = []fluxmeta.NamespacedObjectKindReference{{
		APIVersion: "templates.gatekeeper.sh/v1", Kind: "ConstraintTemplate", Name: policies.Admission.Name,
	}}
	tree.Spec.HealthCheckExprs = []kustomize.CustomHealthCheck{{
		APIVersion: "templates.gatekeeper.sh/v1", Kind: "ConstraintTemplate",
		HealthCheckExpressions: kustomize.HealthCheckExpressions{
			Current: "has(status.created) && status.created",
			Failed:  "has(status.byPod) && status.byPod.exists(p, has(p.errors) && size(p.errors) > 0)",
		},
	}}
	constraints := newFluxKustomization(name+"-constraints", d.Namespace, labels, interval, source, "./"+DirConstraints)
	constraints.Spec.RetryInterval, constraints.Spec.Timeout = &retry, &timeout
	constraints.Spec.DependsOn = []kustomizev1.DependencyReference{{Name: name}}

	return []Object{{Dir: DirFlux, Body: repo}, {Dir: DirFlux, Body: tree}, {Dir: DirFlux, Body: constraints}}, nil
}

func newFluxKustomization(name, namespace string, labels map[string]string, interval time.Duration, source kustomizev1.CrossNamespaceSourceReference, path string) *fluxKustomization {
	return &fluxKustomization{Kustomization: kustomizev1.Kustomization{
		TypeMeta:   metav1.TypeMeta{APIVersion: kustomizev1.GroupVersion.String(), Kind: kustomizev1.KustomizationKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: kustomizev1.KustomizationSpec{
			SourceRef: source,
			Path:      path,
			Interval:  metav1.Duration{Duration: interval},
			Prune:     true,
		},
	}}
}

// fluxOCIRepository and fluxKustomization are Flux's objects as accelc writes
// them: without the status, a struct that encoding/json writes even when
// it is empty. The field hides the embedded type's.
type (
	fluxOCIRepository struct {
		sourcev1.OCIRepository
		Status struct{} `json:"status,omitzero"`
	}
	fluxKustomization struct {
		kustomizev1.Kustomization
		Status struct{} `json:"status,omitzero"`
	}
)
