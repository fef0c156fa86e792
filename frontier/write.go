package frontier

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
)

// writePieceVertices is the number of vertices one formatting piece covers.
const writePieceVertices = 1 << 16

// WriteMatrixMarket writes g as a Matrix Market "coordinate pattern
// symmetric" file: the header, the size line, then every entry v->w with
// v > w as the 1-based line "v+1 w+1" (the lower triangle, rows in
// ascending order). For an undirected graph (every graph this package
// builds) that is each edge once, and ParseMatrixMarket, like any reader
// that expands symmetric files, gives g back. Lines are formatted in
// pieces on every CPU and written in order.
func (g *CSR) WriteMatrixMarket(w io.Writer) error {
	n := g.NumVertices()
	pieces := (n + writePieceVertices - 1) / writePieceVertices
	counts := make([]int, pieces)
	dynamicRun(pieces, runtime.GOMAXPROCS(0), func(_, p int) {
		for v := int32(p * writePieceVertices); v < int32(min((p+1)*writePieceVertices, n)); v++ {
			for _, u := range g.Neighbors(v) {
				if u < v {
					counts[p]++
				}
			}
		}
	})
	entries := 0
	for _, c := range counts {
		entries += c
	}
	if _, err := fmt.Fprintf(w, "%%%%MatrixMarket matrix coordinate pattern symmetric\n%d %d %d\n", n, n, entries); err != nil {
		return fmt.Errorf("writing graph %q: %w. Fix: check the output file", g.Name, err)
	}
	batch := max(1, runtime.GOMAXPROCS(0))
	bufs := make([][]byte, batch)
	for first := 0; first < pieces; first += batch {
		count := min(batch, pieces-first)
		dynamicRun(count, batch, func(_, k int) {
			bufs[k] = g.appendLowerTriangle(bufs[k][:0], first+k)
		})
		for _, b := range bufs[:count] {
			if _, err := w.Write(b); err != nil {
				return fmt.Errorf("writing graph %q: %w. Fix: check the output file", g.Name, err)
			}
		}
	}
	return nil
}

// appendLowerTriangle appends the lines of piece p's entries v->u, u < v.
func (g *CSR) appendLowerTriangle(b []byte, p int) []byte {
	for v := int32(p * writePieceVertices); v < int32(min((p+1)*writePieceVertices, g.NumVertices())); v++ {
		for _, u := range g.Neighbors(v) {
			if u >= v {
				break // rows are sorted
			}
			b = strconv.AppendInt(b, int64(v)+1, 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(u)+1, 10)
			b = append(b, '\n')
		}
	}
	return b
}
