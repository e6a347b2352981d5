package live

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/accelc/accelc/pkg/inventory"
)

// JSON is what a server answers that speaks no protobuf (client-go asks
// for protobuf, then JSON). Items are decoded one at a time into the few
// fields counting and classification read.

// jsonList reads a list object's fields in the order they come, calling
// item for each element of items; it returns metadata.continue.
func jsonList(d *json.Decoder, kind string, item func(*json.Decoder) error) (string, error) {
	if err := delim(d, '{'); err != nil {
		return "", err
	}
	var cont string
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return "", err
		}
		switch tok {
		case "kind":
			var got string
			if err := d.Decode(&got); err != nil {
				return "", err
			}
			if got != kind {
				return "", fmt.Errorf("the API server sent a %q where a %s was expected", got, kind)
			}
		case "metadata":
			var meta struct {
				Continue string `json:"continue"`
			}
			if err := d.Decode(&meta); err != nil {
				return "", err
			}
			cont = meta.Continue
		case "items":
			if err := delim(d, '['); err != nil {
				return "", err
			}
			for d.More() {
				if err := item(d); err != nil {
					return "", err
				}
			}
			if err := delim(d, ']'); err != nil {
				return "", err
			}
		default:
			var skip json.RawMessage
			if err := d.Decode(&skip); err != nil {
				return "", err
			}
		}
	}
	return cont, delim(d, '}')
}

func delim(d *json.Decoder, want json.Delim) error {
	tok, err := d.Token()
	if err != nil {
		return err
	}
	if tok != want {
		return errors.New("JSON: want " + want.String() + ", got " + fmt.Sprint(tok))
	}
	return nil
}

type jsonPod struct {
	Metadata struct {
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		NodeName       string          `json:"nodeName"`
		Containers     []jsonContainer `json:"containers"`
		InitContainers []jsonContainer `json:"initContainers"`
	} `json:"spec"`
}

type jsonContainer struct {
	RestartPolicy *string `json:"restartPolicy"`
	Resources     struct {
		Limits   map[string]resource.Quantity `json:"limits"`
		Requests map[string]resource.Quantity `json:"requests"`
	} `json:"resources"`
}

// decodeJSONPod reads one pod into p.
func decodeJSONPod(d *json.Decoder, p *podUse) error {
	var jp jsonPod
	if err := d.Decode(&jp); err != nil {
		return err
	}
	p.namespace, p.nodeName = jp.Metadata.Namespace, jp.Spec.NodeName
	p.containers = appendJSONContainers(p.containers[:0], jp.Spec.Containers)
	p.inits = appendJSONContainers(p.inits[:0], jp.Spec.InitContainers)
	return nil
}

func appendJSONContainers(cs []containerUse, from []jsonContainer) []containerUse {
	for i := range from {
		c := &from[i]
		cs = append(cs, containerUse{
			sidecar:  c.RestartPolicy != nil && *c.RestartPolicy == "Always",
			limits:   jsonDevices(c.Resources.Limits),
			requests: jsonDevices(c.Resources.Requests),
		})
	}
	return cs
}

func jsonDevices(l map[string]resource.Quantity) []deviceCount {
	var out []deviceCount
	for name, q := range l {
		if inventory.VendorOfResource(name) != "" {
			out = append(out, deviceCount{name: name, n: quantityValue(q)})
		}
	}
	return out
}

type jsonNode struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Unschedulable bool              `json:"unschedulable"`
		Taints        []inventory.Taint `json:"taints"`
	} `json:"spec"`
	Status struct {
		Capacity    map[string]resource.Quantity `json:"capacity"`
		Allocatable map[string]resource.Quantity `json:"allocatable"`
		Conditions  []inventory.Condition        `json:"conditions"`
	} `json:"status"`
}

// decodeJSONNode reads one node as decodeNode does.
func decodeJSONNode(d *json.Decoder) (inventory.RawNode, error) {
	var n jsonNode
	var r inventory.RawNode
	if err := d.Decode(&n); err != nil {
		return r, err
	}
	r.Kind = "Node"
	r.Metadata.Name = n.Metadata.Name
	r.Metadata.Labels = n.Metadata.Labels
	r.Spec.Unschedulable = n.Spec.Unschedulable
	if len(n.Spec.Taints) > 0 {
		r.Spec.Taints = n.Spec.Taints
	}
	r.Status.Capacity = jsonQuantities(n.Status.Capacity)
	r.Status.Allocatable = jsonQuantities(n.Status.Allocatable)
	for _, c := range n.Status.Conditions {
		if c.Type == "Ready" {
			r.Status.Conditions = append(r.Status.Conditions, c)
		}
	}
	return r, nil
}

// decodeJSONNamespace reads a namespace's name as decodeNamespace does.
func decodeJSONNamespace(d *json.Decoder) (string, error) {
	var ns struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	err := d.Decode(&ns)
	return ns.Metadata.Name, err
}

func jsonQuantities(l map[string]resource.Quantity) map[string]string {
	if l == nil {
		return nil
	}
	out := make(map[string]string, len(l))
	for k, q := range l {
		out[k] = q.String()
	}
	return out
}
