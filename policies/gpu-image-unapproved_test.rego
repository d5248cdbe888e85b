package gpuops.policy.gpu_image_unapproved_test

import data.gpuops.policy.gpu_image_unapproved as p
import rego.v1

pod(image) := {"gpu_templates": [{
	"object": 0, "kind": "Pod", "name": "p",
	"containers": [{"name": "c", "image": image, "path": ["spec", "containers", 0]}],
}]}

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
}

test_placeholders_are_skipped if {
	count(p.deny) == 0 with input as pod("${IMAGE}")
}
