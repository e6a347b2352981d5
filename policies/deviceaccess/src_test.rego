package accelcdeviceaccess_test

import data.accelcdeviceaccess.violation
import data.lib.accelc
import data.lib.fixtures as f

label := "accelerator.opendatahub.io/type"

cpu := {"name": "app", "image": "app"}

# A pod of no profile in namespace ml.
plain(spec) := f.input_for(f.pod("ml", {}, object.union({"containers": [cpu]}, spec)))

# A pod of premium-gpu, well placed, with extra spec.
premium(spec) := f.input_for(f.pod("ml", f.profile("premium-gpu"), object.union({
	"containers": [f.gpu_container(1)],
	"nodeSelector": {label: "nvidia-h200-141gb"},
}, spec)))

denied(pod_input, text) if {
	some v in violation with input as pod_input with data.inventory as f.inventory
	contains(v.msg, text)
}

admitted(pod_input) if count(violation) == 0 with input as pod_input with data.inventory as f.inventory

test_cpu_pod_admitted if admitted(plain({}))

test_profile_pod_admitted if admitted(premium({}))

test_visible_devices_in_sidecar_denied if {
	sidecar := object.union(cpu, {"env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]})
	denied(premium({"containers": [f.gpu_container(1), sidecar]}), "container app sets NVIDIA_VISIBLE_DEVICES=all")
}

test_visible_devices_void_admitted if {
	admitted(plain({"containers": [object.union(cpu, {"env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}]})]}))
}

test_visible_devices_value_from_denied if {
	env := [{"name": "AMD_VISIBLE_DEVICES", "valueFrom": {"configMapKeyRef": {"name": "x", "key": "y"}}}]
	denied(plain({"initContainers": [object.union(cpu, {"env": env})]}), "takes AMD_VISIBLE_DEVICES from valueFrom")
}

test_mig_config_devices_denied if {
	denied(plain({"containers": [object.union(cpu, {"env": [{"name": "NVIDIA_MIG_CONFIG_DEVICES", "value": "all"}]})]}), "NVIDIA_MIG_CONFIG_DEVICES")
}

test_privileged_ephemeral_denied if {
	debug := object.union(cpu, {"securityContext": {"privileged": true}})
	denied(premium({"ephemeralContainers": [debug]}), "is privileged")
}

host_path(p) := plain({"volumes": [{"name": "h", "hostPath": {"path": p}}]})

test_device_host_paths_denied if {
	every p in ["/dev/nvidia0", "/dev", "//dev/./nvidia0", "/", "/var/run", "/var", "/run/nvidia/driver", "/etc/cdi", "/data/../dev", "/proc", "/var/lib/kubelet/device-plugins"] {
		denied(host_path(p), "mounts host path")
	}
}

test_other_host_paths_admitted if {
	every p in ["/data", "/home/user", "/var/log", "/device"] {
		admitted(host_path(p))
	}
}

mounted_host_path(p, read_only) := plain({
	"volumes": [{"name": "h", "hostPath": {"path": p}}],
	"containers": [object.union(cpu, {"volumeMounts": [{"name": "h", "mountPath": "/host", "readOnly": read_only}]})],
})

# A host path a container may write: the node's own files (the container
# toolkit's configuration decides which devices a container gets) or a
# data disk, where a link made now is followed by a later pod's host path.
# Read-only is harmless.
test_writable_host_paths_denied if {
	every p in ["/etc/nvidia-container-runtime", "/usr/local/nvidia/toolkit", "/usr", "/etc/containerd/config.toml", "/usr/bin", "/opt/cni/bin", "/var/lib/containerd", "/home/kubernetes/bin/nvidia", "/mnt/datasets", "/data", "/etc/localtime"] {
		denied(mounted_host_path(p, false), "writable")
	}
}

test_writable_host_path_in_init_container_denied if {
	init := object.union(cpu, {"volumeMounts": [{"name": "h", "mountPath": "/host"}]})
	denied(plain({"volumes": [{"name": "h", "hostPath": {"path": "/usr/local/nvidia"}}], "initContainers": [init]}), "container app mounts host path /usr/local/nvidia writable")
}

test_read_only_host_paths_admitted if {
	every p in ["/etc/nvidia-container-runtime", "/usr/share/zoneinfo", "/etc/ssl/certs", "/opt/data", "/mnt/datasets", "/var/log"] {
		admitted(mounted_host_path(p, true))
	}
}

# A host path no container mounts reaches nothing.
test_unmounted_host_path_admitted if admitted(host_path("/mnt/datasets"))

test_runtime_class_without_profile_denied if {
	denied(plain({"runtimeClassName": "nvidia"}), "runtimeClassName nvidia hands devices to containers, and the pod names no hardware profile")
}

test_runtime_class_with_profile_admitted if admitted(premium({"runtimeClassName": "nvidia"}))

test_claims_denied if {
	denied(premium({"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "any-gpu"}]}), "Dynamic Resource Allocation claims")
}

test_container_claims_denied if {
	c := object.union(cpu, {"resources": {"claims": [{"name": "gpu"}]}})
	denied(plain({"containers": [c]}), "Dynamic Resource Allocation claims")
}

test_gpu_toleration_without_profile_denied if {
	denied(plain({"tolerations": [f.gpu_taint]}), "aims the pod at accelerator nodes, and the pod names no hardware profile")
}

test_wildcard_toleration_without_profile_denied if {
	denied(plain({"tolerations": [{"operator": "Exists"}]}), "aims the pod at accelerator nodes")
}

test_vendor_selector_without_profile_denied if {
	denied(plain({"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H200"}}), "nodeSelector nvidia.com/gpu.product")
}

test_type_affinity_without_profile_denied if {
	terms := [{"matchExpressions": [{"key": label, "operator": "In", "values": ["nvidia-h200-141gb"]}]}]
	denied(plain({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}}), "node affinity on accelerator.opendatahub.io/type")
}

test_keeping_off_accelerators_admitted if {
	terms := [{"matchExpressions": [{"key": label, "operator": "DoesNotExist"}]}]
	admitted(plain({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}}))
}

test_node_name_of_gpu_node_without_profile_denied if {
	denied(plain({"nodeName": "h200-01"}), "spec.nodeName h200-01 (an accelerator node)")
	denied(plain({"nodeName": "gpu-untyped-01"}), "spec.nodeName gpu-untyped-01")
}

test_node_name_of_cpu_node_admitted if admitted(plain({"nodeName": "cpu-01"}))

# A bound pod's UPDATE keeps its node; a Deployment's UPDATE, judged as
# the pod its template makes (no old pod), does not.
test_node_name_on_update if {
	admitted(object.union(plain({"nodeName": "h200-01"}), {"review": {"operation": "UPDATE", "oldObject": {"spec": {"nodeName": "h200-01"}}}}))
	denied(object.union(plain({"nodeName": "h200-01"}), {"review": {"operation": "UPDATE"}}), "spec.nodeName h200-01 (an accelerator node)")
}

test_match_fields_of_gpu_node_denied if {
	terms := [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["v100-01"]}]}]
	denied(plain({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}}), "node affinity on node v100-01")
}

test_unknown_profile_is_no_profile if {
	pod_input := f.input_for(f.pod("ml", f.profile("no-such"), {"containers": [cpu], "tolerations": [f.gpu_taint]}))
	denied(pod_input, "hardware profile \"no-such\" does not hand out accelerators here")
}

test_generic_namespace_keeps_its_placement if {
	admitted(f.input_for(f.pod("legacy", {}, {"containers": [f.gpu_container(1)], "tolerations": [f.gpu_taint]})))
}

dra_pod(claims) := f.pod("dra", f.profile("dra-large"), {
	"resourceClaims": claims,
	"containers": [object.union(cpu, {"resources": {"claims": [{"name": "gpu"}]}})],
	"tolerations": [f.gpu_taint],
})

# A ResourceClaim of namespace dra as Gatekeeper syncs it (v1).
synced_claim(name, request) := object.union(f.inventory, {"namespace": {"dra": {"resource.k8s.io/v1": {"ResourceClaim": {name: {
	"apiVersion": "resource.k8s.io/v1",
	"kind": "ResourceClaim",
	"metadata": {"name": name, "namespace": "dra"},
	"spec": {"devices": {"requests": [request]}},
}}}}}})

a100_request := {"name": "gpu", "exactly": {"deviceClassName": "nvidia-a100-80gb", "count": 1}}

test_claims_of_the_dra_profile_allowed if {
	count(violation) == 0 with input as f.input_for(dra_pod([{"name": "gpu", "resourceClaimTemplateName": "dra-large"}])) with data.inventory as f.inventory
	count(violation) == 0 with input as f.input_for(dra_pod([{"name": "gpu", "resourceClaimName": "made-earlier"}])) with data.inventory as synced_claim("made-earlier", a100_request)
}

# A named claim is judged as it is now, not trusted as checked when made.
test_named_claim_judged_by_the_claim if {
	some v in violation with input as f.input_for(dra_pod([{"name": "gpu", "resourceClaimName": "any-gpu"}])) with data.inventory as synced_claim("any-gpu", {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}})
	contains(v.msg, `pod claim gpu: ResourceClaim any-gpu: request gpu names DeviceClass "gpu.nvidia.com", which team dra-team may not use`)
}

# A claim written in v1beta1 (deviceClassName on the request) is read so.
test_named_v1beta1_claim_judged if {
	some v in violation with input as f.input_for(dra_pod([{"name": "gpu", "resourceClaimName": "old"}])) with data.inventory as synced_claim("old", {"name": "gpu", "deviceClassName": "h200.example.com", "count": 1})
	contains(v.msg, `request gpu names DeviceClass "h200.example.com"`)
}

test_unsynced_named_claim_denied if {
	some v in violation with input as f.input_for(dra_pod([{"name": "gpu", "resourceClaimName": "made-earlier"}])) with data.inventory as f.inventory
	contains(v.msg, "names ResourceClaim made-earlier, which Gatekeeper has not synced")
}

test_dra_profile_pod_without_claim_denied if {
	p := f.pod("dra", f.profile("dra-large"), {"containers": [cpu], "tolerations": [f.gpu_taint]})
	some v in violation with input as f.input_for(p) with data.inventory as f.inventory
	contains(v.msg, `hardware profile "dra-large" hands out devices by resource claim, and the pod holds none`)
}

test_undeclared_container_claim_denied if {
	p := dra_pod([{"name": "other", "resourceClaimTemplateName": "dra-large"}])
	some v in violation with input as f.input_for(p) with data.inventory as f.inventory
	contains(v.msg, `container app uses DRA claim "gpu", which spec.resourceClaims does not declare`)
}

test_claims_of_another_template_denied if {
	some v in violation with input as f.input_for(dra_pod([{"name": "gpu", "resourceClaimTemplateName": "any-gpu"}])) with data.inventory as f.inventory
	contains(v.msg, `pod claim gpu is made from ResourceClaimTemplate "any-gpu", but hardware profile "dra-large" hands out devices through "dra-large"`)
}

test_two_claims_denied if {
	some v in violation with input as f.input_for(dra_pod([
		{"name": "gpu", "resourceClaimTemplateName": "dra-large"},
		{"name": "more", "resourceClaimName": "made-earlier"},
	])) with data.inventory as synced_claim("made-earlier", a100_request)
	contains(v.msg, "pod holds 2 claims")
}

# A HardwareProfile that names its template only in Open Data Hub's own
# field (spec.dra.resourceClaimTemplateName), as ODH-native profiles do:
# a claim from it is the profile's; from another template it is not.
odh_dra_inventory := json.patch(f.inventory, [
	{"op": "remove", "path": "/namespace/opendatahub/infrastructure.opendatahub.io~1v1/HardwareProfile/dra-large/metadata/annotations/accelerator.opendatahub.io~1resource-claim-template"},
	{"op": "add", "path": "/namespace/opendatahub/infrastructure.opendatahub.io~1v1/HardwareProfile/dra-large/spec/dra", "value": {"resourceClaimTemplateName": "dra-large"}},
])

test_odh_dra_field_template_allowed if {
	count(violation) == 0 with input as f.input_for(dra_pod([{"name": "gpu", "resourceClaimTemplateName": "dra-large"}])) with data.inventory as odh_dra_inventory
}

test_odh_dra_field_other_template_denied if {
	some v in violation with input as f.input_for(dra_pod([{"name": "gpu", "resourceClaimTemplateName": "any-gpu"}])) with data.inventory as odh_dra_inventory
}

annotated(annotations) := f.input_for(f.pod("ml", annotations, {"containers": [cpu]}))

# Annotations the container runtime reads as device requests.
test_runtime_device_annotations_denied if {
	every k in ["cdi.k8s.io/gpu", "nvidia.cdi.k8s.io/gpu", "io.kubernetes.cri-o.Devices"] {
		denied(annotated({k: "nvidia.com/gpu=all"}), sprintf("annotation %v asks the container runtime for devices", [k]))
	}
}

test_other_annotations_admitted if admitted(annotated({"example.com/cdi": "x", "prometheus.io/scrape": "true"}))

with_capabilities(caps) := plain({"containers": [object.union(cpu, {"securityContext": {"capabilities": {"add": caps}}})]})

# Pod Security baseline's view, in every governed namespace: generic ones
# (which may enforce no Pod Security level) too.
test_capabilities_beyond_baseline_denied if {
	every cap in ["SYS_ADMIN", "CAP_SYS_ADMIN", "sys_ptrace", "ALL", "SYS_RAWIO"] {
		denied(with_capabilities([cap]), sprintf("adds capability %v", [cap]))
	}
}

test_baseline_capabilities_admitted if admitted(with_capabilities(["NET_BIND_SERVICE", "CAP_CHOWN", "kill"]))

generic(spec) := f.input_for(f.pod("legacy", {}, object.union({"containers": [cpu]}, spec)))

test_host_namespaces_denied_in_generic_namespaces if {
	denied(generic({"hostPID": true}), "shares the node's PID namespace (spec.hostPID)")
	denied(generic({"hostIPC": true}), "shares the node's IPC namespace")
	denied(generic({"hostNetwork": true}), "shares the node's network namespace")
}

test_unmasked_proc_denied if {
	denied(generic({"containers": [object.union(cpu, {"securityContext": {"procMount": "Unmasked"}})]}), "unmasks /proc")
}

test_runtime_sockets_denied if {
	every p in ["/run/containerd/containerd.sock", "/run/crio/crio.sock", "/run/docker.sock", "/run"] {
		denied(host_path(p), "mounts host path")
	}
}

queued_dra_pod(claims) := f.pod("dra", f.profile("dra-queued"), {
	"resourceClaims": claims,
	"containers": [object.union(cpu, {"resources": {"claims": [{"name": "gpu"}]}})],
})

# Kueue never admits a pod with a named claim: refused, not left gated.
test_named_claim_of_a_queued_profile_denied if {
	some v in violation with input as f.input_for(queued_dra_pod([{"name": "gpu", "resourceClaimName": "made-earlier"}])) with data.inventory as synced_claim("made-earlier", a100_request)
	contains(v.msg, "schedules through Kueue, which never admits a pod with a named ResourceClaim")
}

test_template_claim_of_a_queued_profile_admitted if {
	count(violation) == 0 with input as f.input_for(queued_dra_pod([{"name": "gpu", "resourceClaimTemplateName": "dra-queued"}])) with data.inventory as f.inventory
}

# A named claim that asks for nothing confines nothing.
test_named_empty_claim_denied if {
	inv := object.union(f.inventory, {"namespace": {"dra": {"resource.k8s.io/v1": {"ResourceClaim": {"empty": {
		"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
		"metadata": {"name": "empty", "namespace": "dra"},
		"spec": {},
	}}}}}})
	some v in violation with input as f.input_for(dra_pod([{"name": "gpu", "resourceClaimName": "empty"}])) with data.inventory as inv
	contains(v.msg, "ResourceClaim empty: it asks for no device")
}

# A pod of a retired profile that aims at accelerator nodes is told the
# replacement, not that its profile hands out nothing.
test_retired_profile_named_in_placement if {
	spec := {"containers": [f.gpu_container(1)], "nodeSelector": {"accelerator.opendatahub.io/type": "nvidia-v100-16gb"}}
	some v in violation with input as f.input_for(f.pod("ml", f.profile("retired-gpu"), spec)) with data.inventory as f.inventory
	contains(v.msg, `hardware profile "retired-gpu" is retired: use premium-gpu`)
}

# The pods the admission entry composes from a workload, as it judges them.
composed_msgs(w) := {[where, v.msg] |
	inp := f.input_for(w)
	pods := accelc.list_template_pods with input as inp
	some where, pod in pods
	some v in violation with input as object.union(inp, {"review": {"object": pod, "fromTemplate": true}}) with data.inventory as f.inventory
}

# A TrainJob's override reaches the pods of the jobs it targets: a
# container's environment that names every GPU is judged there.
test_trainjob_override_visible_devices_denied if {
	w := {
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
		"metadata": {"name": "tj", "namespace": "ml"},
		"spec": {"runtimeRef": {"name": "torch-distributed"}, "podTemplateOverrides": [{
			"targetJobs": [{"name": "dataset-initializer"}],
			"spec": {"containers": [{"name": "dataset-initializer", "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}]},
		}]},
	}
	some [where, msg] in composed_msgs(w)
	where == "podTemplateOverrides[0] dataset-initializer"
	contains(msg, "sets NVIDIA_VISIBLE_DEVICES=all")
}

# An InferenceService's transformer mounts what a pod would.
test_inferenceservice_transformer_host_path_denied if {
	w := {
		"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
		"metadata": {"name": "isvc", "namespace": "ml"},
		"spec": {
			"predictor": {"model": {"modelFormat": {"name": "sklearn"}, "storageUri": "s3://models/x"}},
			"transformer": {"containers": [cpu], "volumes": [{"name": "h", "hostPath": {"path": "/dev"}}]},
		},
	}
	some [where, msg] in composed_msgs(w)
	where == "transformer"
	contains(msg, "mounts host path")
}

# A component of a wrapped object the AppWrapper controller creates.
test_appwrapper_privileged_component_denied if {
	w := {
		"apiVersion": "workload.codeflare.dev/v1beta2", "kind": "AppWrapper",
		"metadata": {"name": "aw", "namespace": "ml"},
		"spec": {"components": [{"template": {
			"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
			"spec": {"template": {"spec": {"containers": [object.union(cpu, {"securityContext": {"privileged": true}})]}}},
		}}]},
	}
	some [where, _] in composed_msgs(w)
	where == "components[0] Deployment template.spec.template"
}
