# Only approved, pinned images run on GPU nodes.
package gpuops.policy.gpu_image_unapproved

import rego.v1

metadata := {
	"id": "gpu-image-unapproved",
	"severity": "error",
	"summary": "GPU pod image from a registry not allowed, or on `:latest`",
	"description": concat("", [
		`## What it does
Flags the images of GPU pods (every container of a pod that asks for GPUs) that are on
`,
		"`:latest`",
		` or carry no tag, and, when `,
		"`policy-data: {allowed_registries: [...]}`",
		` lists
registries (`,
		"`nvcr.io/nvidia`",
		`, `,
		"`123456789012.dkr.ecr.us-east-1.amazonaws.com`",
		`), images from
any other registry. Images without a registry are Docker Hub's (`,
		"`docker.io`",
		`).

## Why is this bad?
GPU nodes hold the most valuable data and credentials of the cluster (model weights, training
data, instance roles). An image from an unvetted registry runs with all of it; an image on
`,
		"`:latest`",
		` changes under a running training job, so a restarted worker runs other code (and
other CUDA libraries) than its peers.

## Example
    containers:
    - name: train
      image: pytorch/pytorch:latest
      resources: {limits: {nvidia.com/gpu: 8}}

## Fix
Pull from an approved registry and pin a version tag or a digest:
`,
		"`nvcr.io/nvidia/pytorch:24.05-py3`",
		`.`,
	]),
}

default registries := []

registries := data.allowed_registries if is_array(data.allowed_registries)

# Each allowed registry as the prefix an image's `registry/repository` starts with (built once).
prefixes := {concat("", [trim_suffix(r, "/"), "/"]) | some r in registries}

# Images are judged from the input's groupings of the distinct GPU images, each with the
# reference as the runtime reads it (`pytorch/pytorch:2.3` is `docker.io/pytorch/pytorch:2.3`):
# a registry once per repository (`gpu_images_by_repository`), and only the images on a floating
# tag (`gpu_images_by_tag`). Images filled in later (`${IMAGE}`, `{{ .Values.image }}`) have no
# repository nor tag and leave nothing to judge yet.

# One builtin call per repository, not one per image nor a function call per prefix.
unapproved := {img |
	some name, images in input.gpu_images_by_repository
	not strings.any_prefix_match(name, prefixes)
	some img, _ in images
}

floating := {"", "latest"}

# A digest pins the image whatever its tag says.
unpinned := {img: tag |
	some tag in floating
	some img, ref in object.get(input.gpu_images_by_tag, tag, {})
	ref.digest == ""
}

deny contains finding if {
	count(registries) > 0
	bad := unapproved
	count(bad) > 0
	some t in input.gpu_templates
	some c in t.containers
	c.image in bad
	finding := {
		"msg": sprintf("GPU pod of %s `%s` runs `%s`, from a registry not allowed (allowed: %s)", [t.kind, object.get(t, "name", "<unnamed>"), c.image, concat(", ", registries)]),
		"object": t.object,
		"path": array.concat(c.path, ["image"]),
		"help": "pull the image from an approved registry (mirror it there first)",
	}
}

deny contains finding if {
	pins := unpinned
	count(pins) > 0
	some t in input.gpu_templates
	some c in t.containers
	tg := pins[c.image]
	what := {true: "on `:latest`", false: "without a tag (`:latest`)"}[tg == "latest"]
	finding := {
		"msg": sprintf("GPU pod of %s `%s` runs `%s` %s: restarted workers may run other code than their peers", [t.kind, object.get(t, "name", "<unnamed>"), c.image, what]),
		"object": t.object,
		"path": array.concat(c.path, ["image"]),
		"help": "pin a version tag or a digest (`@sha256:…`)",
	}
}
