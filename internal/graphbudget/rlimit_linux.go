//go:build linux

package graphbudget

import "syscall"

// addressSpaceLimit returns the process's address-space limit (RLIMIT_AS,
// ulimit -v) in bytes; 0 where there is none.
func addressSpaceLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil || r.Cur >= unlimited {
		return 0
	}
	return r.Cur
}
