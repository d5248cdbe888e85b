# GPU serving Deployments keep replicas through node drains.
package gpuops.policy.gpu_pdb_missing

import rego.v1

metadata := {
	"id": "gpu-pdb-missing",
	"severity": "warning",
	"summary": "Deployment with GPUs but no PodDisruptionBudget",
	"description": `## What it does
Flags Deployments whose pods ask for GPUs when no PodDisruptionBudget in their namespace selects
those pods (matchLabels and matchExpressions against the pod template's labels).

## Why is this bad?
Karpenter consolidation, node expiry and AMI drift drain GPU nodes on their own schedule. Without a
PodDisruptionBudget every replica of a model server may be evicted at once, and a GPU node takes
minutes to boot and load weights: the service is down meanwhile.

## Example
    kind: Deployment
    metadata: {name: llm, namespace: serving}
    spec:
      template:
        metadata: {labels: {app: llm}}
        spec:
          containers:
          - resources: {limits: {nvidia.com/gpu: 1}}

## Fix
    kind: PodDisruptionBudget
    metadata: {name: llm, namespace: serving}
    spec:
      maxUnavailable: 1
      selector: {matchLabels: {app: llm}}`,
}

match_expr(e, labels) if {
	e.operator == "In"
	labels[e.key] in e.values
}

match_expr(e, labels) if {
	e.operator == "NotIn"
	not labels[e.key] in e.values
}

match_expr(e, labels) if {
	e.operator == "Exists"
	_ = labels[e.key]
}

match_expr(e, labels) if {
	e.operator == "DoesNotExist"
	not labels[e.key]
}

# policy/v1: an empty selector selects every pod of the namespace.
selects(sel, labels) if {
	every k, v in object.get(sel, "matchLabels", {}) {
		labels[k] == v
	}
	every e in object.get(sel, "matchExpressions", []) {
		match_expr(e, labels)
	}
}

covered(o, t) if {
	some pdb in object.get(input.by_kind, "PodDisruptionBudget", [])
	object.get(pdb, ["metadata", "namespace"], "") == object.get(o, ["metadata", "namespace"], "")
	selects(object.get(pdb, ["spec", "selector"], {}), t.labels)
}

deny contains finding if {
	some t in input.gpu_templates
	t.kind == "Deployment"
	o := input.objects[t.object]
	startswith(o.apiVersion, "apps/")
	not covered(o, t)
	finding := {
		"msg": sprintf("Deployment `%s` runs GPU pods without a PodDisruptionBudget: a node drain may evict every replica at once", [object.get(t, "name", "<unnamed>")]),
		"object": t.object,
		"path": ["metadata", "name"],
		"help": "add a PodDisruptionBudget (`maxUnavailable: 1`) whose selector matches the pod template's labels",
	}
}
