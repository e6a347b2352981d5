package live

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/accelc/accelc/pkg/inventory"
)

// The API server's protobuf is read field by field with protowire: a pod
// is ~1 KB on the wire of which counting reads a namespace, a node name
// and the accelerator resources of its containers, so decoding the whole
// corev1.Pod (managed fields, tolerations, status, every map) is most of
// the cost of a live read. The field numbers are k8s.io/api's
// generated.proto, which protobuf's compatibility rules keep: a number is
// never reused for another field. proto_test.go checks every decoder
// against k8s.io/api's own Marshal.

// protoMagic starts every protobuf body of the API server
// (k8s.io/apimachinery/pkg/runtime/serializer/protobuf): then comes a
// runtime.Unknown whose raw field holds the object.
var protoMagic = []byte("k8s\x00")

// maxItem bounds one list item's size: etcd refuses objects over 1.5 MiB,
// so anything much larger is a corrupt length, not an object.
const maxItem = 64 << 20

// Field numbers, from k8s.io/api/core/v1 and k8s.io/apimachinery's
// generated.proto.
const (
	unknownTypeMeta        = 1 // runtime.Unknown
	unknownRaw             = 2
	unknownContentEncoding = 3
	typeMetaKind           = 2 // runtime.TypeMeta

	listMeta     = 1 // PodList, NodeList
	listItems    = 2
	listContinue = 3 // metav1.ListMeta

	objectMeta   = 1 // Pod, Node
	objectSpec   = 2
	objectStatus = 3

	metaName      = 1 // metav1.ObjectMeta
	metaNamespace = 3
	metaLabels    = 11

	podContainers     = 2 // PodSpec
	podNodeName       = 10
	podInitContainers = 20

	containerResources     = 8 // Container
	containerRestartPolicy = 24
	resourcesLimits        = 1 // ResourceRequirements
	resourcesRequests      = 2

	nodeUnschedulable = 4 // NodeSpec
	nodeTaints        = 5
	taintKey          = 1
	taintValue        = 2
	taintEffect       = 3
	nodeCapacity      = 1 // NodeStatus
	nodeAllocatable   = 2
	nodeConditions    = 4
	conditionType     = 1
	conditionStatus   = 2

	mapKey       = 1 // a map entry
	mapValue     = 2
	quantityText = 1 // resource.Quantity
)

// wire reads protobuf from a response body and counts what it consumed.
type wire struct {
	r   *bufio.Reader
	off int
}

func (w *wire) ReadByte() (byte, error) {
	b, err := w.r.ReadByte()
	if err == nil {
		w.off++
	}
	return b, err
}

func (w *wire) tag() (protowire.Number, protowire.Type, error) {
	v, err := binary.ReadUvarint(w)
	if err != nil {
		return 0, 0, err
	}
	num, typ := protowire.DecodeTag(v)
	if num < protowire.MinValidNumber {
		return 0, 0, errors.New("protobuf: invalid field number")
	}
	return num, typ, nil
}

// bytesLen reads the length of a bytes field, at most limit.
func (w *wire) bytesLen(limit uint64) (int, error) {
	v, err := binary.ReadUvarint(w)
	if err != nil {
		return 0, unexpectedEOF(err)
	}
	if v > limit {
		return 0, fmt.Errorf("protobuf: a field of %d bytes", v)
	}
	return int(v), nil
}

// read reads n bytes into buf. buf grows as the bytes arrive, not by
// what the length claims: a corrupt length costs no more memory than the
// body holds.
func (w *wire) read(buf []byte, n int) ([]byte, error) {
	buf = buf[:0]
	for len(buf) < n {
		chunk := min(n-len(buf), 1<<20)
		buf = slices.Grow(buf, chunk)
		m, err := io.ReadFull(w.r, buf[len(buf):len(buf)+chunk])
		buf = buf[:len(buf)+m]
		w.off += m
		if err != nil {
			return buf, unexpectedEOF(err)
		}
	}
	return buf, nil
}

