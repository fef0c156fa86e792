// Package frontier provides graph and frontier state: compact CSR graphs,
// graph generators and loaders, CPU reference traversals, and the frontier
// wave plans that the executor runs on the GPU.
package frontier
