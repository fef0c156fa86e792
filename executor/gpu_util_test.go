package executor

import (
	"slices"
	"time"
)

func nowNs() int64 { return time.Now().UnixNano() }

func median(v []uint64) uint64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