func (w *wire) discard(n int) error {
	m, err := w.r.Discard(n)
	w.off += m
	return unexpectedEOF(err)
}

// skip skips a field's value of wire type typ.
func (w *wire) skip(typ protowire.Type) error {
	switch typ {
	case protowire.VarintType:
		_, err := binary.ReadUvarint(w)
		return unexpectedEOF(err)
	case protowire.Fixed32Type:
		return w.discard(4)
	case protowire.Fixed64Type:
		return w.discard(8)
	case protowire.BytesType:
		n, err := w.bytesLen(math.MaxInt)
		if err != nil {
			return err
		}
		return w.discard(n)
	}
	return fmt.Errorf("protobuf: wire type %d is not supported", typ)
}

// protoList reads a list body of the API server from r, the magic number
// already consumed, and calls item with each item's bytes (valid only
// during the call) as they arrive, so that no list is ever held whole.
// kind is the list's kind ("PodList"); it returns the list's continue
// token.
func protoList(r *bufio.Reader, kind string, item func([]byte) error) (string, error) {
	w := &wire{r: r}
	var cont string
	var buf []byte
	seenRaw := false
	for {
		num, typ, err := w.tag()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		if typ != protowire.BytesType || (num != unknownTypeMeta && num != unknownRaw && num != unknownContentEncoding) {
			if err := w.skip(typ); err != nil {
				return "", err
			}
			continue
		}
		// The list is as long as the cluster is large: only what a
		// length can say bounds it. Its items are read one at a time.
		n, err := w.bytesLen(math.MaxInt)
		if err != nil {
			return "", err
		}
		if num == unknownRaw {
			seenRaw = true
			if cont, err = w.listItems(n, kind, item); err != nil {
				return "", err
			}
			continue
		}
		if buf, err = w.read(buf, n); err != nil {
			return "", err
		}
		switch {
		case num == unknownContentEncoding && n > 0:
			return "", fmt.Errorf("protobuf %s: content encoding %q is not supported", kind, buf)
		case num == unknownTypeMeta:
			if got := string(stringField(buf, typeMetaKind)); got != kind {
				return "", fmt.Errorf("the API server sent a %q where a %s was expected", got, kind)
			}
		}
	}
	if !seenRaw {
		return "", fmt.Errorf("protobuf %s: no object in the response", kind)
	}
	return cont, nil
}

// listItems reads the next n bytes, a PodList or NodeList.
func (w *wire) listItems(n int, kind string, item func([]byte) error) (string, error) {
	var cont string
	var buf []byte
	end := w.off + n
	for w.off < end {
		num, typ, err := w.tag()
		if err != nil {
			return "", unexpectedEOF(err)
		}
		if typ != protowire.BytesType || (num != listItems && num != listMeta) {
			if err := w.skip(typ); err != nil {
				return "", err
			}
			continue
		}
		size, err := w.bytesLen(maxItem)
		if err != nil {
			return "", err
		}
		if w.off+size > end {
			return "", fmt.Errorf("protobuf %s: an item of %d bytes overruns the list", kind, size)
		}
		if buf, err = w.read(buf, size); err != nil {
			return "", err
		}
		if num == listMeta {
			cont = string(stringField(buf, listContinue))
			continue
		}
		if err := item(buf); err != nil {
			return "", err
		}
	}
	if w.off != end {
		return "", fmt.Errorf("protobuf %s: a field overruns the list", kind)
	}
	return cont, nil
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// fields calls f with each field of the message b; for bytes fields v is
// the content, for varints n is the value. It stops at the first error.
func fields(b []byte, f func(num protowire.Number, v []byte, n uint64) error) error {
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return protowire.ParseError(l)
		}
		b = b[l:]
		var v []byte
		var n uint64
		switch typ {
		case protowire.BytesType:
			v, l = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			n, l = protowire.ConsumeVarint(b)
		default:
			l = protowire.ConsumeFieldValue(num, typ, b)
		}
		if l < 0 {
			return protowire.ParseError(l)
		}
		b = b[l:]
		if err := f(num, v, n); err != nil {
			return err
		}
	}
	return nil
}

