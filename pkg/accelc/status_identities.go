package accelc

// The users accelc's policies trust, checked against the cluster. The
// entitlement rule lets only cluster.kueueIdentities.manager lift Kueue's
// admission gate from a pod, and only a kind's controller
// (cluster.kueueIdentities.podControllers) make the accelerator pods of a
// kind Kueue admits whole. Naming someone the cluster does not run as
// refuses the real one: Kueue admits a pod that then never starts, a
// Job's pods are refused. Status says so before the first pod waits.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/accelc/accelc/pkg/compile"
)

// identityObjects is what status reads of the trusted users.
type identityObjects struct {
	// kueueNamespace is the namespace of the Service Kueue's webhooks
	// call ("" where unknown: no such configuration, or it calls a URL).
	kueueNamespace string
	// missing are the service accounts among the trusted users that the
	// API server says it does not have (NotFound); one it would not
	// tell of (forbidden, unreachable) is not counted missing.
	missing map[string]bool
}

// kueueMutatingWebhook is the MutatingWebhookConfiguration Kueue's
// manifests install.
const kueueMutatingWebhook = "kueue-mutating-webhook-configuration"

// jobKind is the key of cluster.kueueIdentities.podControllers for the
// Jobs of the batch API group.
const jobKind = "batch/Job"

// serviceAccountUser splits a service account's user name,
// system:serviceaccount:NAMESPACE:NAME.
func serviceAccountUser(user string) (ns, name string, ok bool) {
	rest, ok := strings.CutPrefix(user, "system:serviceaccount:")
	if !ok {
		return "", "", false
	}
	ns, name, ok = strings.Cut(rest, ":")
	return ns, name, ok && ns != "" && name != "" && !strings.Contains(name, ":")
}

// readIdentities reads where Kueue runs and which of the service accounts
// the configuration trusts (Kueue's manager, the Job controller) exist.
func (k *kube) readIdentities(ctx context.Context, ids compile.KueueIdentities) identityObjects {
	objs := identityObjects{missing: map[string]bool{}}
	var kueue mutatingWebhookConfiguration
	if err := k.get(ctx, "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/"+kueueMutatingWebhook, &kueue); err == nil {
		objs.kueueNamespace = kueue.namespace()
	}
	for _, user := range append(append([]string(nil), ids.Manager...), ids.PodControllers[jobKind]...) {
		ns, name, ok := serviceAccountUser(user)
		if !ok {
			continue
		}
		var sa struct{}
		if err := k.get(ctx, "/api/v1/namespaces/"+ns+"/serviceaccounts/"+name, &sa); apierrors.IsNotFound(err) {
			objs.missing[user] = true
		}
	}
	return objs
}

// identityNotes says where the users the policies trust are not who the
// cluster runs as: Kueue's webhooks served from a namespace none of
// cluster.kueueIdentities.manager's service accounts is in, or every one
// of them (or of the Job controller's) missing. Identities that are not
// service accounts (system:kube-controller-manager) cannot be checked and
// silence the check for their list.
func identityNotes(ids identityObjects, m *compile.Model, kueue bool) []string {
	var notes []string
	// accounts are the service accounts of users, nil where some user is
	// not one.
	accounts := func(users []string) (namespaces []string, all bool) {
		for _, u := range users {
			ns, _, ok := serviceAccountUser(u)
			if !ok {
				return nil, false
			}
			namespaces = append(namespaces, ns)
		}
		return namespaces, len(users) > 0
	}
	allMissing := func(users []string) bool {
		for _, u := range users {
			if !ids.missing[u] {
				return false
			}
		}
		return true
	}
	manager := m.Cluster.KueueIdentities.Manager
	const stuck = "accelc refuses the update by which Kueue lifts its admission gate from a pod it admits (only those users may), so the pods Kueue admits never start"
	if namespaces, all := accounts(manager); kueue && all {
		switch {
		case ids.kueueNamespace != "" && !slices.Contains(namespaces, ids.kueueNamespace):
			notes = append(notes, fmt.Sprintf("Kueue's webhooks (%s) call a Service in namespace %s, but cluster.kueueIdentities.manager names service accounts of %s: %s; set it to Kueue's controller manager's service account (system:serviceaccount:%s:NAME)",
				kueueMutatingWebhook, ids.kueueNamespace, strings.Join(namespaces, ", "), stuck, ids.kueueNamespace))
		case allMissing(manager):
			notes = append(notes, fmt.Sprintf("cluster.kueueIdentities.manager names no service account this cluster has (%s): %s; set it to the service account Kueue's controller manager runs as",
				strings.Join(manager, ", "), stuck))
		}
	}
	if jobs := m.Cluster.KueueIdentities.PodControllers[jobKind]; len(jobs) > 0 {
		if _, all := accounts(jobs); all && allMissing(jobs) {
			notes = append(notes, fmt.Sprintf(`cluster.kueueIdentities.podControllers[%q] names no service account this cluster has (%s): accelc refuses every pod holding accelerators that a Job makes, since only those users may make one; kube-controller-manager runs the Job controller as its own service account only with --use-service-account-credentials, and as system:kube-controller-manager otherwise: name the user it runs as`,
				jobKind, strings.Join(jobs, ", ")))
		}
	}
	return notes
}
