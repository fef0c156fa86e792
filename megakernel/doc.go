// Package megakernel provides megakernel planning: barrier placement over a
// wave dependency DAG, frontier memory splitting, execution topology
// selection, memory budgets, device convergence plans and a plan cache.
package megakernel