// stringField is the last value of a bytes field of b, as protobuf reads
// a repeated scalar into a singular one; nil when absent or malformed.
func stringField(b []byte, want protowire.Number) []byte {
	var out []byte
	_ = fields(b, func(num protowire.Number, v []byte, _ uint64) error {
		if num == want {
			out = v
		}
		return nil
	})
	return out
}

// mapEntry is a map<string, …> entry's key and value.
func mapEntry(b []byte) (key, value []byte, err error) {
	err = fields(b, func(num protowire.Number, v []byte, _ uint64) error {
		switch num {
		case mapKey:
			key = v
		case mapValue:
			value = v
		}
		return nil
	})
	return key, value, err
}

// quantity parses a resource.Quantity message as its Unmarshal does.
func quantity(b []byte) (resource.Quantity, error) {
	s := stringField(b, quantityText)
	if s == nil {
		return resource.Quantity{}, nil
	}
	return resource.ParseQuantity(string(s))
}

// podUse is what counting reads of one pod. Its slices are reused from
// pod to pod.
type podUse struct {
	namespace, nodeName string
	containers, inits   []containerUse
}

// containerUse is one container's accelerator resources and whether it is
// a sidecar (restartPolicy Always).
type containerUse struct {
	sidecar          bool
	limits, requests []deviceCount
}

// deviceCount is an accelerator resource and its quantity's value.
type deviceCount struct {
	name string
	n    int
}

// decodePod reads a Pod message into p.
func decodePod(b []byte, p *podUse) error {
	p.namespace, p.nodeName = "", ""
	p.containers, p.inits = p.containers[:0], p.inits[:0]
	return fields(b, func(num protowire.Number, v []byte, _ uint64) error {
		switch num {
		case objectMeta:
			if ns := stringField(v, metaNamespace); ns != nil {
				p.namespace = string(ns)
			}
		case objectSpec:
			return fields(v, func(num protowire.Number, v []byte, _ uint64) error {
				var err error
				switch num {
				case podNodeName:
					p.nodeName = string(v)
				case podContainers:
					p.containers, err = appendContainer(p.containers, v)
				case podInitContainers:
					p.inits, err = appendContainer(p.inits, v)
				}
				return err
			})
		}
		return nil
	})
}

func appendContainer(cs []containerUse, b []byte) ([]containerUse, error) {
	if len(cs) < cap(cs) {
		cs = cs[:len(cs)+1]
	} else {
		cs = append(cs, containerUse{})
	}
	c := &cs[len(cs)-1]
	c.sidecar = false
	c.limits, c.requests = c.limits[:0], c.requests[:0]
	err := fields(b, func(num protowire.Number, v []byte, _ uint64) error {
		switch num {
		case containerRestartPolicy:
			c.sidecar = string(v) == "Always"
		case containerResources:
			return fields(v, func(num protowire.Number, v []byte, _ uint64) error {
				var err error
				switch num {
				case resourcesLimits:
					c.limits, err = appendDevices(c.limits, v)
				case resourcesRequests:
					c.requests, err = appendDevices(c.requests, v)
				}
				return err
			})
		}
		return nil
	})
	return cs, err
}

// appendDevices adds a ResourceList entry when it names an accelerator; a
// key seen before takes the new value, as in a map.
func appendDevices(ds []deviceCount, entry []byte) ([]deviceCount, error) {
	key, value, err := mapEntry(entry)
	if err != nil || inventory.VendorOfResource(string(key)) == "" {
		return ds, err
	}
	q, err := quantity(value)
	if err != nil {
		return ds, fmt.Errorf("resource %s: %w", key, err)
	}
	for i := range ds {
		if ds[i].name == string(key) {
			ds[i].n = quantityValue(q)
			return ds, nil
		}
	}
	return append(ds, deviceCount{name: string(key), n: quantityValue(q)}), nil
}

