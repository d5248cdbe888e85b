package gpuops.policy.team_label_missing_test

import data.gpuops.policy.team_label_missing as p
import rego.v1

job(labels, template_labels) := {
	"gpu_templates": [{
		"object": 0, "kind": "Job", "name": "train", "object_labels": labels,
		"path": ["spec", "template"], "labels": template_labels,
	}],
}

test_unlabelled_gpu_workload_is_flagged if {
	findings := p.deny with input as job({}, {})
	count(findings) == 1
	some f in findings
	f.object == 0
	f.path == ["metadata", "name"]
	contains(f.msg, "`team` or `owner`")
}

test_points_at_the_labels_a_team_label_would_join if {
	some f in p.deny with input as job({}, {"app": "x"})
	f.path == ["spec", "template", "metadata", "labels"]
	some g in p.deny with input as job({"app": "x"}, {})
	g.path == ["metadata", "labels"]
}

test_template_label_is_enough if {
	count(p.deny) == 0 with input as job({}, {"team": "search"})
}

test_workload_label_is_enough if {
	count(p.deny) == 0 with input as job({"owner": "alice"}, {})
}

test_empty_label_value_does_not_count if {
	count(p.deny) == 1 with input as job({"team": ""}, {})
	count(p.deny) == 1 with input as job({"team": ""}, {"team": ""})
	count(p.deny) == 0 with input as job({"team": ""}, {"owner": "bob"})
}

test_a_non_string_value_does_not_count if {
	count(p.deny) == 1 with input as job({"team": 5}, {})
	count(p.deny) == 1 with input as job({"team": true}, {"team": null})
	count(p.deny) == 1 with input as job({"team": ["a"]}, {"team": {"a": "b"}})
}

test_no_keys_no_findings if {
	count(p.deny) == 0 with input as job({"team": "x"}, {}) with data.team_label_keys as []
}

test_keys_come_from_data if {
	count(p.deny) == 1 with input as job({"team": "x"}, {}) with data.team_label_keys as ["cost-center"]
	count(p.deny) == 0 with input as job({"cost-center": "42"}, {}) with data.team_label_keys as ["cost-center"]
}
