# Every namespace that runs GPU workloads has a quota on its accelerators.
package gpuops.policy.gpu_quota_missing

import rego.v1

metadata := {
	"id": "gpu-quota-missing",
	"severity": "error",
	"summary": "namespace with GPU workloads but no ResourceQuota on the accelerator",
	"description": concat("", [
		`## What it does
For each namespace whose workloads ask for a GPU resource (`,
		"`nvidia.com/gpu`",
		`,
`,
		"`aws.amazon.com/neuron`",
		`…), looks for a ResourceQuota in that namespace with a `,
		"`hard`",
		`
limit on it (`,
		"`requests.nvidia.com/gpu`",
		`). Points at the Namespace when the repository declares
it, else at the namespace's first GPU workload.

## Why is this bad?
Without a quota one namespace can take every GPU the cluster can launch: a runaway sweep
scales Karpenter to its pool limits and other teams' jobs wait, or the bill does.

## Example
    kind: Namespace
    metadata: {name: research}
    # … Jobs in research ask for nvidia.com/gpu, and no ResourceQuota covers it

## Fix
    kind: ResourceQuota
    metadata: {name: gpus, namespace: research}
    spec:
      hard: {requests.nvidia.com/gpu: "32"}`,
	]),
}

# [namespace, resource] pairs some ResourceQuota limits. Quota counts an extended resource only
# as `requests.<name>`: a bare or `limits.` entry caps nothing (`gpu-quota-unenforced`).
covered contains [ns, r] if {
	some q in object.get(input.by_kind, "ResourceQuota", [])
	ns := q.metadata.namespace
	some k, _ in object.get(q, ["spec", "hard"], {})
	startswith(k, "requests.")
	r := trim_prefix(k, "requests.")
}

anchor(facts) := [facts.object, ["metadata", "name"]] if is_number(facts.object)

anchor(facts) := [facts.gpu_objects[0], ["metadata", "namespace"]] if {
	not is_number(facts.object)
}

deny contains finding if {
	some ns, facts in input.namespaces
	missing := [r | some r in facts.gpu_resources; not [ns, r] in covered]
	count(missing) > 0
	[obj, path] := anchor(facts)
	finding := {
		"msg": sprintf("namespace `%s` runs GPU workloads but no ResourceQuota limits %s: one team can take every GPU the cluster launches", [ns, concat(", ", [sprintf("`%s`", [r]) | some r in missing])]),
		"object": obj,
		"path": path,
		"help": sprintf("add a ResourceQuota in `%s` with `hard: {requests.%s: \"<n>\"}`", [ns, missing[0]]),
	}
}
