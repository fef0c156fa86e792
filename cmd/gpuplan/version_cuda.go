//go:build cuda

package main

// buildHasCUDA reports whether this build runs on GPUs (-tags cuda).
const buildHasCUDA = true
