package executor

import "reflect"

// Sub returns the counters accumulated between an earlier snapshot and s:
// every counter is s's minus before's (0 if it went down, as after a
// Reset), TimedDeviceNsMax is s's, and the ratios are derived from the
// differences. It is how a caller measures what one piece of work cost.
func (s TelemetrySnapshot) Sub(before TelemetrySnapshot) TelemetrySnapshot {
	out := s
	a, b, o := reflect.ValueOf(s), reflect.ValueOf(before), reflect.ValueOf(&out).Elem()
	for _, c := range snapshotCounters {
		x, y := a.FieldByIndex(c).Uint(), b.FieldByIndex(c).Uint()
		o.FieldByIndex(c).SetUint(x - min(x, y))
	}
	out.deriveRatios()
	return out
}

// snapshotCounters are the indices of the counter fields of
// TelemetrySnapshot: every uint64 but the derived ratios and the maximum.
var snapshotCounters = func() [][]int {
	skip := map[string]bool{"TimedDeviceNsMax": true, "WastedThreadSlots": true, "LogicalThreadUtilizationBPS": true,
		"LogicalThreadWasteBPS": true, "LogicalElementsPerThreadSlotBPS": true}
	t := reflect.TypeFor[TelemetrySnapshot]()
	var idx [][]int
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type.Kind() == reflect.Uint64 && !skip[f.Name] {
			idx = append(idx, f.Index)
		}
	}
	return idx
}()
