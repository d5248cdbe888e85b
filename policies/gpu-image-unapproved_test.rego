package gpuops.policy.gpu_image_unapproved_test

import data.gpuops.policy.gpu_image_unapproved as p
import rego.v1

# The facts gpuops gives for `image` (`image_ref` and the `gpu_images` views in the input
# document).
refs := {
	"nvcr.io/nvidia/pytorch:latest": ["nvcr.io", "nvidia/pytorch", "latest", ""],
	"nvcr.io/nvidia/pytorch": ["nvcr.io", "nvidia/pytorch", "", ""],
	"nvcr.io/nvidia/pytorch:24.05-py3": ["nvcr.io", "nvidia/pytorch", "24.05-py3", ""],
	"nvcr.io/nvidia/pytorch@sha256:0123": ["nvcr.io", "nvidia/pytorch", "", "sha256:0123"],
	"localhost:5000/train:1.2": ["localhost:5000", "train", "1.2", ""],
	"pytorch/pytorch:2.3.0": ["docker.io", "pytorch/pytorch", "2.3.0", ""],
	"ubuntu:24.04": ["docker.io", "library/ubuntu", "24.04", ""],
	"123456789012.dkr.ecr.us-east-1.amazonaws.com/train:7": ["123456789012.dkr.ecr.us-east-1.amazonaws.com", "train", "7", ""],
	"nvcr.io/nvidia-fake/x:1": ["nvcr.io", "nvidia-fake/x", "1", ""],
}

image_ref(image) := null if not refs[image]

image_ref(image) := {"registry": r, "repository": repo, "tag": tag, "digest": digest, "full": full} if {
	[r, repo, tag, digest] := refs[image]
	with_tag := concat(":", [x | some x in [concat("/", [r, repo]), tag]; x != ""])
	full := concat("@", [x | some x in [with_tag, digest]; x != ""])
}

pod(image) := {
	"gpu_templates": [{
		"object": 0, "kind": "Pod", "name": "p",
		"containers": [{"name": "c", "image": image, "image_ref": image_ref(image), "path": ["spec", "containers", 0]}],
	}],
	"gpu_images": {image: image_ref(image)},
	"gpu_images_by_repository": {concat("/", [ref.registry, ref.repository]): {image: ref} |
		ref := image_ref(image)
		ref != null
	},
	"gpu_images_by_tag": {ref.tag: {image: ref} | ref := image_ref(image); ref != null},
}

registries := ["nvcr.io/nvidia", "123456789012.dkr.ecr.us-east-1.amazonaws.com/"]

test_latest_is_flagged if {
	findings := p.deny with input as pod("nvcr.io/nvidia/pytorch:latest")
	count(findings) == 1
	some f in findings
	f.path == ["spec", "containers", 0, "image"]
	contains(f.msg, "on `:latest`")
}

test_untagged_is_flagged if {
	count(p.deny) == 1 with input as pod("nvcr.io/nvidia/pytorch")
}

test_digest_and_tags_are_fine if {
	count(p.deny) == 0 with input as pod("nvcr.io/nvidia/pytorch:24.05-py3")
	count(p.deny) == 0 with input as pod("nvcr.io/nvidia/pytorch@sha256:0123")
	count(p.deny) == 0 with input as pod("localhost:5000/train:1.2")
}

test_registry_not_allowed if {
	findings := p.deny with input as pod("pytorch/pytorch:2.3.0") with data.allowed_registries as registries
	count(findings) == 1
	some f in findings
	contains(f.msg, "from a registry not allowed")
}

test_allowed_registries_pass if {
	count(p.deny) == 0 with input as pod("nvcr.io/nvidia/pytorch:24.05-py3") with data.allowed_registries as registries
	count(p.deny) == 0 with input as pod("123456789012.dkr.ecr.us-east-1.amazonaws.com/train:7") with data.allowed_registries as registries
}

test_prefix_must_end_at_a_path_boundary if {
	count(p.deny) == 1 with input as pod("nvcr.io/nvidia-fake/x:1") with data.allowed_registries as registries
}

test_docker_hub_is_docker_io if {
	count(p.deny) == 0 with input as pod("ubuntu:24.04") with data.allowed_registries as ["docker.io/library"]
	count(p.deny) == 1 with input as pod("ubuntu:24.04") with data.allowed_registries as ["docker.io/pytorch"]
}

# Allowed entries are registries or repository prefixes, never a tag.
test_a_tag_in_the_allow_list_allows_nothing if {
	count(p.deny) == 1 with input as pod("nvcr.io/nvidia/pytorch:24.05-py3") with data.allowed_registries as ["nvcr.io/nvidia/pytorch:24.05-py3"]
}

test_placeholders_are_skipped if {
	count(p.deny) == 0 with input as pod("${IMAGE}")
}

test_placeholders_are_not_judged if {
	count(p.deny) == 0 with input as pod("${IMAGE}") with data.allowed_registries as registries
}
