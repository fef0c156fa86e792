package occupancy

import (
	"fmt"
	"reflect"
	"strings"
)

// FieldDiff is one field whose value differs between two devices. Field is
// the JSON field name; A and B are the values formatted as text.
type FieldDiff struct {
	Field string `json:"field"`
	A     string `json:"a"`
	B     string `json:"b"`
}

// Diff lists every field of Device whose value differs between a and b, in
// the struct's field order (empty when the devices are equal). Use it to
// compare a live device with its closest built-in profile.
func Diff(a, b Device) []FieldDiff {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	t := va.Type()
	var out []FieldDiff
	for i := range t.NumField() {
		fa, fb := va.Field(i).Interface(), vb.Field(i).Interface()
		if reflect.DeepEqual(fa, fb) {
			continue
		}
		// nil and empty carveout lists mean the same thing.
		if sa, ok := fa.([]int); ok && len(sa) == 0 && len(fb.([]int)) == 0 {
			continue
		}
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, FieldDiff{Field: name, A: fmt.Sprint(fa), B: fmt.Sprint(fb)})
	}
	return out
}

// Closest returns the built-in profile nearest to d: the same compute
// capability first (then the same major version, then the nearest
// capability), then the nearest SM count, then the nearest total memory;
// remaining ties go to the earlier profile in Profiles order. vyre's
// synthetic RTX 5090 profile is never chosen (it is not a real part's
// limits; the rtx5090-sm120 profile is).
func Closest(d Device) Profile {
	abs := func(v int64) int64 {
		if v < 0 {
			return -v
		}
		return v
	}
	type key struct{ cc, sms, mem int64 }
	less := func(x, y key) bool {
		if x.cc != y.cc {
			return x.cc < y.cc
		}
		if x.sms != y.sms {
			return x.sms < y.sms
		}
		return x.mem < y.mem
	}
	var best Profile
	var bestKey key
	found := false
	for _, p := range Profiles() {
		if p.Synthetic {
			continue
		}
		pd := p.Device
		k := key{
			cc:  abs(int64(pd.Major)*10 + int64(pd.Minor) - (int64(d.Major)*10 + int64(d.Minor))),
			sms: abs(int64(pd.SMCount) - int64(d.SMCount)),
			mem: abs(pd.TotalMemoryBytes/2 - d.TotalMemoryBytes/2),
		}
		if pd.Major != d.Major {
			k.cc += 1000 // a different major version is further than any minor step
		}
		if !found || less(k, bestKey) {
			best, bestKey, found = p, k, true
		}
	}
	return best
}
