package gpuops.policy.gpu_pdb_missing_test

import data.gpuops.policy.gpu_pdb_missing as p
import rego.v1

doc(kind, pdbs) := {
	"objects": [{"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "llm", "namespace": "serving"}}],
	"by_kind": {"PodDisruptionBudget": pdbs},
	"gpu_templates": [{"object": 0, "kind": kind, "name": "llm", "labels": {"app": "llm", "tier": "gpu"}}],
}

pdb(ns, selector) := {"metadata": {"namespace": ns}, "spec": {"selector": selector}}

test_deployment_without_pdb_is_flagged if {
	findings := p.deny with input as doc("Deployment", [])
	count(findings) == 1
	some f in findings
	f.path == ["metadata", "name"]
}

test_matching_pdb_passes if {
	count(p.deny) == 0 with input as doc("Deployment", [pdb("serving", {"matchLabels": {"app": "llm"}})])
	count(p.deny) == 0 with input as doc("Deployment", [pdb("serving", {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gpu"]}]})])
	count(p.deny) == 0 with input as doc("Deployment", [pdb("serving", {})])
}

test_pdb_that_selects_other_pods_does_not_count if {
	count(p.deny) == 1 with input as doc("Deployment", [pdb("serving", {"matchLabels": {"app": "other"}})])
	count(p.deny) == 1 with input as doc("Deployment", [pdb("other", {"matchLabels": {"app": "llm"}})])
	count(p.deny) == 1 with input as doc("Deployment", [pdb("serving", {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]})])
}

test_other_kinds_are_not_judged if {
	count(p.deny) == 0 with input as doc("StatefulSet", [])
}
