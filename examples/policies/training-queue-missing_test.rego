package org.training_queue_test

import data.org.training_queue
import rego.v1

template(intent, queue) := {"object": 0, "kind": "Job", "name": "train", "intent": intent, "queue": queue}

test_training_without_queue_is_denied if {
	count(training_queue.deny) == 1 with input as {"gpu_templates": [template("training", null)]}
}

test_queue_label_that_resolves_passes if {
	queue := {"name": "team-a", "local_queue": "ml/team-a", "cluster_queue": "gpu", "flavors": ["a100"]}
	count(training_queue.deny) == 0 with input as {"gpu_templates": [template("training", queue)]}
}

test_inference_is_not_judged if {
	count(training_queue.deny) == 0 with input as {"gpu_templates": [template("inference", null)]}
}
