package workloads

// Trimming workloads to what judging them reads: metadata that changes
// on every write and pod addresses dropped, environment values kept only
// where they hand a container devices.

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/policies"
)

// What Trim drops of an object's metadata: the fields a snapshot has no
// use for that change on every write (or hold another tool's copy of the
// whole object), and the annotations that hold pod addresses.
var (
	droppedMetadata    = []string{"managedFields", "resourceVersion", "selfLink"}
	droppedAnnotations = []string{
		"kubectl.kubernetes.io/last-applied-configuration",
		// Multus's and Calico's record of a pod's addresses.
		"k8s.v1.cni.cncf.io/network-status",
		"k8s.v1.cni.cncf.io/networks-status",
		"cni.projectcalico.org/podIP",
		"cni.projectcalico.org/podIPs",
	}
	// ownerFields are what Workload and the audit read of an owner
	// reference.
	ownerFields = []string{"apiVersion", "kind", "name", "uid", "controller"}
	// droppedPodSpec are the fields of a pod spec that hold secrets' names
	// or addresses, and that no policy judges.
	droppedPodSpec = []string{"imagePullSecrets", "hostAliases", "dnsConfig"}
	// droppedContainer are what a container passes its process, where
	// secrets and addresses are written inline.
	droppedContainer = []string{"args", "command", "envFrom"}
	containerLists   = []string{"containers", "initContainers", "ephemeralContainers"}
)

// visibilityEnv are the environment variables that make a container
// runtime hand devices to a container, whatever it asked the device
// plugin for; the device access policy judges their values, so Trim
// keeps them. They name devices, not secrets.
var visibilityEnv = policies.VisibilityEnv

// Trim drops what a snapshot committed to Git must not hold, and what no
// policy judges: the object's managed fields, resource version and
// kubectl's last-applied copy; its status but for status.phase (a pod's
// other status holds its addresses); and in every pod spec it holds (a
// Pod's own, and every pod template, however deep: any object with a
// containers list is a pod spec, and any other with an env list a
// container, as a TrainJob's trainer) the image pull secrets, host aliases
// and DNS configuration, and each container's args, command, envFrom
// and environment values (value and valueFrom; the device visibility
// variables' values are kept). What policies judge stays: names,
// labels, annotations, owner references, images, resources, security
// contexts, volumes and mounts, affinity, tolerations, node name and
// selector, runtime and priority class, service account and resource
// claims. Trim is idempotent; it leaves alone what it does not
// recognise.
func Trim(u *unstructured.Unstructured) {
	if u == nil || u.Object == nil {
		return
	}
	obj := u.Object
	if md, ok := obj["metadata"].(map[string]any); ok {
		trimMetadata(md)
	}
	if st, ok := obj["status"]; ok {
		m, _ := st.(map[string]any)
		if phase, ok := m["phase"]; ok {
			obj["status"] = map[string]any{"phase": phase}
		} else {
			delete(obj, "status")
		}
	}
	for k, v := range obj {
		if k != "metadata" && k != "status" {
			trimPodSpecs(v)
		}
	}
}

func trimMetadata(md map[string]any) {
	for _, f := range droppedMetadata {
		delete(md, f)
	}
	if ann, ok := md["annotations"].(map[string]any); ok {
		for _, a := range droppedAnnotations {
			delete(ann, a)
		}
		if len(ann) == 0 {
			delete(md, "annotations")
		}
	}
	if refs, ok := md["ownerReferences"].([]any); ok {
		for _, r := range refs {
			if ref, ok := r.(map[string]any); ok {
				for k := range ref {
					if !slices.Contains(ownerFields, k) {
						delete(ref, k)
					}
				}
			}
		}
	}
}

// trimPodSpecs trims every pod spec in v.
func trimPodSpecs(v any) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["containers"].([]any); ok {
			trimPodSpec(v)
		} else if _, ok := v["env"].([]any); ok {
			// A container written inline outside a pod spec (a
			// TrainJob's trainer, an InferenceService's model).
			trimContainer(v)
		}
		for _, e := range v {
			trimPodSpecs(e)
		}
	case []any:
		for _, e := range v {
			trimPodSpecs(e)
		}
	}
}

func trimPodSpec(spec map[string]any) {
	for _, f := range droppedPodSpec {
		delete(spec, f)
	}
	for _, list := range containerLists {
		cs, _ := spec[list].([]any)
		for _, c := range cs {
			if c, ok := c.(map[string]any); ok {
				trimContainer(c)
			}
		}
	}
}

// trimContainer drops what a container passes its process, and its
// environment's values but the device visibility variables'.
func trimContainer(c map[string]any) {
	for _, f := range droppedContainer {
		delete(c, f)
	}
	env, _ := c["env"].([]any)
	for _, e := range env {
		e, ok := e.(map[string]any)
		if !ok {
			continue
		}
		if name, _ := e["name"].(string); !slices.Contains(visibilityEnv, name) {
			delete(e, "value")
			delete(e, "valueFrom")
		}
	}
}
