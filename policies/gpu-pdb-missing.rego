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

deny contains finding if {
	some t in object.get(input.gpu_templates_by_kind, "Deployment", [])
	# `t.pdbs`: the PodDisruptionBudgets of its namespace whose selector (matchLabels and
	# matchExpressions; policy/v1: an empty one selects every pod) selects the template's pods.
	# No first one: none selects them. Asked first: it is cheaper than the builtin call below.
	not t.pdbs[0]
	startswith(t.api_version, "apps/")
	finding := {
		"msg": sprintf("Deployment `%s` runs GPU pods without a PodDisruptionBudget: a node drain may evict every replica at once", [object.get(t, "name", "<unnamed>")]),
		"object": t.object,
		"path": ["metadata", "name"],
		"help": "add a PodDisruptionBudget (`maxUnavailable: 1`) whose selector matches the pod template's labels",
	}
}
