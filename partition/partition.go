package partition

import (
	"fmt"
	"sort"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// AlignVertices is the alignment of every partition boundary: each
// device owns whole 64-bit words of any vertex bitmap, so a device's slice
// of a bitmap is a run of words that can be sent as it is.
const AlignVertices = 64

// MaxDevices is the most devices a partition plan spreads a graph
// over: the kernels pass the set of peers that exchange queues as one
// 64-bit mask.
const MaxDevices = 64

// Strategy is how a graph's vertices are cut into ranges.
type Strategy uint8

const (
	// Blocked gives every device the same number of vertices
	// (the last ones may hold fewer).
	Blocked Strategy = iota + 1
	// EdgeBalanced gives every device about the same number of
	// adjacency entries (degree-balanced): the work of a top-down level
	// and the bytes of the resident CSR follow the edges.
	EdgeBalanced
)

var partitionStrategyNames = [...]string{Blocked: "blocked", EdgeBalanced: "edges"}

// String returns "blocked" or "edges".
func (s Strategy) String() string {
	if int(s) < len(partitionStrategyNames) && partitionStrategyNames[s] != "" {
		return partitionStrategyNames[s]
	}
	return fmt.Sprintf("Strategy(%d)", uint8(s))
}

// MarshalText writes the strategy's name, so JSON shows "edges".
func (s Strategy) MarshalText() ([]byte, error) {
	if s != Blocked && s != EdgeBalanced {
		return nil, fmt.Errorf("partition strategy %d is not blocked (1) or edges (2). Fix: use Blocked or EdgeBalanced", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads "blocked" or "edges".
func (s *Strategy) UnmarshalText(b []byte) error {
	v, err := ParseStrategy(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseStrategy reads "blocked" or "edges".
func ParseStrategy(s string) (Strategy, error) {
	switch s {
	case "blocked":
		return Blocked, nil
	case "edges":
		return EdgeBalanced, nil
	}
	return 0, fmt.Errorf("partition strategy %q is unknown. Fix: use blocked (equal vertex counts) or edges (equal edge counts)", s)
}

// Device is one device a graph is spread over.
type Device struct {
	// Name labels the device in plans and errors (a profile name).
	Name string `json:"name"`
	// BudgetBytes is the device memory its part may keep resident.
	BudgetBytes uint64 `json:"budget_bytes"`
}

// Request asks for a 1D vertex partition of a CSR graph over
// devices for a level-synchronous BFS: device d owns vertices
// [First, End) with their adjacency lists and levels.
type Request struct {
	// Offsets are the graph's CSR row offsets (frontier.CSR's): one more
	// entry than there are vertices, starting at 0, never decreasing; the
	// last is the number of adjacency entries.
	Offsets []uint64 `json:"-"`
	// Devices are the devices, in rank order.
	Devices []Device `json:"devices"`
	// Strategy is the cut.
	Strategy Strategy `json:"strategy"`
	// ScratchBytes is each device's fixed control memory.
	ScratchBytes uint64 `json:"scratch_bytes"`
}

// Memory is the resident memory of one device's part, in bytes,
// as the partitioned BFS lays it out (S is the plan's SliceWords, P the
// device count).
type Memory struct {
	// Offsets: 4 x (vertices + 1), the part's row offsets rebased to 0,
	// as the kernels' 32-bit offsets.
	Offsets uint64 `json:"offsets"`
	// Targets: 4 x edge entries (at least 4), global vertex ids.
	Targets uint64 `json:"targets"`
	// Levels: 4 x vertices (at least 4), the output.
	Levels uint64 `json:"levels"`
	// Frontier: two bitmaps of the part's vertices, 2 x 8S.
	Frontier uint64 `json:"frontier"`
	// Next: the top-down discoveries over every part, 8PS.
	Next uint64 `json:"next"`
	// Exchange: what the device receives (slices, queues or the gathered
	// frontier), 8PS.
	Exchange uint64 `json:"exchange"`
	// Outbox: the queues it sends, 8PS.
	Outbox uint64 `json:"outbox"`
	// Counts: its row of discovery counts and the gathered P x P matrix,
	// 8P(P+1).
	Counts uint64 `json:"counts"`
	// Bounds: the P+1 partition boundaries, 4(P+1).
	Bounds uint64 `json:"bounds"`
	// Scratch: the request's ScratchBytes.
	Scratch uint64 `json:"scratch"`
}

// Part is one device's share.
type Part struct {
	// Device is the rank; Name the device's label.
	Device int    `json:"device"`
	Name   string `json:"name"`
	// First and End bound the vertices the device owns, [First, End).
	First uint64 `json:"first"`
	End   uint64 `json:"end"`
	// Vertices = End - First; EdgeEntries are their adjacency entries.
	Vertices    uint64 `json:"vertices"`
	EdgeEntries uint64 `json:"edge_entries"`
	// Words is ceil(Vertices / 64): the part's slice of a vertex bitmap.
	Words uint64 `json:"words"`
	// Memory is the resident layout; ResidentBytes its sum, at most
	// BudgetBytes.
	Memory        Memory `json:"memory"`
	ResidentBytes uint64 `json:"resident_bytes"`
	BudgetBytes   uint64 `json:"budget_bytes"`
}

// ExchangeCosts are the fixed exchange volumes of one level, in
// bytes moved between distinct devices.
type ExchangeCosts struct {
	// AllGatherBytes: a bottom-up level gathers every device's frontier
	// slice (SliceWords words) on every other device, P(P-1) x 8S.
	AllGatherBytes uint64 `json:"all_gather_bytes"`
	// CountBytes: a top-down level first gathers every device's row of
	// discovery counts, P(P-1) x 8P.
	CountBytes uint64 `json:"count_bytes"`
	// BitmapBytes: the most a top-down level's all-to-all moves, every
	// pair sending the receiver's bitmap slice, (P-1) x 8 x the sum of the
	// parts' words.
	BitmapBytes uint64 `json:"bitmap_bytes"`
}

// Plan is a 1D vertex partition with each device's resident
// memory and the fixed per-level exchange volumes.
type Plan struct {
	Strategy    Strategy `json:"strategy"`
	Vertices    uint64   `json:"vertices"`
	EdgeEntries uint64   `json:"edge_entries"`
	// SliceWords (S) is the largest part's Words, at least 1: every
	// device's slot in an exchanged buffer.
	SliceWords uint64 `json:"slice_words"`
	Parts      []Part `json:"parts"`
	// VertexImbalanceBPS and EdgeImbalanceBPS are the largest part's share
	// over the mean share, in basis points (10000: perfectly balanced).
	VertexImbalanceBPS uint64        `json:"vertex_imbalance_bps"`
	EdgeImbalanceBPS   uint64        `json:"edge_imbalance_bps"`
	Exchange           ExchangeCosts `json:"exchange"`
}

// Bounds returns the P+1 boundaries: part d owns [Bounds[d], Bounds[d+1]).
func (p Plan) Bounds() []uint64 {
	out := make([]uint64, 0, len(p.Parts)+1)
	for _, part := range p.Parts {
		out = append(out, part.First)
	}
	return append(out, p.Vertices)
}

// Owner returns the part owning vertex v (v < Vertices).
func (p Plan) Owner(v uint64) int {
	return sort.Search(len(p.Parts), func(i int) bool { return p.Parts[i].End > v })
}

// New cuts the graph into one vertex range per device, aligned
// to AlignVertices, blocked or edge-balanced; sizes every
// device's resident memory and checks it against the device's budget; and
// computes the fixed exchange volumes. A part that does not fit is refused
// with its device, its range and every number of its layout.
func New(req Request) (Plan, error) {
	if err := checkPartitionRequest(req); err != nil {
		return Plan{}, err
	}
	n := uint64(len(req.Offsets) - 1)
	p := Plan{Strategy: req.Strategy, Vertices: n, EdgeEntries: req.Offsets[n]}
	bounds := blockedBounds(n, len(req.Devices))
	if req.Strategy == EdgeBalanced {
		bounds = edgeBounds(req.Offsets, len(req.Devices))
	}
	p.SliceWords = 1
	for d, dev := range req.Devices {
		part := Part{Device: d, Name: dev.Name, First: bounds[d], End: bounds[d+1], BudgetBytes: dev.BudgetBytes}
		part.Vertices = part.End - part.First
		part.EdgeEntries = req.Offsets[part.End] - req.Offsets[part.First]
		part.Words = (part.Vertices + AlignVertices - 1) / AlignVertices
		p.SliceWords = max(p.SliceWords, part.Words)
		p.Parts = append(p.Parts, part)
	}
	if err := p.sizeParts(req.ScratchBytes); err != nil {
		return Plan{}, err
	}
	p.balance()
	return p, p.exchangeCosts()
}

// blockedBounds cuts n vertices into parts of ceil(n/parts) vertices
// rounded up to the alignment; the last parts may be short or empty.
func blockedBounds(n uint64, parts int) []uint64 {
	share := (n + uint64(parts) - 1) / uint64(parts)
	share = (share + AlignVertices - 1) / AlignVertices * AlignVertices
	out := make([]uint64, parts+1)
	for d := range out {
		out[d] = min(n, uint64(d)*share)
	}
	out[parts] = n
	return out
}

// edgeBounds puts boundary d at the first aligned vertex whose offset
// reaches d/parts of the edge entries.
func edgeBounds(offsets []uint64, parts int) []uint64 {
	n := uint64(len(offsets) - 1)
	m := offsets[n]
	words := int((n + AlignVertices - 1) / AlignVertices)
	out := make([]uint64, parts+1)
	for d := 1; d < parts; d++ {
		target, _ := checked.MulDiv(uint64(d), m, uint64(parts))
		k := sort.Search(words+1, func(k int) bool {
			return offsets[min(n, uint64(k)*AlignVertices)] >= target
		})
		out[d] = max(out[d-1], min(n, uint64(k)*AlignVertices))
	}
	out[parts] = n
	return out
}

// sizeParts fills every part's memory layout and checks it against the
// device's budget.
func (p *Plan) sizeParts(scratch uint64) error {
	for i := range p.Parts {
		part := &p.Parts[i]
		mem, total, err := partMemory(*part, uint64(len(p.Parts)), p.SliceWords, scratch)
		if err != nil {
			return &Error{Kind: Overflow, Device: part.Device, Name: part.Name, Part: *part, Cause: err}
		}
		part.Memory, part.ResidentBytes = mem, total
		if total > part.BudgetBytes {
			return &Error{Kind: OverBudget, Device: part.Device, Name: part.Name, Part: *part}
		}
	}
	return nil
}

// partMemory sizes one part's resident layout for P parts and slices of s
// words.
func partMemory(part Part, parts, s, scratch uint64) (Memory, uint64, error) {
	m := Memory{Bounds: 4 * (parts + 1), Scratch: scratch}
	var err error
	if m.Offsets, err = checked.Mul(4, part.Vertices+1, "offset bytes (4 x (vertices + 1))"); err != nil {
		return m, 0, err
	}
	if m.Targets, err = checked.Mul(4, max(1, part.EdgeEntries), "target bytes (4 x edge entries)"); err != nil {
		return m, 0, err
	}
	if m.Levels, err = checked.Mul(4, max(1, part.Vertices), "level bytes (4 x vertices)"); err != nil {
		return m, 0, err
	}
	if m.Frontier, err = checked.Mul(16, s, "frontier bitmap bytes (2 x 8 x slice words)"); err != nil {
		return m, 0, err
	}
	if m.Next, err = checked.Mul(8*parts, s, "next bitmap bytes (8 x devices x slice words)"); err != nil {
		return m, 0, err
	}
	m.Exchange, m.Outbox = m.Next, m.Next
	m.Counts = 8 * parts * (parts + 1)
	total, err := checked.Sum("resident bytes of a part", m.Offsets, m.Targets, m.Levels, m.Frontier, m.Next,
		m.Exchange, m.Outbox, m.Counts, m.Bounds, m.Scratch)
	return m, total, err
}

// balance computes the imbalance ratios.
func (p *Plan) balance() {
	var maxV, maxE uint64
	for _, part := range p.Parts {
		maxV, maxE = max(maxV, part.Vertices), max(maxE, part.EdgeEntries)
	}
	parts := uint64(len(p.Parts))
	ratio := func(largest, total uint64) uint64 {
		if total == 0 {
			return checked.BasisPoints
		}
		q, _ := checked.MulDiv(largest*parts, checked.BasisPoints, total)
		return q
	}
	p.VertexImbalanceBPS, p.EdgeImbalanceBPS = ratio(maxV, p.Vertices), ratio(maxE, p.EdgeEntries)
}

// exchangeCosts computes the fixed per-level exchange volumes.
func (p *Plan) exchangeCosts() error {
	parts := uint64(len(p.Parts))
	pairs := parts * (parts - 1)
	var err error
	slice, err := checked.Mul(8, p.SliceWords, "slice bytes")
	if err != nil {
		return err
	}
	if p.Exchange.AllGatherBytes, err = checked.Mul(pairs, slice, "all-gather bytes per level (devices x (devices-1) x slice bytes)"); err != nil {
		return err
	}
	p.Exchange.CountBytes = pairs * 8 * parts
	var words uint64
	for _, part := range p.Parts {
		words += part.Words
	}
	p.Exchange.BitmapBytes, err = checked.Mul((parts-1)*8, words, "bitmap all-to-all bytes per level")
	return err
}
