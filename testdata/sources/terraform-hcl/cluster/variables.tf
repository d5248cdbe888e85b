variable "cluster_name" {
  type = string
}

variable "gpu_instance_types" {
  type    = list(string)
  default = ["g5.xlarge"]
}

variable "teams" {
  type = map(number)
  default = {
    team-a = 8
    team-b = 4
  }
}

variable "gpu_pools" {
  type = map(object({ family = string, gpus = number }))
  default = {
    a100 = { family = "p4d", gpus = 16 }
    h100 = { family = "p5", gpus = 32 }
  }
}