// decodeNode reads a Node message into what a snapshot keeps of it, as
// rawFromNode does from a corev1.Node.
func decodeNode(b []byte) (inventory.RawNode, error) {
	var r inventory.RawNode
	r.Kind = "Node"
	err := fields(b, func(num protowire.Number, v []byte, _ uint64) error {
		switch num {
		case objectMeta:
			return fields(v, func(num protowire.Number, v []byte, _ uint64) error {
				switch num {
				case metaName:
					r.Metadata.Name = string(v)
				case metaLabels:
					k, val, err := mapEntry(v)
					if err != nil {
						return err
					}
					if r.Metadata.Labels == nil {
						r.Metadata.Labels = map[string]string{}
					}
					r.Metadata.Labels[string(k)] = string(val)
				}
				return nil
			})
		case objectSpec:
			return fields(v, func(num protowire.Number, v []byte, n uint64) error {
				switch num {
				case nodeUnschedulable:
					r.Spec.Unschedulable = n != 0
				case nodeTaints:
					var t inventory.Taint
					err := fields(v, func(num protowire.Number, v []byte, _ uint64) error {
						switch num {
						case taintKey:
							t.Key = string(v)
						case taintValue:
							t.Value = string(v)
						case taintEffect:
							t.Effect = string(v)
						}
						return nil
					})
					r.Spec.Taints = append(r.Spec.Taints, t)
					return err
				}
				return nil
			})
		case objectStatus:
			return fields(v, func(num protowire.Number, v []byte, _ uint64) error {
				var err error
				switch num {
				case nodeCapacity:
					r.Status.Capacity, err = addQuantity(r.Status.Capacity, v)
				case nodeAllocatable:
					r.Status.Allocatable, err = addQuantity(r.Status.Allocatable, v)
				case nodeConditions:
					var c inventory.Condition
					err = fields(v, func(num protowire.Number, v []byte, _ uint64) error {
						switch num {
						case conditionType:
							c.Type = string(v)
						case conditionStatus:
							c.Status = string(v)
						}
						return nil
					})
					if c.Type == "Ready" {
						r.Status.Conditions = append(r.Status.Conditions, c)
					}
				}
				return err
			})
		}
		return nil
	})
	return r, err
}

// decodeNamespace reads a namespace's name, all a snapshot keeps of it.
func decodeNamespace(b []byte) string {
	return string(stringField(stringField(b, objectMeta), metaName))
}

// addQuantity adds a ResourceList entry to m in canonical form, as
// quantities does.
func addQuantity(m map[string]string, entry []byte) (map[string]string, error) {
	key, value, err := mapEntry(entry)
	if err != nil {
		return m, err
	}
	q, err := quantity(value)
	if err != nil {
		return m, fmt.Errorf("resource %s: %w", key, err)
	}
	if m == nil {
		m = map[string]string{}
	}
	m[string(key)] = q.String()
	return m, nil
}

// accelerators is the number of accelerator devices the pod holds on its
// node; see PodAccelerators.
func (p *podUse) accelerators() int {
	sum := func(cs []containerUse, sidecarsOnly bool) (total, peak int) {
		for i := range cs {
			c := &cs[i]
			if sidecarsOnly && !c.sidecar {
				peak = max(peak, total+c.devices())
				continue
			}
			total += c.devices()
		}
		return total, peak
	}
	app, _ := sum(p.containers, false)
	sidecars, initPeak := sum(p.inits, true)
	return max(app+sidecars, initPeak)
}

// devices is what the container holds: each accelerator resource's
// request, or its limit where it has no request.
func (c *containerUse) devices() int {
	n := 0
	for _, l := range c.limits {
		for _, r := range c.requests {
			if r.name == l.name {
				l.n = r.n
				break
			}
		}
		n += l.n
	}
	for _, r := range c.requests {
		if !slices.ContainsFunc(c.limits, func(l deviceCount) bool { return l.name == r.name }) {
			n += r.n
		}
	}
	return n
}
