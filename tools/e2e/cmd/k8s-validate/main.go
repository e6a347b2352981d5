// Command k8s-validate runs Kubernetes' own create-time validation over
// objects, as the API server does before any admission webhook sees them:
// decoded with the API server's defaulting, prepared and validated by the
// registry's strategy of their kind. accelc's escape check keeps only the
// pods and workloads a real API server would accept.
//
// It reads one JSON object per line on stdin and writes one line per
// object on stdout: empty when it is valid, else the errors. A kind it
// does not know is reported as such.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/capabilities"
	"k8s.io/kubernetes/pkg/registry/apps/daemonset"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/apps/replicaset"
	"k8s.io/kubernetes/pkg/registry/apps/statefulset"
	"k8s.io/kubernetes/pkg/registry/batch/cronjob"
	"k8s.io/kubernetes/pkg/registry/batch/job"
	"k8s.io/kubernetes/pkg/registry/core/pod"
)

// kinds are the kinds it validates: the registry's strategy and the
// request a create of one is.
var kinds = map[string]struct {
	strategy                 rest.RESTCreateStrategy
	group, version, resource string
}{
	"Pod":         {pod.Strategy, "", "v1", "pods"},
	"Deployment":  {deployment.Strategy, "apps", "v1", "deployments"},
	"StatefulSet": {statefulset.Strategy, "apps", "v1", "statefulsets"},
	"ReplicaSet":  {replicaset.Strategy, "apps", "v1", "replicasets"},
	"DaemonSet":   {daemonset.Strategy, "apps", "v1", "daemonsets"},
	"Job":         {job.Strategy, "batch", "v1", "jobs"},
	"CronJob":     {cronjob.Strategy, "batch", "v1", "cronjobs"},
}

func main() {
	// As the end-to-end tests' API server and most clusters run:
	// privileged containers are the API server's to allow and admission's
	// to govern.
	capabilities.Initialize(capabilities.Capabilities{AllowPrivileged: true})
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		fmt.Fprintln(out, oneLine(validate(in.Bytes())))
		if err := out.Flush(); err != nil {
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "k8s-validate:", err)
		os.Exit(1)
	}
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

func validate(raw []byte) string {
	var head struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return "not JSON: " + err.Error()
	}
	k, ok := kinds[head.Kind]
	if !ok {
		return "kind " + head.Kind + " is not one k8s-validate knows"
	}
	obj, err := runtime.Decode(legacyscheme.Codecs.UniversalDecoder(), raw)
	if err != nil {
		return err.Error()
	}
	ctx := genericapirequest.WithNamespace(context.Background(), head.Metadata.Namespace)
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: "create", APIGroup: k.group, APIVersion: k.version,
		Resource: k.resource, Namespace: head.Metadata.Namespace, Name: head.Metadata.Name,
	})
	// The API server has given the object its UID before the strategy
	// prepares it (a Job's selector is made from it).
	if acc, err := meta.Accessor(obj); err == nil && acc.GetUID() == "" {
		acc.SetUID("00000000-0000-0000-0000-000000000001")
	}
	// A pod's ephemeral containers come by the pods/ephemeralcontainers
	// subresource, after it is made: the pod is created without them,
	// then updated with them, each step validated as the API server does.
	var ephemeral []api.EphemeralContainer
	if p, ok := obj.(*api.Pod); ok {
		ephemeral, p.Spec.EphemeralContainers = p.Spec.EphemeralContainers, nil
	}
	k.strategy.PrepareForCreate(ctx, obj)
	errs := k.strategy.Validate(ctx, obj)
	if p, ok := obj.(*api.Pod); ok && len(errs) == 0 && len(ephemeral) > 0 {
		updated := p.DeepCopy()
		updated.Spec.EphemeralContainers = ephemeral
		updated.ResourceVersion, p.ResourceVersion = "2", "1"
		pod.EphemeralContainersStrategy.PrepareForUpdate(ctx, updated, p)
		errs = pod.EphemeralContainersStrategy.ValidateUpdate(ctx, updated, p)
	}
	if len(errs) == 0 {
		return ""
	}
	return errs.ToAggregate().Error()
}
