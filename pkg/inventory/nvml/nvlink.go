//go:build cgo

package nvml

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// indexByBusID maps each GPU's PCI bus id to its index, to find the GPU
// at the far end of an NVLink. The bus ids stay in this map: they are
// never written into a report.
func indexByBusID(devices []device) map[string]int {
	byBusID := make(map[string]int, len(devices))
	for _, d := range devices {
		if id := busID(d.pci); id != "" {
			byBusID[id] = d.index
		}
	}
	return byBusID
}

// busID is the PCI bus id NVML writes into a PciInfo, in one case.
func busID(pci nvml.PciInfo) string {
	id := pci.BusId[:]
	if end := bytes.IndexByte(id, 0); end >= 0 {
		id = id[:end]
	}
	return strings.ToLower(string(id))
}

// readNVLink reads where a GPU's active NVLinks lead. It is nil for a GPU
// without NVLink.
func readNVLink(d device, byBusID map[string]int) (*NVLink, error) {
	var nl NVLink
	hasLinks := false
	peers := map[int]int{}
	for link := range nvml.NVLINK_MAX_LINKS {
		state, ret := d.handle.GetNvLinkState(link)
		if absent(ret) {
			continue
		}
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("reading the state of NVLink %d: %w", link, ret)
		}
		hasLinks = true
		if state != nvml.FEATURE_ENABLED {
			continue
		}
		nl.ActiveLinks++
		if err := followLink(d, link, byBusID, &nl, peers); err != nil {
			return nil, err
		}
	}
	if !hasLinks {
		return nil, nil
	}
	for _, gpu := range slices.Sorted(maps.Keys(peers)) {
		nl.Peers = append(nl.Peers, Peer{GPU: gpu, Links: peers[gpu]})
	}
	return &nl, nil
}

// followLink counts an active link by what is at its far end: another
// local GPU (matched by PCI bus id), an NVSwitch, or something else.
func followLink(d device, link int, byBusID map[string]int, nl *NVLink, peers map[int]int) error {
	remote, ret := d.handle.GetNvLinkRemotePciInfo(link)
	switch {
	case ret == nvml.SUCCESS:
		if peer, ok := byBusID[busID(remote)]; ok && peer != d.index {
			peers[peer]++
			return nil
		}
	case !absent(ret):
		return fmt.Errorf("reading the far end of NVLink %d: %w", link, ret)
	}
	kind, ret := d.handle.GetNvLinkRemoteDeviceType(link)
	switch {
	case ret == nvml.SUCCESS && kind == nvml.NVLINK_DEVICE_TYPE_SWITCH:
		nl.SwitchLinks++
	case ret == nvml.SUCCESS || absent(ret):
		nl.OtherLinks++
	default:
		return fmt.Errorf("reading the device type at the far end of NVLink %d: %w", link, ret)
	}
	return nil
}
