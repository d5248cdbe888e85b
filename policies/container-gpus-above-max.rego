# No container asks for more GPUs than one node should give it.
package gpuops.policy.container_gpus_above_max

import rego.v1

metadata := {
	"id": "container-gpus-above-max",
	"severity": "error",
	"summary": "container asks for more GPUs than the organisation's maximum",
	"description": concat("", [
		`## What it does
Flags containers whose GPU request (limit, else request) is above a maximum: 8 by default,
`,
		"`policy-data: {max_gpus_per_container: N}`",
		` to change it.

## Why is this bad?
The largest GPU nodes have 8 GPUs: a container asking for 16 never schedules and its pods wait
forever. Platform teams also cap requests so one job cannot take a whole reservation; work that
needs more GPUs is split across pods (torchrun, MPI, Ray) instead.

## Example
    containers:
    - name: train
      resources: {limits: {nvidia.com/gpu: 16}}

## Fix
Ask for at most the maximum per container and scale out with more workers.`,
	]),
}

default limit := 8

limit := data.max_gpus_per_container if is_number(data.max_gpus_per_container)

deny contains finding if {
	# Read once, not per container (a rule named inside the loop is looked up each time).
	most := limit
	some t in input.gpu_templates
	# A pod's GPUs are at least any one container's: pods within the maximum are skipped
	# without walking their containers.
	t.gpus > most
	some c in t.containers
	c.gpus > most
	finding := {
		"msg": sprintf("container `%s` of %s `%s` asks for %v GPUs; the maximum per container is %v", [object.get(c, "name", "<unnamed>"), t.kind, object.get(t, "name", "<unnamed>"), c.gpus, most]),
		"object": t.object,
		"path": c.gpu_path,
		"help": "split the work across more pods (more workers or replicas) with fewer GPUs each",
	}
}
