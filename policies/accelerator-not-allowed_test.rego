package gpuops.policy.accelerator_not_allowed_test

import data.gpuops.policy.accelerator_not_allowed as p
import rego.v1

allowed := {"research": ["A100", "h100"]}

template(ns, selector, pools) := {
	"object": 0, "kind": "Job", "name": "sweep", "namespace": ns, "node_selector": selector,
	"spec_path": ["spec", "template", "spec"], "nodepools": pools,
}

doc(ns, selector, pools) := {
	"gpu_templates": [template(ns, selector, pools)],
	"gpu_templates_by_namespace": {ns: [template(ns, selector, pools)]},
	"nodepools": {
		"a100": {"name": "a100", "gpu_names": ["a100"]},
		"h200": {"name": "h200", "gpu_names": ["h200"]},
		"open": {"name": "open", "gpu_names": null},
	},
}

test_selected_accelerator_not_allowed if {
	findings := p.deny with input as doc("research", {"karpenter.k8s.aws/instance-gpu-name": "h200"}, []) with data.namespace_accelerators as allowed
	count(findings) == 1
	some f in findings
	f.path == ["spec", "template", "spec", "nodeSelector", "karpenter.k8s.aws/instance-gpu-name"]
	contains(f.msg, "selects `h200`")
}

test_selected_accelerator_allowed_case_insensitively if {
	count(p.deny) == 0 with input as doc("research", {"karpenter.k8s.aws/instance-gpu-name": "a100"}, ["h200"]) with data.namespace_accelerators as allowed
}

test_a_selector_that_is_no_string_selects_nothing if {
	findings := p.deny with input as doc("research", {"karpenter.k8s.aws/instance-gpu-name": 100}, ["h200"]) with data.namespace_accelerators as allowed
	count(findings) == 1
	some f in findings
	contains(f.msg, "may land on NodePool `h200` (h200); namespace `research` may use only a100, h100")
}

test_landing_pool_not_allowed if {
	findings := p.deny with input as doc("research", {}, ["a100", "h200"]) with data.namespace_accelerators as allowed
	count(findings) == 1
	some f in findings
	contains(f.msg, "`h200` (h200)")
	not contains(f.msg, "`a100`")
}

test_open_pools_and_other_namespaces_are_not_judged if {
	count(p.deny) == 0 with input as doc("research", {}, ["open"]) with data.namespace_accelerators as allowed
	count(p.deny) == 0 with input as doc("prod", {}, ["h200"]) with data.namespace_accelerators as allowed
}

test_no_data_no_findings if {
	count(p.deny) == 0 with input as doc("research", {"karpenter.k8s.aws/instance-gpu-name": "h200"}, ["h200"])
}
