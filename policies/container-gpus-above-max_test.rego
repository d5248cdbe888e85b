package gpuops.policy.container_gpus_above_max_test

import data.gpuops.policy.container_gpus_above_max as p
import rego.v1

pod(gpus) := {"gpu_templates": [{
	"object": 0, "kind": "Pod", "name": "p", "gpus": gpus,
	"containers": [{"name": "c", "gpus": gpus, "gpu_path": ["spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"]}],
}]}

test_sixteen_gpus_is_flagged if {
	findings := p.deny with input as pod(16)
	count(findings) == 1
	some f in findings
	f.path == ["spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"]
	contains(f.msg, "asks for 16 GPUs")
}

test_eight_gpus_is_fine if {
	count(p.deny) == 0 with input as pod(8)
}

test_maximum_comes_from_data if {
	count(p.deny) == 1 with input as pod(8) with data.max_gpus_per_container as 4
}

# Two containers of 6: the pod's 12 GPUs are above the maximum, neither container is.
test_pod_above_the_maximum_with_containers_within_it_is_fine if {
	count(p.deny) == 0 with input as {"gpu_templates": [{
		"object": 0, "kind": "Pod", "name": "p", "gpus": 12,
		"containers": [
			{"name": "a", "gpus": 6, "gpu_path": ["spec", "containers", 0]},
			{"name": "b", "gpus": 6, "gpu_path": ["spec", "containers", 1]},
		],
	}]}
}
