package live

// Decoding ResourceSlices from the API server's protobuf into the fields
// accelc keeps.

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/accelc/accelc/pkg/inventory"
)

// A ResourceSlice is read field by field as nodes and pods are (proto.go):
// the field numbers are k8s.io/api/resource/v1's generated.proto, and
// slices_test.go checks the decoder against k8s.io/api's own Marshal.
const (
	sliceSpecDriver        = 1 // ResourceSliceSpec
	sliceSpecPool          = 2
	sliceSpecNodeName      = 3
	sliceSpecNodeSelector  = 4
	sliceSpecAllNodes      = 5
	sliceSpecDevices       = 6
	sliceSpecPerDeviceNode = 7

	poolName          = 1 // ResourcePool
	poolGeneration    = 2
	poolResourceSlice = 3

	deviceName             = 1 // Device
	deviceAttributes       = 2
	deviceCapacity         = 3
	deviceConsumesCounters = 4

	attrInt      = 2 // DeviceAttribute
	attrBool     = 3
	attrString   = 4
	attrVersion  = 5
	attrInts     = 6
	attrBools    = 7
	attrStrings  = 8
	attrVersions = 9

	capacityValue  = 1 // DeviceCapacity
	counterSetName = 1 // DeviceCounterConsumption
)

// decodeSlice reads a ResourceSlice message into what a snapshot keeps of
// it (before Redact).
func decodeSlice(b []byte) (inventory.ResourceSlice, error) {
	var s inventory.ResourceSlice
	s.APIVersion, s.Kind = inventory.ResourceSliceAPIVersion, "ResourceSlice"
	err := fields(b, func(num protowire.Number, v []byte, _ uint64) error {
		switch num {
		case objectMeta:
			s.Metadata.Name = string(stringField(v, metaName))
		case objectSpec:
			return fields(v, func(num protowire.Number, v []byte, n uint64) error {
				switch num {
				case sliceSpecDriver:
					s.Spec.Driver = string(v)
				case sliceSpecNodeName:
					s.Spec.NodeName = string(v)
				case sliceSpecNodeSelector:
					s.Spec.NodeSelector = &struct{}{}
				case sliceSpecAllNodes:
					s.Spec.AllNodes = n != 0
				case sliceSpecPerDeviceNode:
					s.Spec.PerDeviceNodeSelection = n != 0
				case sliceSpecPool:
					return fields(v, func(num protowire.Number, v []byte, n uint64) error {
						switch num {
						case poolName:
							s.Spec.Pool.Name = string(v)
						case poolGeneration:
							s.Spec.Pool.Generation = int64(n)
						case poolResourceSlice:
							s.Spec.Pool.ResourceSliceCount = int64(n)
						}
						return nil
					})
				case sliceSpecDevices:
					d, err := decodeDevice(v)
					s.Spec.Devices = append(s.Spec.Devices, d)
					return err
				}
				return nil
			})
		}
		return nil
	})
	return s, err
}

func decodeDevice(b []byte) (inventory.Device, error) {
	var d inventory.Device
	err := fields(b, func(num protowire.Number, v []byte, _ uint64) error {
		switch num {
		case deviceName:
			d.Name = string(v)
		case deviceAttributes:
			key, value, err := mapEntry(v)
			if err != nil {
				return err
			}
			a, err := decodeAttribute(value)
			if err != nil {
				return fmt.Errorf("device %s attribute %s: %w", d.Name, key, err)
			}
			if d.Attributes == nil {
				d.Attributes = map[string]inventory.Attribute{}
			}
			d.Attributes[string(key)] = a
		case deviceCapacity:
			key, value, err := mapEntry(v)
			if err != nil {
				return err
			}
			q, err := quantity(stringField(value, capacityValue))
			if err != nil {
				return fmt.Errorf("device %s capacity %s: %w", d.Name, key, err)
			}
			if d.Capacity == nil {
				d.Capacity = map[string]inventory.Capacity{}
			}
			d.Capacity[string(key)] = inventory.Capacity{Value: q.String()}
		case deviceConsumesCounters:
			d.ConsumesCounters = append(d.ConsumesCounters, inventory.CounterConsumption{CounterSet: string(stringField(v, counterSetName))})
		}
		return nil
	})
	return d, err
}

// decodeAttribute reads a DeviceAttribute. Its repeated scalars may come
// packed (one bytes field) or one by one.
func decodeAttribute(b []byte) (inventory.Attribute, error) {
	var a inventory.Attribute
	err := fields(b, func(num protowire.Number, v []byte, n uint64) error {
		switch num {
		case attrInt:
			i := int64(n)
			a.Int = &i
		case attrBool:
			t := n != 0
			a.Bool = &t
		case attrString:
			str := string(v)
			a.String = &str
		case attrVersion:
			str := string(v)
			a.Version = &str
		case attrStrings:
			a.Strings = append(a.Strings, string(v))
		case attrVersions:
			a.Versions = append(a.Versions, string(v))
		case attrInts, attrBools:
			vals := []uint64{n}
			if v != nil {
				vals = vals[:0]
				for len(v) > 0 {
					x, l := protowire.ConsumeVarint(v)
					if l < 0 {
						return protowire.ParseError(l)
					}
					vals, v = append(vals, x), v[l:]
				}
			}
			for _, x := range vals {
				if num == attrInts {
					a.Ints = append(a.Ints, int64(x))
				} else {
					a.Bools = append(a.Bools, x != 0)
				}
			}
		}
		return nil
	})
	return a, err
}
