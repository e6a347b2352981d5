package workloads

// VisibilityEnv are the variables whose values Trim keeps.
var VisibilityEnv = visibilityEnv
