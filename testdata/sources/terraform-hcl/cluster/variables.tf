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
