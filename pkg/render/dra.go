package render

// Dynamic Resource Allocation objects: DeviceClasses, each profile's
// ResourceClaimTemplate, and the quotas on devices claimed.

import (
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1 "k8s.io/api/core/v1"

	"github.com/accelc/accelc/pkg/compile"
)

// DRARequestName is the request of a profile's ResourceClaimTemplate, the
// name a container's resources.claims entry and the pod's resourceClaims
// entry use.
const DRARequestName = "accelerator"

// ResourceClaimTemplateName is a DRA profile's ResourceClaimTemplate in
// each namespace of the teams that may use it: the profile's name.
func ResourceClaimTemplateName(p *compile.Profile) string { return p.Name }

// draObjects are the cluster's Dynamic Resource Allocation objects: its
// DeviceClasses (resource.k8s.io/v1, cluster-scoped: one per accelerator
// class, per MIG slice a DRA profile hands out, and per attribute class
// of the CUE), and for each DRA profile a ResourceClaimTemplate in each
// namespace of the teams that may use it, asking for the profile's
// default count of devices of its classes, in the profile's order (the
// scheduler takes the first it can allocate: firstAvailable).
func draObjects(m *compile.Model) []Object {
	out := draQuotas(m)
	for _, dc := range m.DeviceClasses() {
		meta := objectMeta(m.Cluster.Name, "", dc.Name)
		if dc.Description != "" {
			meta.Annotations = map[string]string{"accelc.io/description": dc.Description}
		}
		out = append(out, Object{
			Dir: "dra", Source: dc.Source,
			Body: &resourcev1.DeviceClass{
				TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceClass"},
				ObjectMeta: meta,
				Spec:       resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: dc.Selector}}}},
			},
		})
	}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		classes := m.ProfileDeviceClasses(p)
		if len(classes) == 0 || !p.Enabled {
			continue
		}
		count := int64(max(p.GPU.Default, 1))
		req := resourcev1.DeviceRequest{Name: DRARequestName}
		if len(classes) == 1 {
			req.Exactly = &resourcev1.ExactDeviceRequest{DeviceClassName: classes[0], AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: count}
		} else {
			for _, c := range classes {
				req.FirstAvailable = append(req.FirstAvailable, resourcev1.DeviceSubRequest{
					// A DNS label: a MIG slice's class name has dots.
					Name:            strings.ReplaceAll(c, ".", "-"),
					DeviceClassName: c, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: count,
				})
			}
		}
		for j := range m.Teams {
			t := &m.Teams[j]
			if !t.MayUse(p) {
				continue
			}
			for _, ns := range t.Namespaces {
				out = append(out, Object{
					Dir: "dra", PerNamespace: true, Source: []string{"profiles", p.Name, "dra"},
					Body: &resourcev1.ResourceClaimTemplate{
						TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaimTemplate"},
						ObjectMeta: objectMeta(m.Cluster.Name, ns, ResourceClaimTemplateName(p)),
						Spec: resourcev1.ResourceClaimTemplateSpec{
							ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{m.Cluster.LabelPrefix + "/profile": p.Name}},
							Spec:       resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{req}}},
						},
					},
				})
			}
		}
	}
	return out
}

// DRAQuotaName is the ResourceQuota that caps a team namespace's claims.
const DRAQuotaName = "accelc-dra-devices"

// draQuotas cap, in each namespace of a team with a quota that may use a
// DRA profile, the devices its ResourceClaims may hold per DeviceClass
// (<class>.deviceclass.resource.k8s.io/devices): the team's quota of the
// class's type, or of the MIG config that cuts its slice. Kueue charges
// the claims of the DRA profiles it queues (compile.KueueCountsClaims),
// but not a ResourceClaim a pod names directly, nor a multi-class
// (firstAvailable) profile's, so this is the cap on every claim under
// either quota mode; like the ResourceQuotas of clusters without Kueue,
// each namespace gets the team's whole quota. Kubernetes charges a
// firstAvailable request its count of every class it lists.
func draQuotas(m *compile.Model) []Object {
	if m.Cluster.DRA == nil {
		return nil
	}
	var out []Object
	for i := range m.Teams {
		t := &m.Teams[i]
		// A team claims only through the DRA profiles it may use.
		if len(t.Quota) == 0 || len(m.TeamDeviceClasses(t)) == 0 {
			continue
		}
		hard := map[corev1.ResourceName]int{}
		for id, n := range t.Quota {
			if pool, ok := m.Pool(id); ok {
				if pool.Sharing != compile.ShareMIG {
					continue
				}
				per := t.SliceQuota[id]
				if per == nil && len(pool.Layout) == 1 {
					for prof := range pool.Layout {
						per = map[string]int{prof: n}
					}
				}
				for prof, k := range per {
					hard[deviceClassQuota(compile.DeviceClassName(pool.AcceleratorType, prof))] += k
				}
				continue
			}
			if c, ok := m.Catalog.Get(id); ok && compile.DRADriver(c) != "" {
				hard[deviceClassQuota(compile.DeviceClassName(id, ""))] += n
			}
		}
		if len(hard) > 0 {
			out = append(out, namespaceQuotas(m, t, DRAQuotaName, "dra", []string{"teams", t.Name, "quota"}, hard)...)
		}
	}
	return out
}

// deviceClassQuota is the ResourceQuota resource that counts the devices
// a namespace's claims hold of a DeviceClass.
func deviceClassQuota(class string) corev1.ResourceName {
	return corev1.ResourceName(class + corev1.ResourceClaimsPerClass)
}
