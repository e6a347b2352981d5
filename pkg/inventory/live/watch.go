package live

import (
	"k8s.io/client-go/rest"

	"github.com/accelc/accelc/pkg/inventory"
)

// What a watcher of the cluster (accelc serve's informers) needs to keep
// the inventory current with the same reading as Read: each object as the
// API server's protobuf encodes it (the bytes of one list item, or the
// object's own Marshal) read by the same decoders, so that a node, a pod's
// accelerators and a ResourceSlice count the same in a snapshot and in
// the live catalog.

// UnfinishedPods is the field selector of the pods that hold accelerators:
// those not Succeeded or Failed.
const UnfinishedPods = unfinished

// DecodeNode reads a Node message into what classification reads.
func DecodeNode(b []byte) (inventory.RawNode, error) { return decodeNode(b) }

// PodDevices reads a Pod message: the node it is bound to (empty when not
// bound), its namespace, and the accelerator devices it holds there.
func PodDevices(b []byte) (node, namespace string, devices int, err error) {
	var p podUse
	if err := decodePod(b, &p); err != nil {
		return "", "", 0, err
	}
	return p.nodeName, p.namespace, p.accelerators(), nil
}

// DecodeSlice reads a ResourceSlice message. ok is false for a slice of a
// driver accelc does not read; what identifies a device is dropped
// (inventory.AcceleratorSlices).
func DecodeSlice(b []byte) (s inventory.ResourceSlice, ok bool, err error) {
	s, err = decodeSlice(b)
	if err != nil || !inventory.IsAcceleratorDriver(s.Spec.Driver) {
		return s, false, err
	}
	kept := inventory.AcceleratorSlices([]inventory.ResourceSlice{s})
	if len(kept) == 0 {
		return s, false, nil
	}
	return kept[0], true, nil
}

// Config resolves the kubeconfig as Read does (protobuf, client-go's rate
// limit), for a watcher. cluster is the kubeconfig's cluster name; redact
// removes the kubeconfig's secrets from a message.
func Config(opts Options) (cfg *rest.Config, cluster string, redact func(error) error, err error) {
	cfg, contextName, cluster, secrets, err := restConfig(opts)
	if err != nil {
		return nil, "", nil, err
	}
	server := serverName(cfg.Host, secrets)
	redact = func(err error) error {
		if err == nil {
			return nil
		}
		return &Error{Context: contextName, Server: server, Err: explain(err), secrets: secrets}
	}
	return cfg, cluster, redact, nil
}
