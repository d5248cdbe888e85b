# A namespace runs only on the accelerators it is allowed.
package gpuops.policy.accelerator_not_allowed

import rego.v1

metadata := {
	"id": "accelerator-not-allowed",
	"severity": "error",
	"summary": "GPU workload may run on accelerators its namespace is not allowed",
	"description": concat("", [
		`## What it does
With `,
		"`policy-data: {namespace_accelerators: {research: [a100, h100]}}`",
		`, flags GPU pod
templates of a listed namespace that select an accelerator outside its list
(`,
		"`karpenter.k8s.aws/instance-gpu-name`",
		` in the nodeSelector), or that may land on a NodePool
whose instance types offer one. Pools whose instance types are open (not bounded by their
requirements) are not judged. Namespaces not listed are not checked.

## Why is this bad?
Accelerator budgets are set per team: a research namespace that lands on H200 capacity reserved
for production inference pushes that traffic onto on-demand capacity, or out of the cluster.

## Example
    # policy-data: {namespace_accelerators: {research: [a100]}}
    kind: Job
    metadata: {name: sweep, namespace: research}
    spec:
      template:
        spec:
          nodeSelector: {karpenter.k8s.aws/instance-gpu-name: h100}

## Fix
Select an allowed accelerator (nodeSelector, or a queue whose flavors lead to allowed pools), or
extend the namespace's list in the config.`,
	]),
}

# Namespaces not listed have no set: they are not judged. Built once, not per template.
allowed := {ns: {lower(n) | some n in list} |
	some ns, list in data.namespace_accelerators
	is_array(list)
}

# Each namespace's list as the findings print it, joined once.
allowed_text := {ns: concat(", ", sort(ok)) | some ns, ok in allowed}

# The GPU name a template selects itself is its nodeSelector's
# `karpenter.k8s.aws/instance-gpu-name`, when that is a string. It is read inline below: a
# function call costs the interpreter more than the rest of a template's check.

deny contains finding if {
	# Only the listed namespaces' templates: a namespace without a list is not judged.
	some ns, ok in allowed
	some t in input.gpu_templates_by_namespace[ns]
	selected := t.node_selector["karpenter.k8s.aws/instance-gpu-name"]
	is_string(selected)
	name := lower(selected)
	not name in ok
	finding := {
		"msg": sprintf("%s `%s` selects `%s` GPUs; namespace `%s` may use only %s", [t.kind, object.get(t, "name", "<unnamed>"), name, t.namespace, allowed_text[ns]]),
		"object": t.object,
		"path": array.concat(t.spec_path, ["nodeSelector", "karpenter.k8s.aws/instance-gpu-name"]),
		"help": "select an allowed accelerator, or allow this one for the namespace in `policy-data.namespace_accelerators`",
	}
}

# Per listed namespace, the NodePools its templates that select no accelerator may land on whose
# instance types offer others, with those: judged once per pool, not once per template.
outside := {ns: {p: bad |
	some p in {q | some t in input.gpu_templates_by_namespace[ns]; not is_string(t.node_selector["karpenter.k8s.aws/instance-gpu-name"]); some q in t.nodepools}
	names := input.nodepools[p].gpu_names
	is_array(names)
	bad := sort({n | some n in names; not lower(n) in ok})
	count(bad) > 0
} |
	some ns, ok in allowed
}

deny contains finding if {
	# Only the listed namespaces' templates: a namespace without a list is not judged.
	some ns, ok in allowed
	bad := outside[ns]
	count(bad) > 0
	some t in input.gpu_templates_by_namespace[ns]
	not is_string(t.node_selector["karpenter.k8s.aws/instance-gpu-name"])
	pools := sort([sprintf("`%s` (%s)", [p, concat(", ", bad[p])]) | some p in t.nodepools; bad[p]])
	count(pools) > 0
	finding := {
		"msg": sprintf("%s `%s` may land on NodePool %s; namespace `%s` may use only %s", [t.kind, object.get(t, "name", "<unnamed>"), concat(", ", pools), t.namespace, allowed_text[ns]]),
		"object": t.object,
		"path": array.concat(t.spec_path, ["nodeSelector"]),
		"help": "select pools of allowed accelerators (nodeSelector or the queue's flavors), or bound those pools' instance types",
	}
}
