package gpuops.policy.gpu_pdb_missing_test

import data.gpuops.policy.gpu_pdb_missing as p
import rego.v1

template(kind, api_version, pdbs) := {
	"object": 0, "kind": kind, "api_version": api_version, "namespace": "serving", "name": "llm",
	"labels": {"app": "llm", "tier": "gpu"}, "pdbs": pdbs,
}

doc(kind, api_version, pdbs) := {
	"gpu_templates": [template(kind, api_version, pdbs)],
	"gpu_templates_by_kind": {kind: [template(kind, api_version, pdbs)]},
}

test_deployment_without_pdb_is_flagged if {
	findings := p.deny with input as doc("Deployment", "apps/v1", [])
	count(findings) == 1
	some f in findings
	f.path == ["metadata", "name"]
	f.object == 0
}

test_selecting_pdb_passes if {
	count(p.deny) == 0 with input as doc("Deployment", "apps/v1", [3])
}

test_the_first_object_as_pdb_passes if {
	# Index 0 is a PodDisruptionBudget like any other, not a false value.
	count(p.deny) == 0 with input as doc("Deployment", "apps/v1", [0])
}

test_other_kinds_are_not_judged if {
	count(p.deny) == 0 with input as doc("StatefulSet", "apps/v1", [])
	count(p.deny) == 0 with input as doc("Deployment", "example.com/v1", [])
}

test_no_gpu_deployments if {
	count(p.deny) == 0 with input as {"gpu_templates": [], "gpu_templates_by_kind": {}}
}
