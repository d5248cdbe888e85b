# GPU workloads must say who pays for them.
package gpuops.policy.team_label_missing

import rego.v1

metadata := {
	"id": "team-label-missing",
	"severity": "error",
	"summary": "GPU workload without an owner or team label",
	"description": concat("", [
		`## What it does
Flags each GPU pod template whose pods carry none of the chargeback label keys (default
`,
		"`team`",
		` and `,
		"`owner`",
		`; `,
		"`policy-data: {team_label_keys: [...]}`",
		` sets them), on the pod
template or on the workload itself.

## Why is this bad?
GPU hours are the largest line of the bill. Cost tools (Kubecost, OpenCost, CUR split by label)
attribute them by pod label: an unlabelled training run is charged to nobody, and nobody is asked
why it ran for a week.

## Example
    kind: Job
    metadata: {name: finetune, namespace: ml}
    spec:
      template:
        spec:
          containers:
          - name: train
            resources: {limits: {nvidia.com/gpu: 8}}

## Fix
Label the pod template (or the workload): `,
		"`metadata.labels.team: search-ranking`",
		`.`,
	]),
}

default keys := ["team", "owner"]

keys := data.team_label_keys if is_array(data.team_label_keys)

labelled(labels) if {
	some k in keys
	is_string(labels[k])
	labels[k] != ""
}

# Point at the labels a team label would join: the pod template's, else the workload's (a path
# that does not resolve points at the workload's name).
place(t) := array.concat(t.path, ["metadata", "labels"]) if count(t.labels) > 0

place(t) := ["metadata", "labels"] if {
	count(t.labels) == 0
	count(t.object_labels) > 0
}

place(t) := ["metadata", "name"] if {
	count(t.labels) == 0
	count(t.object_labels) == 0
}

deny contains finding if {
	# Rule values read before the loop: a rule named inside it is looked up per template.
	first := keys[0]
	yes := [true, true]
	some t in input.gpu_templates
	# Most templates carry the first key: two comparisons skip them without a function call per
	# template. Rego orders values null < boolean < number < string < array < set < object, so
	# above "" and below [] is exactly a non-empty string.
	not [t.object_labels[first] > "", t.object_labels[first] < []] == yes
	not [t.labels[first] > "", t.labels[first] < []] == yes
	not labelled(t.object_labels)
	not labelled(t.labels)
	names := concat(" or ", [sprintf("`%s`", [k]) | some k in keys])
	finding := {
		"msg": sprintf("%s `%s` runs GPU pods without a %s label: its GPU hours cannot be charged back", [t.kind, object.get(t, "name", "<unnamed>"), names]),
		"object": t.object,
		"path": place(t),
		"help": sprintf("add `%s: <team>` to the pod template's labels", [first]),
	}
}
