package org.training_queue

import rego.v1

metadata := {
	"id": "training-queue-missing",
	"severity": "error",
	"summary": "GPU training workload not admitted through a Kueue LocalQueue",
	"description": "Training runs wait in a Kueue queue so quota and fair sharing apply; one that skips it takes GPUs first come, first served.",
}

deny contains {"msg": msg, "object": t.object, "path": ["metadata", "name"]} if {
	some t in input.gpu_templates
	t.intent == "training"
	not t.queue.local_queue
	msg := sprintf("%s `%s` trains on GPUs without a Kueue LocalQueue (`kueue.x-k8s.io/queue-name`)", [t.kind, t.name])
}
