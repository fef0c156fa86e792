// Package egraph provides e-graph state packed for the GPU: the flat device
// image of an e-graph snapshot and the launch-wave plans of the
// equality-saturation kernels that run over it.
package egraph
