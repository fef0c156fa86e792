package partition

import (
	"fmt"
	"github.com/gpuplan/gpuplan/planners"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// ExchangeForm is how one device sends another the vertices it discovered
// for it in a top-down level.
type ExchangeForm uint8

const (
	// ExchangeQueue sends the discovered vertices' local indices, 4 bytes
	// each.
	ExchangeQueue ExchangeForm = iota + 1
	// ExchangeBitmap sends the receiver's whole bitmap slice, 8 bytes per
	// word.
	ExchangeBitmap
)

// String returns "queue" or "bitmap".
func (f ExchangeForm) String() string {
	switch f {
	case ExchangeQueue:
		return "queue"
	case ExchangeBitmap:
		return "bitmap"
	}
	return fmt.Sprintf("ExchangeForm(%d)", uint8(f))
}

// PairExchange picks the form of one pair's transfer by size: the queue of
// count vertices when it is no larger than the receiver's bitmap slice of
// ownerWords words (4 x count <= 8 x ownerWords), the slice otherwise. It
// returns the form and the bytes sent. A queue so chosen always fits the
// receiver's slot of ownerWords 8-byte words.
func PairExchange(count, ownerWords uint64) (ExchangeForm, uint64) {
	if count <= 2*ownerWords {
		return ExchangeQueue, 4 * count
	}
	return ExchangeBitmap, 8 * ownerWords
}

// Collective is the collective that exchanges one level.
type Collective uint8

const (
	// CollectiveAllToAll: a top-down level; every pair of devices sends
	// the vertices discovered for the receiver, as a queue or a bitmap
	// slice (grouped send/receive), after an all-gather of the counts.
	CollectiveAllToAll Collective = iota + 1
	// CollectiveAllGather: a bottom-up level; every device gathers every
	// other device's frontier bitmap slice.
	CollectiveAllGather
)

// String returns "all-to-all" or "all-gather".
func (c Collective) String() string {
	switch c {
	case CollectiveAllToAll:
		return "all-to-all"
	case CollectiveAllGather:
		return "all-gather"
	}
	return fmt.Sprintf("Collective(%d)", uint8(c))
}

// MarshalText writes the collective's name.
func (c Collective) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// MarshalText writes the form's name.
func (f ExchangeForm) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// LevelExchange is the exchange of one level step: the direction
// decision it follows and the bytes moved between distinct devices.
type LevelExchange struct {
	// Decision is the direction planner's decision for the step.
	Decision   planners.BFSDirectionDecision `json:"decision"`
	Collective Collective                    `json:"collective"`
	// QueuePairs and BitmapPairs count the ordered pairs of a top-down
	// level by the form they send in.
	QueuePairs  uint64 `json:"queue_pairs"`
	BitmapPairs uint64 `json:"bitmap_pairs"`
	// CountBytes, QueueBytes and BitmapBytes make up a top-down level;
	// GatherBytes a bottom-up one. Bytes is their sum.
	CountBytes  uint64 `json:"count_bytes"`
	QueueBytes  uint64 `json:"queue_bytes"`
	BitmapBytes uint64 `json:"bitmap_bytes"`
	GatherBytes uint64 `json:"gather_bytes"`
	Bytes       uint64 `json:"bytes"`
}

// Forms returns how every ordered pair sends in a top-down level from the
// count matrix: counts[d][e] is the distinct vertices of device e that
// device d discovered. The diagonal is 0 (a device keeps its own).
func (p Plan) Forms(counts [][]uint64) ([][]ExchangeForm, error) {
	parts := len(p.Parts)
	if len(counts) != parts {
		return nil, fmt.Errorf("exchange counts have %d rows for %d devices. Fix: pass one row per device", len(counts), parts)
	}
	forms := make([][]ExchangeForm, parts)
	for d, row := range counts {
		if len(row) != parts {
			return nil, fmt.Errorf("exchange counts row %d has %d entries for %d devices. Fix: pass one count per device", d, len(row), parts)
		}
		forms[d] = make([]ExchangeForm, parts)
		for e, c := range row {
			if e == d {
				continue
			}
			if c > p.Parts[e].Vertices {
				return nil, fmt.Errorf("exchange counts[%d][%d] is %d, above the %d vertices of device %d. Fix: count each discovered vertex once", d, e, c, p.Parts[e].Vertices, e)
			}
			forms[d][e], _ = PairExchange(c, p.Parts[e].Words)
		}
	}
	return forms, nil
}

// LevelExchange returns the exchange of one level step that runs in the
// decision's direction: a bottom-up step gathers the frontier slices; a
// top-down step gathers the counts, then sends every pair's discoveries in
// the form PairExchange picks from counts (ignored for bottom-up).
func (p Plan) LevelExchange(d planners.BFSDirectionDecision, counts [][]uint64) (LevelExchange, error) {
	x := LevelExchange{Decision: d, Collective: CollectiveAllGather}
	if d.Direction == planners.DirectionBottomUp {
		x.GatherBytes, x.Bytes = p.Exchange.AllGatherBytes, p.Exchange.AllGatherBytes
		return x, nil
	}
	x.Collective, x.CountBytes = CollectiveAllToAll, p.Exchange.CountBytes
	forms, err := p.Forms(counts)
	if err != nil {
		return x, err
	}
	for dev, row := range forms {
		for e, f := range row {
			switch f {
			case ExchangeQueue:
				x.QueuePairs++
				x.QueueBytes += 4 * counts[dev][e]
			case ExchangeBitmap:
				x.BitmapPairs++
				x.BitmapBytes += 8 * p.Parts[e].Words
			}
		}
	}
	x.Bytes, err = checked.Sum("exchange bytes of a level", x.CountBytes, x.QueueBytes, x.BitmapBytes)
	return x, err
}
