//go:build !linux

package graphbudget

// addressSpaceLimit returns 0: only Linux's limit is read.
func addressSpaceLimit() uint64 { return 0 }
