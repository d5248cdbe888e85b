package gpuops.policy.gpu_quota_missing_test

import data.gpuops.policy.gpu_quota_missing as p
import rego.v1

doc(namespace_object, quotas) := {
	"by_kind": {"ResourceQuota": quotas},
	"namespaces": {"research": {
		"name": "research", "object": namespace_object,
		"gpu_templates": [0], "gpu_objects": [1], "gpu_resources": ["nvidia.com/gpu"],
	}},
}

quota(ns, hard) := {"metadata": {"namespace": ns}, "spec": {"hard": hard}}

test_missing_quota_points_at_the_namespace if {
	findings := p.deny with input as doc(0, [])
	count(findings) == 1
	some f in findings
	f.object == 0
	f.path == ["metadata", "name"]
	contains(f.msg, "`nvidia.com/gpu`")
}

test_without_namespace_object_points_at_the_first_workload if {
	some f in p.deny with input as doc(null, [])
	f.object == 1
	f.path == ["metadata", "namespace"]
}

test_quota_on_gpu_requests_passes if {
	count(p.deny) == 0 with input as doc(0, [quota("research", {"requests.nvidia.com/gpu": "16"})])
}

test_quota_elsewhere_or_on_cpu_does_not_count if {
	count(p.deny) == 1 with input as doc(0, [quota("other", {"requests.nvidia.com/gpu": "16"})])
	count(p.deny) == 1 with input as doc(0, [quota("research", {"requests.cpu": "64"})])
}

test_a_quota_never_counted_does_not_count if {
	count(p.deny) == 1 with input as doc(0, [quota("research", {"nvidia.com/gpu": "16"})])
	count(p.deny) == 1 with input as doc(0, [quota("research", {"limits.nvidia.com/gpu": "16"})])
}
