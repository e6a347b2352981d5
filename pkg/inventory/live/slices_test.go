package live

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/inventory"
)

// draSlices reads the ResourceSlices of testdata/dra/cluster.yaml into
// k8s.io/api's types, as the API server holds them.
func draSlices(t testing.TB) []resourcev1.ResourceSlice {
	t.Helper()
	data, err := os.ReadFile("../../../testdata/dra/cluster.yaml")
	require.NoError(t, err)
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	require.NoError(t, yaml.Unmarshal(data, &list))
	var out []resourcev1.ResourceSlice
	for _, raw := range list.Items {
		var probe metav1.TypeMeta
		require.NoError(t, json.Unmarshal(raw, &probe))
		if probe.Kind != "ResourceSlice" {
			continue
		}
		var s resourcev1.ResourceSlice
		require.NoError(t, json.Unmarshal(raw, &s))
		out = append(out, s)
	}
	require.NotEmpty(t, out)
	return out
}

// encodeSlices encodes a ResourceSliceList as the API server does.
func encodeSlices(t testing.TB, list *resourcev1.ResourceSliceList, proto bool) []byte {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, resourcev1.AddToScheme(scheme))
	var enc runtime.Encoder
	if proto {
		enc = protobuf.NewSerializer(scheme, scheme)
	} else {
		info, ok := runtime.SerializerInfoForMediaType(serializer.NewCodecFactory(scheme).SupportedMediaTypes(), runtime.ContentTypeJSON)
		require.True(t, ok)
		enc = info.Serializer
	}
	var buf bytes.Buffer
	require.NoError(t, serializer.NewCodecFactory(scheme).EncoderForVersion(enc, resourcev1.SchemeGroupVersion).Encode(list, &buf))
	return buf.Bytes()
}

func readSlices(body []byte) ([]inventory.ResourceSlice, string, error) {
	var out []inventory.ResourceSlice
	cont, err := decodeList(bytes.NewReader(body), "ResourceSliceList",
		func(b []byte) error {
			s, err := decodeSlice(b)
			out = append(out, s)
			return err
		},
		func(d *json.Decoder) error {
			var s inventory.ResourceSlice
			err := d.Decode(&s)
			s.APIVersion, s.Kind = inventory.ResourceSliceAPIVersion, "ResourceSlice"
			out = append(out, s)
			return err
		})
	return out, cont, err
}

// TestDecodeSlices: the ResourceSlices of NVIDIA's and AMD's drivers
// (testdata/dra/cluster.yaml), with every attribute value type and the
// fields around them that decoding skips, read through protobuf and JSON
// as encoding/json reads k8s.io/api's JSON of them: nothing dropped yet,
// every value as the API holds it.
func TestDecodeSlices(t *testing.T) {
	list := &resourcev1.ResourceSliceList{ListMeta: metav1.ListMeta{Continue: "more", ResourceVersion: "9"}, Items: draSlices(t)}
	list.Items[0].ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}}
	list.Items[0].OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "dra-a100", UID: "0a1b"}}
	d := &list.Items[0].Spec.Devices[0]
	d.Attributes["minor"] = resourcev1.DeviceAttribute{IntValue: ref[int64](-3)}
	d.Attributes["migCapable"] = resourcev1.DeviceAttribute{BoolValue: ref(true)}
	d.Attributes["numaNodes"] = resourcev1.DeviceAttribute{IntValues: []int64{0, 1, 1 << 40}}
	d.Attributes["flags"] = resourcev1.DeviceAttribute{BoolValues: []bool{true, false}}
	d.Attributes["links"] = resourcev1.DeviceAttribute{StringValues: []string{"nvlink", ""}}
	d.Attributes["firmware"] = resourcev1.DeviceAttribute{VersionValues: []string{"1.2.3"}}
	d.Capacity["shares"] = resourcev1.DeviceCapacity{Value: *resourceQuantity(t, "100"), RequestPolicy: &resourcev1.CapacityRequestPolicy{Default: resourceQuantity(t, "1")}}
	list.Items[1].Spec.NodeName = nil
	list.Items[1].Spec.AllNodes = ref(true)
	list.Items[2].Spec.PerDeviceNodeSelection = ref(false)

	var want []inventory.ResourceSlice
	for _, s := range list.Items {
		data, err := json.Marshal(s)
		require.NoError(t, err)
		var r inventory.ResourceSlice
		require.NoError(t, json.Unmarshal(data, &r))
		r.APIVersion, r.Kind = inventory.ResourceSliceAPIVersion, "ResourceSlice"
		want = append(want, r)
	}
	require.Equal(t, "GPU-0a1b2c3d-0000-1111-2222-333344445555", *want[0].Spec.Devices[0].Attributes["uuid"].String, "nothing is dropped before Redact")
	for _, proto := range []bool{true, false} {
		t.Run(fmt.Sprint("protobuf=", proto), func(t *testing.T) {
			got, cont, err := readSlices(encodeSlices(t, list, proto))
			require.NoError(t, err)
			assert.Equal(t, "more", cont)
			assert.Equal(t, want, got)
		})
	}
}

// TestDecodeSlicesRefuses: a list of another kind, or cut short, is an
// error.
func TestDecodeSlicesRefuses(t *testing.T) {
	list := &resourcev1.ResourceSliceList{Items: draSlices(t)}
	for _, proto := range []bool{true, false} {
		body := bytes.TrimSpace(encodeSlices(t, list, proto))
		_, _, err := readNodes(body)
		assert.ErrorContains(t, err, `"ResourceSliceList" where a NodeList was expected`, "protobuf=%v", proto)
		for _, cut := range []int{5, len(body) / 2, len(body) - 1} {
			_, _, err := readSlices(body[:cut])
			assert.Error(t, err, "protobuf=%v, %d of %d bytes", proto, cut, len(body))
		}
	}
}

func resourceQuantity(t testing.TB, s string) *resource.Quantity {
	t.Helper()
	q, err := resource.ParseQuantity(s)
	require.NoError(t, err)
	return &q
}

func ref[T any](v T) *T { return &v }
