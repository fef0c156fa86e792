package executor

// TotalResidentBudget is vyre's total resident budget: floor(total × 9/10)
// bytes. It is computed without overflow for every uint64 input.
func TotalResidentBudget(totalMemory uint64) uint64 {
	// floor(t*9/10) = (t/10)*9 + floor((t%10)*9/10), exact without 128-bit math.
	return (totalMemory/10)*9 + (totalMemory%10)*9/10
}

// LiveResidentBudget is vyre's live-device resident budget: the bytes
// resident allocations may occupy in total, given the device's total memory,
// the live free memory reported by the driver, and the bytes already
// resident. It is
//
//	resident + min(total_budget − resident, floor(live_free × 9/10))
//
// or resident itself when resident is already at or over the total budget.
// An allocation of n bytes is admitted when resident + n ≤ the result.
func LiveResidentBudget(totalMemory, liveFree, resident uint64) uint64 {
	total := TotalResidentBudget(totalMemory)
	if resident >= total {
		return resident
	}
	return resident + min(total-resident, TotalResidentBudget(liveFree))
}
