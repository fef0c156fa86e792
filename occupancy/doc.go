// Package occupancy provides GPU device profiles (built in and loaded from
// JSON), the exact CUDA occupancy rules, and launch diagnostics.
package occupancy
