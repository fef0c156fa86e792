package planners

import (
	"cmp"
	"math"
	"slices"
)

// positionsByID returns the positions 0..n-1 ordered by (id, position), and
// the earliest position whose id already appeared at an earlier position (n
// when every id is unique). The planners use it to visit items in id order
// and to report the first repeated id in input order without a map.
func positionsByID(n int, id func(int) uint32) (order []int, firstRepeat int) {
	order = make([]int, n)
	if uint64(n) <= math.MaxUint32 {
		// Packing (id, position) into one word sorts a flat []uint64,
		// several times faster than sorting positions through a closure.
		keys := make([]uint64, n)
		for i := range keys {
			keys[i] = uint64(id(i))<<32 | uint64(i)
		}
		slices.Sort(keys)
		for k, key := range keys {
			order[k] = int(uint32(key))
		}
	} else {
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int {
			if c := cmp.Compare(id(a), id(b)); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
	}
	firstRepeat = n
	for k := 1; k < n; k++ {
		if id(order[k]) == id(order[k-1]) {
			firstRepeat = min(firstRepeat, order[k])
		}
	}
	return order, firstRepeat
}
